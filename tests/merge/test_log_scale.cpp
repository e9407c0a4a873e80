// The format at many ranks (issue 25, v5): definitions grow linearly with the ranks (each group
// stored once, MPI_COMM_WORLD's and MPI_COMM_SELF's implied), member lists survive the run
// encoding exactly, definitions split over several chunks read back whole, damaged group tables
// are named, and a writer that fails leaves no file behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "mpe/file_io.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"

using namespace mpe::format;

namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "mpelog_scale_" + std::to_string(getpid()) + "_" + name;
}

// R ranks, `per_node` per node: world, self, the node's ranks and a strided "column" group per
// rank, each group one shared copy as liblog's merge and `mpe synth` make them.
Definitions many_rank_defs(uint32_t R, uint32_t per_node) {
  Definitions d;
  d.world_size = R;
  d.program = "scale";
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = mpi_categories({"MPI_Send", "MPI_Recv"});
  MemberInterner interner;
  const MemberList world = interner.world(R);
  d.ranks.resize(R);
  for (uint32_t r = 0; r < R; ++r) {
    std::vector<int32_t> node, column;
    for (uint32_t k = r / per_node * per_node; k < std::min(R, (r / per_node + 1) * per_node); ++k)
      node.push_back(static_cast<int32_t>(k));
    for (uint32_t k = r % per_node; k < R; k += per_node) column.push_back(static_cast<int32_t>(k));
    RankMeta& m = d.ranks[r];
    m.rank = r;
    m.world_size = R;
    m.host = "node" + std::to_string(r / per_node);
    m.threads = {ThreadDef{0, 100 + r}};
    m.comms = {CommDef{0, 0, false, world}, CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}},
               CommDef{2, uint64_t{r / per_node * per_node} << 32 | 1, false, interner.intern(node)},
               CommDef{3, uint64_t{r % per_node} << 32 | 2, false, interner.intern(column)}};
  }
  return d;
}

TEST(LogScale, DefinitionsGrowLinearlyWithTheRanks) {
  // Bytes per rank before compression stay the same from 1,024 to 16,384 ranks: a per-rank copy
  // of MPI_COMM_WORLD alone would be 4 KiB per rank at 1,024 and 64 KiB at 16,384.
  const size_t small = serialize_definitions(many_rank_defs(1024, 64)).size();
  const size_t large = serialize_definitions(many_rank_defs(16384, 64)).size();
  const double per_rank_small = static_cast<double>(small) / 1024,
               per_rank_large = static_cast<double>(large) / 16384;
  EXPECT_LT(per_rank_small, 200);
  EXPECT_NEAR(per_rank_large, per_rank_small, 0.1 * per_rank_small) << small << " and " << large << " bytes";
}

TEST(LogScale, GroupsReadBackSharedAndExact) {
  const Definitions d = many_rank_defs(300, 16);  // the last node is partial: 300 = 18 * 16 + 12
  const std::string blob = serialize_definitions(d);
  Definitions back;
  ASSERT_TRUE(parse_definitions(blob.data(), blob.size(), &back).ok());
  ASSERT_EQ(back.ranks.size(), 300u);
  for (uint32_t r = 0; r < 300; ++r) {
    ASSERT_EQ(back.ranks[r].comms.size(), 4u);
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(back.ranks[r].comms[c].members, d.ranks[r].comms[c].members) << "rank " << r << " comm " << c;
      EXPECT_EQ(back.ranks[r].comms[c].global_id, d.ranks[r].comms[c].global_id);
    }
    // One copy per group in the reader's memory too.
    EXPECT_TRUE(back.ranks[r].comms[0].members.same_copy(back.ranks[0].comms[0].members));
    EXPECT_TRUE(back.ranks[r].comms[2].members.same_copy(back.ranks[r / 16 * 16].comms[2].members));
  }
}

