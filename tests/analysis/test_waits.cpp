// The wait-state analysis against a log whose waits are known exactly: three ranks, one instance
// of each pattern, times in nanoseconds (1 tick = 1 ns, no clock correction).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "mpe/log_writer.h"
#include "mpe/waits.h"
#include "synthetic_log.h"

namespace {

using mpe::analysis::waits::Blame;
using mpe::analysis::waits::Pattern;
using mpe::format::Record;
using mpe::format::RecordKind;

enum Cat : uint16_t { kSend, kRecv, kIrecv, kWaitall, kSsend, kBarrier, kBcast, kReduce, kIallreduce, kWait };
const char* const kNames[] = {"MPI_Send",    "MPI_Recv",  "MPI_Irecv",  "MPI_Waitall",    "MPI_Ssend",
                              "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Iallreduce", "MPI_Wait"};
constexpr int32_t kRecvReq = static_cast<int32_t>(mpe::format::RequestWhat::kRecv);
constexpr int32_t kCollReq = static_cast<int32_t>(mpe::format::RequestWhat::kCollective);

Record state(uint64_t start, uint64_t end, Cat cat) {
  return mpe::format::make_record(RecordKind::kState, start, cat, 0, 0, 0, end - start);
}
Record send(uint64_t t, Cat cat, int32_t dest, int32_t tag) {
  return mpe::format::make_record(RecordKind::kSend, t, cat, dest, tag, 0, 8);
}
Record recv(uint64_t t, Cat cat, int32_t source, int32_t tag) {
  return mpe::format::make_record(RecordKind::kRecv, t, cat, source, tag, 0, 8);
}
Record coll(uint64_t t, Cat cat, int32_t root) {
  return mpe::format::make_record(RecordKind::kCollective, t, cat, root, 0, 0, 0);
}
Record request(RecordKind kind, uint64_t t, Cat cat, int32_t serial, int32_t what) {
  return mpe::format::make_record(kind, t, cat, serial, what, 0, 0);
}
// A blocking collective: its state and its record.
void collective(std::vector<Record>* r, uint64_t start, uint64_t end, Cat cat, int32_t root = -1) {
  r->push_back(state(start, end, cat));
  r->push_back(coll(start, cat, root));
}
// A nonblocking collective posted at `post`, completed by MPI_Wait [wait, end].
void nonblocking(std::vector<Record>* r, uint64_t post, uint64_t wait, uint64_t end, int32_t serial) {
  r->push_back(state(post, post + 10, kIallreduce));
  r->push_back(coll(post, kIallreduce, -1));
  r->push_back(request(RecordKind::kRequestPost, post, kIallreduce, serial, kCollReq));
  r->push_back(state(wait, end, kWait));
  r->push_back(request(RecordKind::kRequestDone, end, kWait, serial, kCollReq));
}

std::string write_log() {
  std::vector<Record> r0, r1, r2;
  // Late Sender: rank 1 waits in MPI_Recv from 100 until rank 0 sends at 150.
  r1.push_back(state(100, 300, kRecv));
  r1.push_back(recv(300, kRecv, 0, 1));
  r0.push_back(state(150, 160, kSend));
  r0.push_back(send(150, kSend, 1, 1));
  // Late Sender in a Waitall of two receives: senders at 500 (rank 0) and 600 (rank 1); only the
  // later counts: rank 2 waits from 420 to 600.
  r2.push_back(state(400, 405, kIrecv));
  r2.push_back(request(RecordKind::kRequestPost, 400, kIrecv, 1, kRecvReq));
  r2.push_back(state(410, 415, kIrecv));
  r2.push_back(request(RecordKind::kRequestPost, 410, kIrecv, 2, kRecvReq));
  r2.push_back(state(420, 700, kWaitall));
  r2.push_back(request(RecordKind::kRequestDone, 700, kWaitall, 1, kRecvReq));
  r2.push_back(recv(700, kWaitall, 0, 2));
  r2.push_back(request(RecordKind::kRequestDone, 700, kWaitall, 2, kRecvReq));
  r2.push_back(recv(700, kWaitall, 1, 3));
  r0.push_back(state(500, 510, kSend));
  r0.push_back(send(500, kSend, 2, 2));
  r1.push_back(state(600, 610, kSend));
  r1.push_back(send(600, kSend, 2, 3));
  // Late Receiver: rank 0's MPI_Ssend at 800 waits until rank 1 posts its MPI_Recv at 900.
  r0.push_back(state(800, 1000, kSsend));
  r0.push_back(send(800, kSsend, 1, 4));
  r1.push_back(state(900, 1000, kRecv));
  r1.push_back(recv(1000, kRecv, 0, 4));
  // Wait at Barrier: entries 2000, 2100, 2250: ranks 0 and 1 wait 250 and 150 for rank 2.
  collective(&r0, 2000, 2300, kBarrier);
  collective(&r1, 2100, 2300, kBarrier);
  collective(&r2, 2250, 2300, kBarrier);
  // Late Broadcast, root 1 at 3100: rank 0 (3000) waits 100, rank 2 (3050) waits 50.
  collective(&r0, 3000, 3200, kBcast, 1);
  collective(&r1, 3100, 3200, kBcast, 1);
  collective(&r2, 3050, 3200, kBcast, 1);
  // Early Reduce, root 0 at 4000: the earliest other enters at 4100 (rank 2): 100.
  collective(&r0, 4000, 4300, kReduce, 0);
  collective(&r1, 4200, 4300, kReduce, 0);
  collective(&r2, 4100, 4300, kReduce, 0);
  // MPI_Iallreduce posted at 5000, 5300, 5100, completed by MPI_Wait entered at 5020, 5320, 5110:
  // ranks 0 and 2 wait in their Wait for rank 1's post: 280 and 190 (Wait at N×N).
  nonblocking(&r0, 5000, 5020, 5400, 10);
  nonblocking(&r1, 5300, 5320, 5400, 11);
  nonblocking(&r2, 5100, 5110, 5400, 12);

  return mpe::testing::write_synthetic_log("waits", {r0, r1, r2}, {std::begin(kNames), std::end(kNames)});
}

class Waits : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(log_.file);
    file_ = log_.file.get();
    mpe::analysis::waits::Options options;
    options.keep_instances = true;
    auto report = mpe::analysis::waits::analyze(*file_, options);
    ASSERT_TRUE(report.ok()) << report.status().to_string();
    report_ = std::move(report.value());
  }
  const mpe::analysis::waits::PatternTotal& total(Pattern p) const {
    return report_.patterns[static_cast<int>(p)];
  }
  int64_t blame(uint32_t culprit, uint32_t waiter) const {
    return mpe::analysis::waits::blame_ns(report_, culprit, waiter);
  }

  mpe::testing::OpenedTestLog log_{write_log()};
  const mpe::format::LogFile* file_ = nullptr;
  mpe::analysis::waits::Report report_;
};

