// The rebuilt unexpected queue against a log whose queue is known exactly: three ranks, two
// communicators, blocking and nonblocking receives, times in nanoseconds (1 tick = 1 ns).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "mpe/log_writer.h"
#include "mpe/umq.h"
#include "synthetic_log.h"
#include "umq_report.h"

namespace {

using mpe::format::Record;
using mpe::format::RecordKind;

enum Cat : uint16_t { kSend, kRecv, kIrecv, kWait };
const char* const kNames[] = {"MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Wait"};
constexpr int32_t kRecvReq = static_cast<int32_t>(mpe::format::RequestWhat::kRecv);
constexpr uint32_t kWorld = 0, kOther = 2;  // per-rank communicator indices
enum Site : int32_t { kNoSite, kRecvLine, kIrecvLine, kOtherRecvLine };

Record state(uint64_t start, uint64_t end, Cat cat, int32_t site = kNoSite) {
  return mpe::format::make_record(RecordKind::kState, start, cat, 0, site, 0, end - start);
}
// A blocking send of 8 bytes at t.
void send(std::vector<Record>* r, uint64_t t, int32_t dest, int32_t tag, uint32_t comm = kWorld) {
  r->push_back(state(t, t + 5, kSend));
  r->push_back(mpe::format::make_record(RecordKind::kSend, t, kSend, dest, tag, comm, 8));
}
// A blocking receive posted at `post` that took (source, tag)'s message at `post + 5`.
void recv(std::vector<Record>* r, uint64_t post, int32_t source, int32_t tag, int32_t site,
          uint32_t comm = kWorld) {
  r->push_back(state(post, post + 5, kRecv, site));
  r->push_back(mpe::format::make_record(RecordKind::kRecv, post + 5, kRecv, source, tag, comm, 8));
}
// MPI_Irecv posted at `post` (with or without its request records), completed by MPI_Wait
// [wait, wait + 10].
void irecv(std::vector<Record>* r, uint64_t post, uint64_t wait, int32_t source, int32_t tag, int32_t serial,
           bool request_records = true) {
  r->push_back(state(post, post + 5, kIrecv, kIrecvLine));
  if (request_records)
    r->push_back(mpe::format::make_record(RecordKind::kRequestPost, post, kIrecv, serial, kRecvReq));
  r->push_back(state(wait, wait + 10, kWait));
  if (request_records)
    r->push_back(mpe::format::make_record(RecordKind::kRequestDone, wait + 10, kWait, serial, kRecvReq));
  r->push_back(mpe::format::make_record(RecordKind::kRecv, wait + 10, kWait, source, tag, kWorld, 8));
}

mpe::Frame frame(int line) { return mpe::Frame{"main", "/src/app.c", line, "/bin/app", 0}; }

std::string write_log() {
  std::vector<Record> r0, r1, r2;
  // Rank 2 sends on the other communicator at 90; rank 0 takes it at 500.
  send(&r2, 90, 0, 1, kOther);
  // Six messages to rank 0 before it posts anything: rank 1 at 100, 110, 120, 130 (tag 1), rank 2
  // at 105, 115 (tag 2).
  for (uint64_t t : {100, 110, 120, 130}) send(&r1, t, 0, 1);
  for (uint64_t t : {105, 115}) send(&r2, t, 0, 2);
  // Rank 0's MPI_Recv(ANY_SOURCE) at 200, 210, ... 250 takes them in this order: world queue
  // lengths 6, 5, 4, 3, 2, 1, the other communicator's message never counted there.
  const int32_t order[] = {1, 2, 1, 1, 2, 1};
  for (int i = 0; i < 6; ++i) recv(&r0, 200 + 10 * i, order[i], order[i], kRecvLine);
  // Pre-posted: MPI_Irecv at 300, the send at 310: never unexpected (length 0 at the post).
  irecv(&r0, 300, 320, 1, 3, 1);
  send(&r1, 310, 0, 3);
  // Late: the send at 350, MPI_Irecv at 360: length 1.
  send(&r1, 350, 0, 4);
  irecv(&r0, 360, 370, 1, 4, 2);
  // The other communicator's receive at 500: length 1 (its own message).
  recv(&r0, 500, 2, 1, kOtherRecvLine, kOther);
  // Rank 1's MPI_Irecv without request records: taken as posted at its MPI_Wait's entry (700),
  // after rank 0's send at 600: length 1.
  send(&r0, 600, 1, 5);
  irecv(&r1, 590, 700, 0, 5, 0, false);

  return mpe::testing::write_synthetic_log(
      "umq", {r0, r1, r2}, {std::begin(kNames), std::end(kNames)}, [](mpe::format::RankMeta* m) {
        m->comms.push_back(
            mpe::format::CommDef{1, (1ull << 62) | m->rank, false, {static_cast<int32_t>(m->rank)}});
        m->comms.push_back(mpe::format::CommDef{2, 5, false, {0, 1, 2}});
        m->callsites = {{kRecvLine, {frame(10)}}, {kIrecvLine, {frame(20)}}, {kOtherRecvLine, {frame(30)}}};
      });
}

class Rebuild : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(log_.file); }
  mpe::analysis::umq::Rebuilt rebuild(uint64_t threshold, bool series = false) {
    mpe::analysis::umq::Options options;
    options.threshold = threshold;
    options.keep_series = series;
    auto r = mpe::analysis::umq::rebuild(*log_.file, options);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(r.value()) : mpe::analysis::umq::Rebuilt{};
  }
  const mpe::analysis::umq::SiteRecord* site(const mpe::analysis::umq::Rebuilt& r, uint32_t rank, int line) {
    for (const auto& s : r.sites[rank])
      if (!s.stack.empty() && s.stack[0].line == line) return &s;
    return nullptr;
  }

  mpe::testing::OpenedTestLog log_{write_log()};
};

