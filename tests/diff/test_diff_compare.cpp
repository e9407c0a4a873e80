// compare() (analysis/'s mpe/diff.h) on two runs built in memory: a call-site row says where its
// site is in A and in B (site_a, site_b), so that a front end finds each run's instances without
// reading the row's name or note: a site matched at the same line, one whose line moved, one only
// in A, one only in B, and the wait rows of a moved site.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpe/diff.h"

namespace {

using mpe::analysis::diff::Row;
using DiffRun = mpe::analysis::diff::Run;
using mpe::analysis::diff::Where;

mpe::Frame frame(const std::string& function, int line) {
  return {function, "/src/app.c", line, "/bin/app", 0x40};
}

// A run of 2 ranks with 1 ms of `routine` per rank at each (function, line).
DiffRun run_with(const std::vector<std::pair<std::string, int>>& sites) {
  DiffRun r;
  r.kind = mpe::analysis::diff::Kind::kLog;
  r.ranks = 2;
  r.wall_per_rank = r.mpi_per_rank = {0.0, 0.0};
  for (const auto& [function, line] : sites)
    for (uint32_t rank = 0; rank < 2; ++rank) {
      mpe::analysis::diff::site_of(&r, "MPI_Send", {frame(function, line)}).m.add(rank, 2, 1, 1e6, 8);
      r.routines["MPI_Send"].add(rank, 2, 1, 1e6, 8);
    }
  return r;
}

const Row& row_named(const std::vector<Row>& rows, const std::string& name) {
  for (const Row& r : rows)
    if (r.name == name) return r;
  ADD_FAILURE() << "no row " << name;
  return rows.front();
}

TEST(DiffCompare, SiteRowsSayWhereTheSiteIsInEachRun) {
  // main: 10 stays; 20 moves to 23 (code added above it); solve: 30 only in A; init: 40 only in B.
  DiffRun a = run_with({{"main", 10}, {"main", 20}, {"solve", 30}});
  DiffRun b = run_with({{"main", 10}, {"main", 23}, {"init", 40}});
  a.site_waits.push_back({"late_sender", mpe::analysis::diff::site_key(a.sites.begin()->second), 5e5, 1});
  const auto c = mpe::analysis::diff::compare(std::move(a), std::move(b));
  ASSERT_EQ(c.sites.size(), 4u);
  const Where at10{"app.c", 10, "main", "app.c:10 (main)"};
  const Row& same = row_named(c.sites, "app.c:10 (main)");
  EXPECT_EQ(same.site_a, at10);
  EXPECT_EQ(same.site_b, at10);
  const Row& moved = row_named(c.sites, "app.c:23 (main)");
  EXPECT_EQ(moved.note, "moved from L20 to L23");
  EXPECT_EQ(moved.site_a, (Where{"app.c", 20, "main", "app.c:20 (main)"}));
  EXPECT_EQ(moved.site_b, (Where{"app.c", 23, "main", "app.c:23 (main)"}));
  const Row& only_a = row_named(c.sites, "app.c:30 (solve)");
  EXPECT_EQ(only_a.note, "only in A");
  EXPECT_EQ(only_a.site_a.line, 30);
  EXPECT_TRUE(only_a.site_b.location.empty());
  const Row& only_b = row_named(c.sites, "app.c:40 (init)");
  EXPECT_EQ(only_b.note, "only in B");
  EXPECT_TRUE(only_b.site_a.location.empty());
  EXPECT_EQ(only_b.site_b.line, 40);
  // A wait row carries its site's places too (the waits of A's first site: app.c:10).
  ASSERT_EQ(c.site_waits.size(), 1u);
  EXPECT_EQ(c.site_waits[0].site_a, at10);
  EXPECT_EQ(c.site_waits[0].site_b, at10);
  // Routine rows have no site.
  ASSERT_EQ(c.routines.size(), 1u);
  EXPECT_TRUE(c.routines[0].site_a.location.empty() && c.routines[0].site_b.location.empty());
}

TEST(DiffCompare, WhereOfFrames) {
  EXPECT_EQ(mpe::analysis::diff::where_of({}), (Where{"", 0, "", "?"}));
  // Without a source line: matched by the module and offset text, not by a line.
  const Where w = mpe::analysis::diff::where_of({mpe::Frame{"f", "", 0, "/lib/libx.so", 0x1a2b}});
  EXPECT_EQ(w.line, 0);
  EXPECT_EQ(w.file, "");
  EXPECT_EQ(w.location, "libx.so+0x1a2b (f)");
}

}  // namespace