TEST(LogScale, MemberListsOfEveryShapeRoundTrip) {
  std::mt19937 rng(7);
  std::vector<std::vector<int32_t>> shapes = {
      {},
      {5},
      {0, 1, 2, 3, 4, 5, 6, 7},             // one run
      {3, 7, 11, 15, 19, 0, 1, 2},          // two runs
      {9, 8, 7, 6, 5, 4},                   // negative stride
      {0, -1, 2, -1},                       // ranks outside the world
      {2147483647, 0, 2147483647 - 5, 12},  // large ranks, large strides
  };
  std::vector<int32_t> shuffled(500);
  for (int i = 0; i < 500; ++i) shuffled[static_cast<size_t>(i)] = i;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  shapes.push_back(shuffled);  // no runs: stored as a plain list
  for (const auto& members : shapes) {
    RankMeta m;
    m.rank = 0;
    m.world_size = 1;
    m.comms = {CommDef{0, 0, false, members}};
    const std::string blob = serialize_rank_meta(m);
    RankMeta back;
    ASSERT_TRUE(parse_rank_meta(blob.data(), blob.size(), &back).ok());
    EXPECT_EQ(back.comms[0].members, members);
  }
  // A duplicate of a 1,000,000-rank world is one run in a rank's own meta.
  RankMeta big;
  big.world_size = 1000000;
  std::vector<int32_t> dup(1000000);
  for (int32_t i = 0; i < 1000000; ++i) dup[static_cast<size_t>(i)] = i;
  big.comms = {CommDef{4, 77, false, dup}};
  EXPECT_LT(serialize_rank_meta(big).size(), 200u);
}

TEST(LogScale, DamagedGroupsAreNamed) {
  const Definitions d = many_rank_defs(64, 8);
  const std::string blob = serialize_definitions(d);
  // A member count far beyond the world (runs hold any count in 12 bytes): corrupt, not a
  // multi-GiB allocation. The group table starts after the header and the categories.
  RankMeta m;
  m.rank = 0;
  m.world_size = 4;
  m.comms = {CommDef{0, 0, false, {0, 1, 2, 3}}};
  std::string meta = serialize_rank_meta(m);
  // The comm's members are the last bytes before the user categories, call sites and counters
  // counts (3 x u32) and the filter (v7: an empty string's u32 length, u32 nleft_out): form 1 (a
  // run), n, nruns, first, count, stride.
  const size_t runs_at = meta.size() - 12 - 8 - (1 + 4 + 4 + 12);
  ASSERT_EQ(meta[runs_at], 1);
  const uint32_t huge = 1u << 30;
  std::memcpy(&meta[runs_at + 1], &huge, 4);
  std::memcpy(&meta[runs_at + 1 + 8 + 4], &huge, 4);
  RankMeta bad;
  const mpe::Status s = parse_rank_meta(meta.data(), meta.size(), &bad);
  EXPECT_EQ(s.code(), mpe::StatusCode::kCorrupt);
  // Cut anywhere, the definitions are corrupt, never a crash.
  for (size_t cut = 0; cut < blob.size(); cut += 97) {
    Definitions part;
    EXPECT_FALSE(parse_definitions(blob.data(), cut, &part).ok()) << "cut at " << cut;
  }
}

TEST(LogScale, DefinitionsSplitOverChunksReadBack) {
  const Definitions d = many_rank_defs(2000, 50);
  const std::string path = temp_path("split.mpelog");
  {
    // A file of definitions alone, written with 64 KiB pieces: dozens of definitions chunks.
    const std::string head = build_file_header();
    const std::string tail = build_tail(d, {}, kEventsStart, 64 << 10);
    std::ofstream out(path, std::ios::binary);
    out << head << tail;
  }
  auto f = LogFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_EQ(f->definitions().ranks.size(), 2000u);
  EXPECT_EQ(f->definitions().ranks[1999].host, "node39");
  EXPECT_EQ(f->definitions().ranks[1999].comms[3].members, d.ranks[1999].comms[3].members);
  std::filesystem::remove(path);
}

TEST(LogScale, AFailedWriterLeavesNoFile) {
  const std::string path = temp_path("failed.mpelog");
  {
    LogWriter w;
    ASSERT_TRUE(w.open(path).ok());
    ASSERT_TRUE(std::filesystem::exists(path));
    // Destroyed without finish(): as when a write failed midway.
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