TEST_F(Rebuild, EachPostMeetsTheMessagesSentAndNotYetTaken) {
  const auto r = rebuild(0);
  EXPECT_EQ(r.max_length, (std::vector<uint64_t>{6, 1, 0}));
  const auto* blocking = site(r, 0, 10);
  ASSERT_NE(blocking, nullptr);
  EXPECT_EQ(blocking->mpi_function, "MPI_Recv");
  EXPECT_EQ(blocking->occurrences, 6u);
  EXPECT_EQ(blocking->sum_length, 6u + 5 + 4 + 3 + 2 + 1);
  EXPECT_EQ(blocking->max_length, 6u);
  EXPECT_EQ(blocking->communicator, "MPI_COMM_WORLD");
  const auto* late_irecv = site(r, 0, 20);  // the pre-posted one met 0, which is not above 0
  ASSERT_NE(late_irecv, nullptr);
  EXPECT_EQ(late_irecv->mpi_function, "MPI_Irecv");
  EXPECT_EQ(late_irecv->occurrences, 1u);
  EXPECT_EQ(late_irecv->max_length, 1u);
  const auto* other = site(r, 0, 30);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->max_length, 1u);
  EXPECT_EQ(other->communicator, "comm#2 (size 3)");
  EXPECT_EQ(r.sites[0].size(), 3u);
  // Rank 1's receive without request records: at its MPI_Wait, the completing call.
  ASSERT_EQ(r.sites[1].size(), 1u);
  EXPECT_EQ(r.sites[1][0].mpi_function, "MPI_Wait");
  EXPECT_EQ(r.sites[1][0].max_length, 1u);
  EXPECT_EQ(r.unknown_posts, 1u);
  EXPECT_EQ(r.posts, 10u);
  EXPECT_EQ(r.messages, 10u);
  EXPECT_EQ(r.unexpected, 9u);  // all but the pre-posted one
  EXPECT_EQ(r.unmatched, 0u);
}

TEST_F(Rebuild, ThresholdAndTopSenders) {
  const auto r = rebuild(2);  // lengths 6, 5, 4, 3 are above it
  ASSERT_EQ(r.sites[0].size(), 1u);
  const auto& s = r.sites[0][0];
  EXPECT_EQ(s.occurrences, 4u);
  EXPECT_EQ(s.sum_length, 18u);
  // Rank 1 leads at every one of them (4, 3, 3, 2 queued against rank 2's 2, 2, 1, 1).
  ASSERT_EQ(s.peers.size(), 1u);
  EXPECT_EQ(s.peers[0].peer, 1);
  EXPECT_EQ(s.peers[0].times_top, 4u);
  EXPECT_EQ(s.peers[0].max_queued, 4u);
  EXPECT_TRUE(r.sites[1].empty());
}

