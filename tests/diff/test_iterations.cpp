// find_iterations() and compare_iterations() against logs whose iterations are known exactly: three
// ranks, times in nanoseconds (1 tick = 1 ns, no clock correction). Every cut is made twice, by
// find_iterations()'s two passes and by an IterationCollector on one chunk pass, which must agree.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/diff.h"
#include "mpe/iterations.h"
#include "synthetic_log.h"

namespace {

using mpe::format::Record;
using mpe::format::RecordKind;

enum Cat : uint16_t { kInit, kIrecv, kWaitall, kAllreduce, kBarrier, kFinalize, kPcontrol };
const std::vector<const char*> kNames = {"MPI_Init",    "MPI_Irecv",    "MPI_Waitall", "MPI_Allreduce",
                                         "MPI_Barrier", "MPI_Finalize", "MPI_Pcontrol"};
constexpr int kRanks = 3;
constexpr uint64_t kPeriod = 10000;  // ns per iteration

Record state(uint64_t start, uint64_t end, Cat cat) {
  return mpe::format::make_record(RecordKind::kState, start, cat, 0, 0, 0, end - start);
}
void collective(std::vector<Record>* r, uint64_t start, uint64_t end, Cat cat) {
  r->push_back(state(start, end, cat));
  r->push_back(mpe::format::make_record(RecordKind::kCollective, start, cat, -1, 0, 0, 0));
}
void marker(std::vector<Record>* r, uint64_t t, int32_t level) {
  r->push_back(state(t, t + 10, kPcontrol));
  r->push_back(mpe::format::make_record(RecordKind::kMarker, t, kPcontrol, level, level != 0, 0, 0));
}

// The iterations of `file` by find_iterations(), after checking that an IterationCollector fed by a
// chunk pass (with two decoders, so chunks of several ranks are in flight) cuts the same.
mpe::StatusOr<mpe::analysis::Iterations> cut(const mpe::format::LogFile& file) {
  auto two_passes = mpe::analysis::find_iterations(file);
  mpe::analysis::IterationCollector collector(file);
  mpe::format::ChunkPassOptions pass;
  pass.decoders = 2;
  const mpe::Status s = mpe::format::run_chunk_pass(file, {collector.consumer()}, pass);
  EXPECT_TRUE(s.ok()) << s.to_string();
  auto one_pass = collector.finish();
  EXPECT_EQ(two_passes.ok(), one_pass.ok());
  if (two_passes.ok() && one_pass.ok()) {
    EXPECT_EQ(one_pass->basis, two_passes->basis);
    EXPECT_EQ(one_pass->ranks, two_passes->ranks);
    EXPECT_EQ(one_pass->start_ns, two_passes->start_ns);
    EXPECT_EQ(one_pass->end_ns, two_passes->end_ns);
    EXPECT_EQ(one_pass->mpi_ns, two_passes->mpi_ns);
  }
  return two_passes;
}

// Iteration k of rank r starts at its start(k, r): a little later on higher ranks, and on rank 1 a
// longer iteration 2 (extra compute).
uint64_t start_of(int k, int r, uint64_t extra) { return 1000 + k * kPeriod + r * 7 + (k > 2 ? extra : 0); }

// A loop of `iterations`: MPI_Irecv, compute, MPI_Waitall, compute, and (with_allreduce) an
// MPI_Allreduce on MPI_COMM_WORLD; a barrier every second iteration; MPI_Finalize after the loop.
// Rank 1 computes `extra` ns longer in iteration 2, which the others wait for in the Allreduce.
std::vector<std::vector<Record>> loop(int iterations, bool with_allreduce, uint64_t extra = 0) {
  std::vector<std::vector<Record>> ranks(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    auto& v = ranks[static_cast<size_t>(r)];
    v.push_back(state(0, 500, kInit));
    for (int k = 0; k < iterations; ++k) {
      const uint64_t t = start_of(k, r, extra);
      const uint64_t late = r == 1 && k == 2 ? extra : 0;
      const uint64_t waited = r != 1 && k == 2 ? extra : 0;
      v.push_back(state(t, t + 100, kIrecv));
      v.push_back(state(t + 3000 + late, t + 3500 + late, kWaitall));
      if (with_allreduce) collective(&v, t + 8000 + late, t + 8200 + late + waited, kAllreduce);
      if (k % 2 == 1) collective(&v, t + 8500 + late, t + 8600 + late, kBarrier);
    }
    const uint64_t end = start_of(iterations, r, extra);
    v.push_back(state(end, end + 300, kFinalize));
  }
  return ranks;
}

TEST(Iterations, CutByTheRepeatingCollectiveFromTheFirstCallOfTheLoop) {
  mpe::testing::OpenedTestLog log(mpe::testing::write_synthetic_log("iter_coll", loop(6, true), kNames));
  ASSERT_TRUE(log.file);
  auto it = cut(*log.file);
  ASSERT_TRUE(it.ok()) << it.status().to_string();
  EXPECT_EQ(it->basis, "MPI_Allreduce on MPI_COMM_WORLD");
  ASSERT_EQ(it->count(), 6u);
  ASSERT_EQ(it->ranks, 3u);
  for (int k = 0; k < 6; ++k)
    for (int r = 0; r < kRanks; ++r) {
      // From the MPI_Irecv that opens iteration k to the next one's, or to MPI_Finalize (the barrier
      // of the last iteration does not end it).
      EXPECT_EQ(it->start_ns[k][r], static_cast<int64_t>(start_of(k, r, 0))) << k << " " << r;
      EXPECT_EQ(it->end_ns[k][r], static_cast<int64_t>(start_of(k + 1, r, 0))) << k << " " << r;
      EXPECT_EQ(it->mpi_ns[k][r], 100 + 500 + 200 + (k % 2 == 1 ? 100 : 0)) << k << " " << r;
    }
  EXPECT_EQ(it->begin(2), static_cast<int64_t>(start_of(2, 0, 0)));
  EXPECT_EQ(it->end(2), static_cast<int64_t>(start_of(3, 2, 0)));
}

TEST(Iterations, WithoutACollectiveTheRepeatingCallSite) {
  mpe::testing::OpenedTestLog log(mpe::testing::write_synthetic_log("iter_p2p", loop(5, false), kNames));
  ASSERT_TRUE(log.file);
  auto it = cut(*log.file);
  ASSERT_TRUE(it.ok()) << it.status().to_string();
  EXPECT_NE(it->basis.find("once per iteration on every rank"), std::string::npos) << it->basis;
  ASSERT_EQ(it->count(), 5u);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(it->start_ns[k][1], static_cast<int64_t>(start_of(k, 1, 0)));
  EXPECT_EQ(it->end_ns[4][2], static_cast<int64_t>(start_of(5, 2, 0)));
}

TEST(Iterations, PcontrolMarkersComeFirst) {
  auto ranks = loop(4, true);
  // Pcontrol(1) at each iteration's start, Pcontrol(0) 5000 ns later, after the Waitall.
  for (int r = 0; r < kRanks; ++r) {
    std::vector<Record> v;
    for (const Record& rec : ranks[static_cast<size_t>(r)]) {
      if (rec.kind == static_cast<uint8_t>(RecordKind::kState) && rec.cat == kIrecv)
        marker(&v, rec.time - 50, 1);
      v.push_back(rec);
      if (rec.kind == static_cast<uint8_t>(RecordKind::kState) && rec.cat == kWaitall)
        marker(&v, rec.time + 1000, 0);
    }
    ranks[static_cast<size_t>(r)] = v;
  }
  mpe::testing::OpenedTestLog log(mpe::testing::write_synthetic_log("iter_pcontrol", ranks, kNames));
  ASSERT_TRUE(log.file);
  auto it = cut(*log.file);
  ASSERT_TRUE(it.ok()) << it.status().to_string();
  EXPECT_EQ(it->basis, "MPI_Pcontrol markers");
  ASSERT_EQ(it->count(), 4u);
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_EQ(it->start_ns[k][r], static_cast<int64_t>(start_of(k, r, 0) - 50));
      EXPECT_EQ(it->end_ns[k][r], static_cast<int64_t>(start_of(k, r, 0) + 3000 + 1000));
    }
}