TEST_F(Waits, EachPatternHasItsExactWaitingTimeRankAndCulprit) {
  EXPECT_EQ(total(Pattern::kLateSender).ns, 50 + 180);
  EXPECT_EQ(total(Pattern::kLateSender).instances, 2u);  // the Waitall counts once, for its later sender
  EXPECT_EQ(total(Pattern::kLateSender).per_rank, (std::vector<int64_t>{0, 50, 180}));
  EXPECT_EQ(total(Pattern::kLateReceiver).ns, 100);
  EXPECT_EQ(total(Pattern::kLateReceiver).per_rank, (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(total(Pattern::kWaitBarrier).per_rank, (std::vector<int64_t>{250, 150, 0}));
  EXPECT_EQ(total(Pattern::kLateBroadcast).per_rank, (std::vector<int64_t>{100, 0, 50}));
  EXPECT_EQ(total(Pattern::kEarlyReduce).per_rank, (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(total(Pattern::kWaitNxN).per_rank, (std::vector<int64_t>{280, 0, 190}));
  // blame_ns(culprit, waiter)
  EXPECT_EQ(blame(0, 1), 50);               // late sender
  EXPECT_EQ(blame(0, 2), 0);                // the earlier one is not blamed
  EXPECT_EQ(blame(1, 0), 100 + 100 + 280);  // late receiver, late root, late Iallreduce post
  EXPECT_EQ(blame(2, 0), 250 + 100);        // last at the barrier; earliest other at the reduce
  EXPECT_EQ(blame(2, 1), 150);
  EXPECT_EQ(blame(1, 2), 180 + 50 + 190);
}

TEST_F(Waits, BlameListsOnlyThePairsThatWaitedInOrder) {
  // The five pairs above that waited, and no other: no pair costs 0, none is a rank with itself.
  const std::vector<Blame> expected = {{0, 1, 50}, {1, 0, 480}, {1, 2, 420}, {2, 0, 350}, {2, 1, 150}};
  EXPECT_EQ(report_.blame, expected);
  EXPECT_EQ(mpe::analysis::waits::blame_by_culprit(report_), (std::vector<int64_t>{50, 900, 500}));
  EXPECT_EQ(blame(3, 0), 0);  // outside the world: nothing, not a crash
}

TEST_F(Waits, BlameIsTheInstancesSummedPerPair) {
  // What the dense matrix held: every cell the sum of the instances of that (culprit, waiter).
  std::vector<std::vector<int64_t>> dense(3, std::vector<int64_t>(3, 0));
  for (const auto& in : report_.instances)
    dense[static_cast<size_t>(in.culprit)][in.rank] += in.end - in.start;
  for (uint32_t c = 0; c < 3; ++c)
    for (uint32_t w = 0; w < 3; ++w)
      EXPECT_EQ(blame(c, w), dense[c][w]) << "culprit " << c << ", waiter " << w;
}

TEST_F(Waits, WithoutBlameTheTotalsAreTheSame) {
  mpe::analysis::waits::Options options;
  options.keep_blame = false;
  auto lean = mpe::analysis::waits::analyze(*file_, options);
  ASSERT_TRUE(lean.ok()) << lean.status().to_string();
  EXPECT_TRUE(lean->blame.empty());
  for (int p = 0; p < mpe::analysis::waits::kPatternCount; ++p) {
    EXPECT_EQ(lean->patterns[static_cast<size_t>(p)].ns, report_.patterns[static_cast<size_t>(p)].ns);
    EXPECT_EQ(lean->patterns[static_cast<size_t>(p)].per_rank,
              report_.patterns[static_cast<size_t>(p)].per_rank);
  }
}

TEST_F(Waits, InstancesLieInsideTheirWaitingCalls) {
  ASSERT_EQ(report_.instances.size(), 10u);
  for (const auto& in : report_.instances) {
    EXPECT_LT(in.start, in.end);
    EXPECT_GE(in.start, in.state_start);
    EXPECT_LE(in.end, in.state_end);
  }
  // The Waitall's instance: rank 2, from the Waitall's entry to the later send, culprit rank 1,
  // with the message's arrow times.
  const mpe::analysis::waits::Instance* waitall = nullptr;
  for (const auto& in : report_.instances)
    if (in.pattern == Pattern::kLateSender && in.rank == 2) waitall = &in;
  ASSERT_NE(waitall, nullptr);
  EXPECT_EQ(waitall->end - waitall->start, 180);
  EXPECT_EQ(waitall->culprit, 1);
  EXPECT_EQ(file_->category_name(waitall->cat), "MPI_Waitall");
  EXPECT_EQ(waitall->culprit_state_end - waitall->culprit_state_start, 10);
  EXPECT_EQ(waitall->recv_time - waitall->send_time, 100);
}

TEST_F(Waits, MpiTimeIsEveryCallsDuration) {
  EXPECT_EQ(report_.mpi_per_rank[2], 5 + 5 + 280 + 50 + 150 + 200 + 10 + 290);
  EXPECT_EQ(report_.unmatched, 0u);
}

// 40,000 ranks: a barrier that the last rank enters late, then a ring of messages in which rank
// 7 sends late. The blame is one pair per waiting rank; a ranks × ranks matrix would be 12.8 GB.
TEST(WaitsManyRanks, BlameGrowsWithThePairsThatWaitedNotWithRanksSquared) {
  constexpr uint32_t kRanks = 40000, kLast = kRanks - 1;
  std::vector<std::vector<Record>> ranks(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    auto& rec = ranks[r];
    const uint64_t enter = r == kLast ? 5000 : 1000;
    collective(&rec, enter, 6000, kBarrier);
    const uint64_t sent = r == 7 ? 10500 : 10000;
    rec.push_back(state(sent, sent + 10, kSend));
    rec.push_back(send(sent, kSend, static_cast<int32_t>((r + 1) % kRanks), 9));
    rec.push_back(state(10000, 11000, kRecv));
    rec.push_back(recv(11000, kRecv, static_cast<int32_t>((r + kRanks - 1) % kRanks), 9));
  }
  mpe::testing::OpenedTestLog log(
      mpe::testing::write_synthetic_log("waits_many", ranks, {std::begin(kNames), std::end(kNames)}));
  ASSERT_TRUE(log.file);
  auto report = mpe::analysis::waits::analyze(*log.file);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->blame.size(), size_t{kRanks});  // kLast with each other rank, and 7 with 8
  EXPECT_EQ(mpe::analysis::waits::blame_ns(*report, kLast, 0), 4000);
  EXPECT_EQ(mpe::analysis::waits::blame_ns(*report, kLast, kLast - 1), 4000);
  EXPECT_EQ(mpe::analysis::waits::blame_ns(*report, 7, 8), 500);
  EXPECT_EQ(mpe::analysis::waits::blame_ns(*report, 8, 9), 0);
  EXPECT_EQ(mpe::analysis::waits::blame_by_culprit(*report)[kLast], int64_t{4000} * kLast);
  const auto& barrier = report->patterns[static_cast<int>(Pattern::kWaitBarrier)];
  EXPECT_EQ(barrier.instances, uint64_t{kLast});
  EXPECT_EQ(barrier.per_rank[12345], 4000);
  EXPECT_EQ(barrier.per_rank[kLast], 0);
  EXPECT_EQ(report->patterns[static_cast<int>(Pattern::kLateSender)].per_rank[8], 500);
  // The whole test (the log written and read included) peaks far below the dense matrix.
  rusage usage{};
  ASSERT_EQ(getrusage(RUSAGE_SELF, &usage), 0);
  EXPECT_LT(usage.ru_maxrss, 1024 * 1024) << "peak RSS in KiB";
}

}  // namespace