TEST_F(Rebuild, SeriesStepsAtEverySendStartAndPost) {
  const auto r = rebuild(5, true);
  ASSERT_EQ(r.series.size(), 3u);
  // Times count from the run's start: the first record, at 90.
  std::vector<std::pair<int64_t, uint32_t>> got;
  for (const auto& p : r.series[0]) got.emplace_back(p.time + 90, p.length);
  const std::vector<std::pair<int64_t, uint32_t>> want = {
      {90, 1},  {100, 2}, {105, 3}, {110, 4}, {115, 5}, {120, 6}, {130, 7}, {200, 6},
      {210, 5}, {220, 4}, {230, 3}, {240, 2}, {250, 1}, {350, 2}, {360, 1}, {500, 0}};
  EXPECT_EQ(got, want);
  ASSERT_EQ(r.series[1].size(), 2u);
  EXPECT_EQ(r.series[1][0].time + 90, 600);
  EXPECT_EQ(r.series[1][1].length, 0u);
}

TEST_F(Rebuild, ReportIsLibumqsLayoutNamingTheLog) {
  auto r = rebuild(2);
  mpe::analysis::umq::SiteMerge merge;
  for (size_t k = 0; k < r.sites.size(); ++k) merge.add_rank(r.sites[k], static_cast<int>(k));
  const auto variable = mpe::analysis::umq::rebuilt_variable("/tmp/run.mpelog", 2);
  const std::string text = mpe::analysis::umq::report_text(merge.ranked(), variable, 3);
  EXPECT_NE(text.find("variable: rebuilt from run.mpelog (per communicator, per peer)   threshold: > 2   "
                      "ranks: 3   call sites: 1"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("#1  MPI_Recv at app.c:10 (main)\n    occurrences: 4   max length: 6   mean length: 4.5"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("top sending peer: rank 1 (in the communicator) queued up to 4 to rank 0, top peer 4 times"),
      std::string::npos)
      << text;
  const std::string json = mpe::analysis::umq::report_json(merge.ranked(), variable, 3);
  EXPECT_NE(json.find("\"variable\": \"rebuilt from run.mpelog\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"location\": \"app.c:10\""), std::string::npos) << json;
}

// The top sender is named by its rank in the receive's communicator, here in reverse world order
// ({2, 1, 0}), and a tie goes to the lowest rank in it.
TEST(RebuildPeers, TopSenderIsItsRankInTheCommunicatorTiesToTheLowest) {
  constexpr uint32_t kReversed = 1;
  std::vector<Record> r0, r1, r2;
  // World ranks 1 and 2 (communicator ranks 1 and 0) each queue two messages to world rank 0
  // (communicator rank 2) before it posts.
  for (uint64_t t : {100, 110}) send(&r1, t, 2, 1, kReversed);
  for (uint64_t t : {105, 115}) send(&r2, t, 2, 2, kReversed);
  // Rank 0 takes them from communicator ranks 0, 1, 1, 0: queued (world 1, world 2) before each
  // post: (2, 2) a tie, (2, 1), (1, 1) a tie, (0, 1).
  const int32_t order[] = {0, 1, 1, 0};
  for (int i = 0; i < 4; ++i) recv(&r0, 200 + 10 * i, order[i], order[i] == 1 ? 1 : 2, kRecvLine, kReversed);
  mpe::testing::OpenedTestLog log(mpe::testing::write_synthetic_log(
      "umq_peers", {r0, r1, r2}, {std::begin(kNames), std::end(kNames)}, [](mpe::format::RankMeta* m) {
        m->comms.push_back(mpe::format::CommDef{kReversed, 9, false, {2, 1, 0}});
        m->callsites = {{kRecvLine, {frame(10)}}};
      }));
  ASSERT_TRUE(log.file);
  mpe::analysis::umq::Options options;
  options.threshold = 0;
  auto r = mpe::analysis::umq::rebuild(*log.file, options);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->sites[0].size(), 1u);
  const auto& peers = r->sites[0][0].peers;
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(peers[0].peer, 0);  // world rank 2: the ties and the last post
  EXPECT_EQ(peers[0].times_top, 3u);
  EXPECT_EQ(peers[0].max_queued, 2u);
  EXPECT_EQ(peers[1].peer, 1);  // world rank 1: the second post
  EXPECT_EQ(peers[1].times_top, 1u);
  EXPECT_EQ(peers[1].max_queued, 2u);
}

}  // namespace
