// Writes the small logs the analysis tests know every figure of: one timeline per rank, 1 tick =
// 1 ns, no clock correction, the given MPI categories (id = position), and MPI_COMM_WORLD.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpe/log_reader.h"
#include "mpe/log_writer.h"

namespace mpe::testing {

// Writes ranks[r]'s records as rank r's one chunk, with the given categories; `customize` may add
// to each rank's definitions (communicators, call sites). Returns the path, in the test's
// temporary directory.
inline std::string write_synthetic_log_with_categories(
    const std::string& name, const std::vector<std::vector<format::Record>>& ranks,
    std::vector<format::Category> categories, const std::function<void(format::RankMeta*)>& customize = {}) {
  const std::string path = ::testing::TempDir() + name + "_" + std::to_string(getpid()) + ".mpelog";
  format::LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  const auto n = static_cast<uint32_t>(ranks.size());
  for (uint32_t r = 0; r < n; ++r) {
    std::string chunk;
    format::encode_events(ranks[r].data(), static_cast<uint32_t>(ranks[r].size()), r, 0, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
  }
  format::Definitions d;
  d.world_size = n;
  d.program = name;
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = std::move(categories);
  // One shared member list for every rank's MPI_COMM_WORLD, as the reader keeps it: a copy per
  // rank would be ranks² (the many-ranks tests write 100,000).
  std::vector<int32_t> members(n);
  for (uint32_t r = 0; r < n; ++r) members[r] = static_cast<int32_t>(r);
  const format::MemberList world(std::move(members));
  for (uint32_t r = 0; r < n; ++r) {
    format::RankMeta m;
    m.rank = r;
    m.world_size = n;
    m.ticks_per_second = 1e9;
    m.threads = {format::ThreadDef{0, 100 + r}};
    m.comms = {format::CommDef{0, 0, false, world}};
    if (customize) customize(&m);
    d.ranks.push_back(std::move(m));
  }
  EXPECT_TRUE(w.finish(d).ok());
  return path;
}

// The same with MPI routines named by `categories` (id = position), each with its class from
// the routine table, as liblog writes them.
inline std::string write_synthetic_log(const std::string& name,
                                       const std::vector<std::vector<format::Record>>& ranks,
                                       const std::vector<const char*>& categories,
                                       const std::function<void(format::RankMeta*)>& customize = {}) {
  std::vector<format::Category> defs;
  for (uint32_t id = 0; id < categories.size(); ++id)
    defs.push_back(format::Category{id, format::CategoryKind::kState, 0, 0, categories[id],
                                    format::routine_by_name(categories[id])});
  return write_synthetic_log_with_categories(name, ranks, std::move(defs), customize);
}

// A written log, opened; deleted when the test ends. file is null when it did not open (the
// test has failed then).
struct OpenedTestLog {
  explicit OpenedTestLog(std::string written) : path(std::move(written)) {
    auto opened = format::LogFile::open(path);
    EXPECT_TRUE(opened.ok()) << opened.status().to_string();
    if (opened.ok()) file = std::make_unique<format::LogFile>(std::move(opened.value()));
  }
  ~OpenedTestLog() { ::unlink(path.c_str()); }
  OpenedTestLog(const OpenedTestLog&) = delete;
  OpenedTestLog& operator=(const OpenedTestLog&) = delete;

  std::string path;
  std::unique_ptr<format::LogFile> file;
};

}  // namespace mpe::testing
