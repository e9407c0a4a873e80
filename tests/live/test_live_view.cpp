// JobView: the hang diagnosis (MUST's AND/OR wait-for graph), traffic and arrows, and what is
// counted as lost; on frames built by hand whose truth is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mpe/live_view.h"

namespace mpe::live_stream {
namespace {

constexpr uint64_t kSecond = 1000000000ull;
constexpr uint64_t kNow = 1000 * kSecond;

// A frame of `rank` in a job of `size` whose one thread is in `routine` since `seconds_ago`
// (in the application when routine is empty).
RankFrame frame(uint32_t rank, uint32_t size, const std::string& routine, double seconds_ago,
                WaitKind wait = WaitKind::kNone, std::vector<int32_t> peers = {}, uint64_t seq = 1) {
  RankFrame f;
  f.rank = rank;
  f.world_size = size;
  f.pid = 100 + rank;
  f.host = "h";
  f.seq = seq;
  f.interval_start_ns = kNow - kSecond / 10;
  f.interval_end_ns = kNow;
  ThreadNow t;
  t.in_mpi = !routine.empty();
  t.routine = routine;
  t.since_ns = kNow - static_cast<uint64_t>(seconds_ago * 1e9);
  t.callsite = "hang.c:" + std::to_string(10 + rank) + " (main)";
  t.wait = wait;
  t.peers = peers;
  if (peers.size() == 1) t.peer = peers[0];
  f.threads = {t};
  return f;
}

// The same, in a collective on a communicator of `members`.
RankFrame in_collective(uint32_t rank, uint32_t size, const std::string& routine,
                        std::vector<int32_t> members, uint64_t key = 7) {
  RankFrame f = frame(rank, size, routine, 5.0, WaitKind::kCollective);
  f.comms = {CommDef{key, "MPI_COMM_WORLD", to_ranges(members)}};
  f.threads[0].comm = 0;
  return f;
}

std::vector<int32_t> ranks_of(const Deadlock& d) {
  std::vector<int32_t> r;
  for (const NowRow& row : d.cycle) r.push_back(row.rank);
  return r;
}

TEST(LiveDiagnosis, TwoRanksReceivingFromEachOtherDeadlock) {
  JobView v;
  v.add(frame(0, 2, "MPI_Recv", 3, WaitKind::kAllOf, {1}));
  v.add(frame(1, 2, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  const Diagnosis d = v.diagnose(1.0);
  ASSERT_EQ(d.deadlocks.size(), 1u);
  EXPECT_EQ(ranks_of(d.deadlocks[0]), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(d.deadlocks[0].cycle[0].routine, "MPI_Recv");
  EXPECT_EQ(d.deadlocks[0].cycle[0].callsite, "hang.c:10 (main)");
  EXPECT_EQ(d.deadlocks[0].cycle[0].peer, 1);
  EXPECT_TRUE(d.stuck.empty());
}

TEST(LiveDiagnosis, ThreeRankCycleWithABystander) {
  JobView v;
  v.add(frame(0, 4, "MPI_Recv", 3, WaitKind::kAllOf, {1}));
  v.add(frame(1, 4, "MPI_Recv", 3, WaitKind::kAllOf, {2}));
  v.add(frame(2, 4, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  v.add(frame(3, 4, "MPI_Recv", 3, WaitKind::kAllOf, {2}));  // waits on the cycle, not in it
  const Diagnosis d = v.diagnose(1.0);
  ASSERT_EQ(d.deadlocks.size(), 1u);
  EXPECT_EQ(ranks_of(d.deadlocks[0]), (std::vector<int32_t>{0, 1, 2}));
}

TEST(LiveDiagnosis, NotStuckBeforeTheThreshold) {
  JobView v;
  v.add(frame(0, 2, "MPI_Recv", 0.5, WaitKind::kAllOf, {1}));
  v.add(frame(1, 2, "MPI_Recv", 0.5, WaitKind::kAllOf, {0}));
  EXPECT_TRUE(v.diagnose(1.0).empty());
  EXPECT_EQ(v.diagnose(0.2).deadlocks.size(), 1u);
}

TEST(LiveDiagnosis, RankComputingHoldsACollective) {
  JobView v;
  const std::vector<int32_t> world = {0, 1, 2, 3};
  for (uint32_t r = 0; r < 3; ++r) v.add(in_collective(r, 4, "MPI_Barrier", world));
  v.add(frame(3, 4, "", 5.0));
  const Diagnosis d = v.diagnose(1.0);
  EXPECT_TRUE(d.deadlocks.empty());
  ASSERT_EQ(d.stuck.size(), 1u);
  EXPECT_EQ(d.stuck[0].holder.rank, 3);
  EXPECT_FALSE(d.stuck[0].holder.in_mpi);
  EXPECT_EQ(d.stuck[0].waiting, (std::vector<int32_t>{0, 1, 2}));
}

TEST(LiveDiagnosis, EveryoneInTheSameCollectiveIsNoHang) {
  JobView v;
  for (uint32_t r = 0; r < 3; ++r) v.add(in_collective(r, 3, "MPI_Allreduce", {0, 1, 2}));
  EXPECT_TRUE(v.diagnose(1.0).empty());
}

TEST(LiveDiagnosis, MismatchedCollectivesDeadlock) {
  JobView v;
  v.add(in_collective(0, 2, "MPI_Barrier", {0, 1}));
  v.add(in_collective(1, 2, "MPI_Allreduce", {0, 1}));
  const Diagnosis d = v.diagnose(1.0);
  ASSERT_EQ(d.deadlocks.size(), 1u);
  EXPECT_EQ(ranks_of(d.deadlocks[0]), (std::vector<int32_t>{0, 1}));
}

TEST(LiveDiagnosis, AnyOfIsReleasedByOneFreeTarget) {
  // Rank 0 waits for any of 1 and 2 (Waitany); 1 waits for 0; 2 computes: 2 can release 0,
  // which can then release 1: no deadlock, and 2 holds both.
  JobView v;
  v.add(frame(0, 3, "MPI_Waitany", 3, WaitKind::kAnyOf, {1, 2}));
  v.add(frame(1, 3, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  v.add(frame(2, 3, "", 3));
  Diagnosis d = v.diagnose(1.0);
  EXPECT_TRUE(d.deadlocks.empty());
  ASSERT_EQ(d.stuck.size(), 1u);
  EXPECT_EQ(d.stuck[0].holder.rank, 2);
  EXPECT_EQ(d.stuck[0].waiting, (std::vector<int32_t>{0, 1}));
  // With 2 blocked on 0 too, nobody can release anybody.
  v.add(frame(2, 3, "MPI_Recv", 3, WaitKind::kAllOf, {0}, 2));
  d = v.diagnose(1.0);
  ASSERT_EQ(d.deadlocks.size(), 1u);
}

TEST(LiveDiagnosis, AnySourceWaitsForAnyMember) {
  JobView v;
  RankFrame f = frame(0, 3, "MPI_Recv", 3, WaitKind::kAnyInComm);
  f.comms = {CommDef{7, "MPI_COMM_WORLD", to_ranges({0, 1, 2})}};
  f.threads[0].comm = 0;
  f.threads[0].peer = -2;
  v.add(f);
  v.add(frame(1, 3, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  v.add(frame(2, 3, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  const Diagnosis d = v.diagnose(1.0);
  ASSERT_EQ(d.deadlocks.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(snapshot_json(v, 1.0))["diagnosis"]["deadlocks"][0]["calls"][0]["peer"],
            "MPI_ANY_SOURCE");
}

TEST(LiveDiagnosis, UnknownPeersNeverInventADeadlock) {
  JobView v;
  v.add(frame(0, 2, "MPI_Waitall", 3, WaitKind::kUnknown));
  v.add(frame(1, 2, "MPI_Recv", 3, WaitKind::kAllOf, {0}));
  EXPECT_TRUE(v.diagnose(1.0).deadlocks.empty());
}

TEST(LiveDiagnosis, WaitingForAFinalizedRankIsStuckOnIt) {
  JobView v;
  v.add(frame(0, 2, "MPI_Recv", 3, WaitKind::kAllOf, {1}));
  RankFrame done = frame(1, 2, "", 3);
  done.finalized = true;
  v.add(done);
  const Diagnosis d = v.diagnose(1.0);
  ASSERT_EQ(d.stuck.size(), 1u);
  EXPECT_EQ(d.stuck[0].holder.rank, 1);
  EXPECT_EQ(d.stuck[0].holder.routine, "MPI_Finalize");
}

TEST(LiveView, CountsGapsAndIgnoresOldFrames) {
  JobView v;
  v.add(frame(0, 1, "", 1, WaitKind::kNone, {}, 5));
  v.add(frame(0, 1, "", 1, WaitKind::kNone, {}, 9));  // 6, 7, 8 lost
  v.add(frame(0, 1, "", 1, WaitKind::kNone, {}, 7));  // late: ignored
  EXPECT_EQ(v.frames_lost_in_transit(), 3u);
  EXPECT_EQ(v.latest().at(0).seq, 9u);
}

TEST(LiveView, MatchesSendsToReceivesAsArrows) {
  JobView v;
  RankFrame s = frame(0, 2, "", 1);
  s.events = {{EventKind::kSend, kNow - 500, 1, 3, 7, 64, ""},
              {EventKind::kSend, kNow - 400, 1, 3, 7, 64, ""}};
  s.sends = 2;
  s.send_bytes = 128;
  RankFrame r = frame(1, 2, "", 1);
  r.events = {{EventKind::kRecv, kNow - 450, 0, 3, 7, 64, ""}};
  v.add(r);  // the receive's frame may come first
  v.add(s);
  ASSERT_EQ(v.arrows().size(), 2u);
  EXPECT_EQ(v.arrows()[0].recv_ns, kNow - 450);
  EXPECT_EQ(v.arrows()[1].recv_ns, 0u);  // not received yet
  const auto pairs = v.traffic_pairs(true);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].count, 2u);
  EXPECT_EQ(pairs[0].bytes, 128u);
  EXPECT_EQ(v.total_sends(), 2u);
}

// The live view keys messages as the logfile's matcher does: a receive on another communicator,
// with the same ranks and tag, is not this send's.
TEST(LiveView, PairsOnlyWithinACommunicator) {
  JobView v;
  RankFrame s = frame(0, 2, "", 1);
  s.events = {{EventKind::kSend, kNow - 500, 1, 3, 7, 64, ""},
              {EventKind::kSend, kNow - 400, 1, 3, 9, 64, ""}};
  RankFrame r = frame(1, 2, "", 1);
  r.events = {{EventKind::kRecv, kNow - 300, 0, 3, 9, 64, ""},
              {EventKind::kRecv, kNow - 200, 0, 3, 7, 64, ""}};
  v.add(s);
  v.add(r);
  ASSERT_EQ(v.arrows().size(), 2u);
  EXPECT_EQ(v.arrows()[0].recv_ns, kNow - 200);  // communicator 7's send meets communicator 7's receive
  EXPECT_EQ(v.arrows()[1].recv_ns, kNow - 300);
  const auto received = v.received_pairs();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].from, 0);
  EXPECT_EQ(received[0].to, 1);
  EXPECT_EQ(received[0].count, 2u);
}

TEST(LiveView, AggregatedTrafficCountsPerPeer) {
  JobView v;
  RankFrame s = frame(0, 3, "", 1);
  s.aggregated = true;
  s.per_peer = {{1, 1000, 64000}, {2, 10, 640}};
  s.received_per_peer = {{2, 7, 448}};
  v.add(s);
  EXPECT_EQ(v.aggregated_intervals(), 1u);
  const auto pairs = v.traffic_pairs();
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].to, 1);
  EXPECT_EQ(pairs[0].count, 1000u);
  // Receives aggregated per source count as pairs (source -> this rank) too.
  const auto received = v.received_pairs();
  ASSERT_EQ(received.size(), 1u);
  EXPECT_EQ(received[0].from, 2);
  EXPECT_EQ(received[0].to, 0);
  EXPECT_EQ(received[0].count, 7u);
  EXPECT_EQ(received[0].bytes, 448u);
}

TEST(LiveView, NowTableSortsByTimeAndMarksStuck) {
  JobView v;
  v.add(frame(0, 3, "MPI_Recv", 0.2, WaitKind::kAllOf, {1}));
  v.add(frame(1, 3, "MPI_Barrier", 4.0, WaitKind::kCollective));
  v.add(frame(2, 3, "", 9.0));
  const auto rows = v.now_table(1.0);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].rank, 2);
  EXPECT_FALSE(rows[0].stuck);  // computing is not stuck
  EXPECT_EQ(rows[1].rank, 1);
  EXPECT_TRUE(rows[1].stuck);
  EXPECT_FALSE(rows[2].stuck);
}

}  // namespace
}  // namespace mpe::live_stream