TEST(Iterations, NothingRepeatsNoIterations) {
  std::vector<std::vector<Record>> ranks(kRanks);
  for (auto& v : ranks) v = {state(0, 500, kInit), state(600, 700, kBarrier), state(800, 900, kFinalize)};
  mpe::testing::OpenedTestLog log(mpe::testing::write_synthetic_log("iter_none", ranks, kNames));
  ASSERT_TRUE(log.file);
  auto it = cut(*log.file);
  ASSERT_TRUE(it.ok()) << it.status().to_string();
  EXPECT_EQ(it->basis, "");
  EXPECT_EQ(it->count(), 0u);
}

TEST(CompareIterations, NamesTheIterationAndTheRankThatComputedLonger) {
  constexpr uint64_t kExtra = 4000;  // rank 1, iteration 2
  mpe::testing::OpenedTestLog a(mpe::testing::write_synthetic_log("iter_a", loop(8, true), kNames));
  mpe::testing::OpenedTestLog b(mpe::testing::write_synthetic_log("iter_b", loop(8, true, kExtra), kNames));
  ASSERT_TRUE(a.file && b.file);
  auto ia = cut(*a.file);
  auto ib = cut(*b.file);
  ASSERT_TRUE(ia.ok() && ib.ok());
  const auto c = mpe::analysis::diff::compare_iterations(*ia, *ib);
  ASSERT_EQ(c.rows.size(), 8u);
  ASSERT_EQ(c.parting, std::vector<size_t>{2}) << "noise " << c.noise_ns;
  const auto& row = c.rows[2];
  // Every rank's iteration 2 grew by the extra time (the others waited for rank 1); only rank 1's
  // time outside MPI did.
  for (int r = 0; r < kRanks; ++r)
    EXPECT_DOUBLE_EQ(row.delta_ns[static_cast<size_t>(r)], static_cast<double>(kExtra));
  EXPECT_EQ(row.ranks.size(), 3u);
  EXPECT_EQ(row.app_ranks, std::vector<uint32_t>{1});
  EXPECT_DOUBLE_EQ(row.app_delta_ns[1], static_cast<double>(kExtra));
  EXPECT_DOUBLE_EQ(row.app_delta_ns[0], 0.0);
}

}  // namespace
