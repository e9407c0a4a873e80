// The one message matcher (mpe/message_matcher.h): pairs per key in time order, logged order
// deciding equal times, ends arriving out of time order (chunks of several threads), the
// cancelled latest send, ends left over on either side, an End with a payload, and an End that is
// a handle whose time the caller looks up. Every expected pair is written out by hand. Then the
// reader (load_trace) and the analyses' endpoints on one log where a rank sends on one key from
// two threads, so that logged order is not time order, with a cancel and an unmatched receive:
// both must give the same, known messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/chunk_pass.h"
#include "mpe/endpoint_collector.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"
#include "mpe/umq.h"

using namespace mpe::format;

namespace {

struct End {
  int64_t time;
  int id;  // which end, to name the expected pairs
};

struct Pair {
  MessageKey key;
  int send;
  int recv;
  bool operator==(const Pair&) const = default;
};

struct Left {
  MessageKey key;
  size_t sends;
  size_t recvs;
  bool operator==(const Left&) const = default;
};

void PrintTo(const Pair& p, std::ostream* os) {
  *os << "(tag " << std::get<3>(p.key) << ": send " << p.send << ", recv " << p.recv << ")";
}
void PrintTo(const Left& l, std::ostream* os) {
  *os << "(tag " << std::get<3>(l.key) << ": " << l.sends << " sends, " << l.recvs << " recvs left)";
}

struct Result {
  std::vector<Pair> pairs;
  std::vector<Left> left;
};

template <class Matcher>
Result run(Matcher& m) {
  Result r;
  m.match(
      [&](const MessageKey& key, const End& s, const End& v) {
        r.pairs.push_back({key, s.id, v.id});
      },
      [&](const MessageKey& key, size_t sends, size_t recvs) {
        r.left.push_back({key, sends, recvs});
      });
  return r;
}

const MessageKey kA{0, 0, 1, 7};  // world, rank 0 -> 1, tag 7
const MessageKey kB{0, 0, 1, 8};  // same ranks, another tag
const MessageKey kC{5, 1, 0, 7};  // another communicator, the other way

TEST(MessageMatcher, PairsEachKeyInTimeOrderAndVisitsKeysInKeyOrder) {
  MessageMatcher<End> m;
  // Interleaved over the keys, as records of several ranks come.
  m.add_send(kC, {100, 30});
  m.add_send(kA, {10, 1});
  m.add_send(kB, {11, 20});
  m.add_recv(kA, {15, 101});
  m.add_send(kA, {20, 2});
  m.add_recv(kC, {130, 130});
  m.add_recv(kB, {16, 120});
  m.add_recv(kA, {25, 102});
  EXPECT_EQ(m.pairs(), 4u);
  const Result r = run(m);
  EXPECT_EQ(r.pairs, (std::vector<Pair>{{kA, 1, 101}, {kA, 2, 102}, {kB, 20, 120}, {kC, 30, 130}}));
  EXPECT_EQ(r.left, (std::vector<Left>{{kA, 0, 0}, {kB, 0, 0}, {kC, 0, 0}}));
  // match() leaves the matcher empty.
  EXPECT_EQ(m.pairs(), 0u);
  const Result again = run(m);
  EXPECT_TRUE(again.pairs.empty());
  EXPECT_TRUE(again.left.empty());
}

TEST(MessageMatcher, EqualTimesKeepLoggedOrder) {
  MessageMatcher<End> m;
  // Sends 3 and 4 at the same time, after an out-of-order send 5: the sort must be stable.
  m.add_send(kA, {50, 5});
  m.add_send(kA, {10, 3});
  m.add_send(kA, {10, 4});
  m.add_recv(kA, {60, 13});
  m.add_recv(kA, {60, 14});
  m.add_recv(kA, {70, 15});
  const Result r = run(m);
  EXPECT_EQ(r.pairs, (std::vector<Pair>{{kA, 3, 13}, {kA, 4, 14}, {kA, 5, 15}}));
}

TEST(MessageMatcher, EndsArrivingOutOfOrderAcrossChunks) {
  MessageMatcher<End> m;
  // The sender's thread 1 chunk (times 50, 60) comes before thread 0's (10, 20), as the index
  // orders (rank, thread, time); the receiver's ends come in time order.
  m.add_send(kA, {50, 3});
  m.add_send(kA, {60, 4});
  m.add_send(kA, {10, 1});
  m.add_send(kA, {20, 2});
  for (int k = 0; k < 4; ++k) m.add_recv(kA, {std::vector<int64_t>{15, 25, 55, 65}[k], 101 + k});
  // The receiver's chunks out of order too, on another key.
  m.add_recv(kB, {300, 202});
  m.add_recv(kB, {100, 201});
  m.add_send(kB, {90, 21});
  m.add_send(kB, {95, 22});
  const Result r = run(m);
  EXPECT_EQ(r.pairs,
            (std::vector<Pair>{
                {kA, 1, 101}, {kA, 2, 102}, {kA, 3, 103}, {kA, 4, 104}, {kB, 21, 201}, {kB, 22, 202}}));
}

TEST(MessageMatcher, CancelWithdrawsTheLatestSendAdded) {
  MessageMatcher<End> m;
  m.add_send(kA, {1, 1});
  m.add_send(kA, {2, 2});
  const auto cancelled = m.cancel_latest_send(kA);
  ASSERT_TRUE(cancelled.has_value());
  EXPECT_EQ(cancelled->id, 2);
  m.add_send(kA, {3, 3});
  // Two cancels in a row withdraw two sends; a cancel with none left does nothing.
  m.add_send(kB, {1, 21});
  m.add_send(kB, {2, 22});
  EXPECT_EQ(m.cancel_latest_send(kB)->id, 22);
  EXPECT_EQ(m.cancel_latest_send(kB)->id, 21);
  EXPECT_FALSE(m.cancel_latest_send(kB).has_value());
  EXPECT_FALSE(m.cancel_latest_send(kC).has_value());  // a key never seen: it stays unseen
  // "Latest added", not latest in time: a cancel after a later-logged but earlier-timed send
  // withdraws that one.
  const MessageKey kD{0, 2, 3, 1};
  m.add_send(kD, {500, 41});
  m.add_send(kD, {400, 42});
  EXPECT_EQ(m.cancel_latest_send(kD)->id, 42);
  m.add_recv(kA, {10, 101});
  m.add_recv(kA, {11, 102});
  m.add_recv(kB, {10, 121});
  m.add_recv(kD, {600, 141});
  const Result r = run(m);
  EXPECT_EQ(r.pairs, (std::vector<Pair>{{kA, 1, 101}, {kA, 3, 102}, {kD, 41, 141}}));
  // A withdrawn send is not left over: kB's receive is the only end without a partner.
  EXPECT_EQ(r.left, (std::vector<Left>{{kA, 0, 0}, {kB, 0, 1}, {kD, 0, 0}}));
}

TEST(MessageMatcher, MoreSendsThanReceivesAndTheReverse) {
  MessageMatcher<End> m;
  m.add_send(kA, {30, 3});
  m.add_send(kA, {10, 1});
  m.add_send(kA, {20, 2});
  m.add_recv(kA, {40, 101});  // takes the earliest send, 1; 2 and 3 stay
  m.add_recv(kC, {5, 131});
  m.add_recv(kC, {1, 130});
  m.add_recv(kC, {9, 132});
  m.add_send(kC, {0, 30});  // goes to the earliest receive, 130
  EXPECT_EQ(m.pairs(), 2u);
  const Result r = run(m);
  EXPECT_EQ(r.pairs, (std::vector<Pair>{{kA, 1, 101}, {kC, 30, 130}}));
  EXPECT_EQ(r.left, (std::vector<Left>{{kA, 2, 0}, {kC, 0, 2}}));
}

TEST(MessageMatcher, BackwardMessageIsStillAPair) {
  MessageMatcher<End> m;
  m.add_send(kA, {100, 1});
  m.add_recv(kA, {40, 101});  // ends before its send began: clock error, repaired by the caller
  const Result r = run(m);
  EXPECT_EQ(r.pairs, (std::vector<Pair>{{kA, 1, 101}}));
}

// An End carrying what a caller keeps per end: a payload the matcher moves along untouched.
struct Rich {
  int64_t time;
  std::string what;
  uint64_t bytes;
};

TEST(MessageMatcher, EndWithPayload) {
  MessageMatcher<Rich> m;
  m.add_send(kA, {20, "second send", uint64_t{5} << 32});
  m.add_send(kA, {10, "first send", 8});
  m.add_recv(kA, {30, "first recv", 0});
  m.add_recv(kA, {31, "second recv", 0});
  std::vector<std::tuple<std::string, std::string, uint64_t>> got;
  m.match([&](const MessageKey&, const Rich& s, const Rich& r) { got.emplace_back(s.what, r.what, s.bytes); },
          [](const MessageKey&, size_t, size_t) {});
  EXPECT_EQ(got, (std::vector<std::tuple<std::string, std::string, uint64_t>>{
                     {"first send", "first recv", 8}, {"second send", "second recv", uint64_t{5} << 32}}));
}

// An End that is an index into the caller's storage (as the analyses' endpoints are), its time
// looked up there by side.
struct Storage {
  std::vector<int64_t> send_times;
  std::vector<int64_t> recv_times;
};
struct TimeIn {
  const Storage* s;
  int64_t operator()(uint32_t i, MessageSide side) const {
    return side == MessageSide::kSend ? s->send_times[i] : s->recv_times[i];
  }
};

TEST(MessageMatcher, HandleEndWithTimeLookup) {
  Storage st{{30, 10, 20, 10}, {11, 21, 31}};
  MessageMatcher<uint32_t, TimeIn> m{TimeIn{&st}};
  for (uint32_t i = 0; i < st.send_times.size(); ++i) m.add_send(kA, i);
  for (uint32_t i = 0; i < st.recv_times.size(); ++i) m.add_recv(kA, i);
  EXPECT_EQ(m.cancel_latest_send(kA), std::optional<uint32_t>{3});  // the second send at 10
  std::vector<std::pair<uint32_t, uint32_t>> got;
  size_t sends_left = 9, recvs_left = 9;
  m.match([&](const MessageKey&, uint32_t s, uint32_t r) { got.emplace_back(s, r); },
          [&](const MessageKey&, size_t sl, size_t rl) { sends_left = sl, recvs_left = rl; });
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, uint32_t>>{{1, 0}, {2, 1}, {0, 2}}));
  EXPECT_EQ(sends_left, 0u);
  EXPECT_EQ(recvs_left, 0u);
}

// (sender, receiver, send time, receive time, bytes), ns with 1 tick = 1 ns and no correction.
using Msg = std::tuple<int32_t, int32_t, int64_t, int64_t, uint64_t>;

enum : uint16_t { kInitCat, kSendCat, kIsendCat, kRecvCat, kWaitCat };

Record call(uint64_t start, uint64_t end, uint16_t cat) {
  return StateRecord{start, cat, 0, 0, end - start}.to_record();
}

// Rank 0 sends to rank 1 on tag 7 from two threads: thread 0 at 100 and 300, thread 1 at 200 and
// 220, then cancels (the 220 one, the latest send of the key logged before the cancel). The index
// puts thread 0's chunk first, so in logged order the sends are 100, 300, 200, 220. Rank 1
// receives at 150, 250, 350 and 400: the last has no send.
std::string write_two_thread_log() {
  const std::string path = ::testing::TempDir() + "matcher_" + std::to_string(getpid()) + ".mpelog";
  const std::vector<Record> t0 = {
      call(0, 10, kInitCat), call(100, 110, kSendCat), SendRecord{100, kSendCat, 1, 7, 0, 64}.to_record(),
      call(300, 310, kSendCat), SendRecord{300, kSendCat, 1, 7, 0, 300}.to_record()};
  const std::vector<Record> t1 = {
      call(200, 205, kIsendCat), SendRecord{200, kIsendCat, 1, 7, 0, 200}.to_record(),
      call(220, 225, kIsendCat), SendRecord{220, kIsendCat, 1, 7, 0, 999}.to_record(),
      call(226, 230, kWaitCat),  SendCancelRecord{230, kWaitCat, 1, 7, 0}.to_record()};
  std::vector<Record> r1 = {call(0, 10, kInitCat)};
  for (uint64_t t : {150, 250, 350, 400}) {
    r1.push_back(call(t - 20, t, kRecvCat));
    r1.push_back(RecvRecord{t, kRecvCat, 0, 7, 0, 8}.to_record());
  }
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  struct Part {
    const std::vector<Record>* records;
    uint32_t rank, thread;
  };
  for (const Part& p : {Part{&t0, 0, 0}, Part{&t1, 0, 1}, Part{&r1, 1, 0}}) {
    std::string chunk;
    encode_events(p.records->data(), static_cast<uint32_t>(p.records->size()), p.rank, p.thread, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
  }
  Definitions d;
  d.world_size = 2;
  d.program = "matcher";
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = mpi_categories({"MPI_Init", "MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Wait"});
  for (uint32_t r = 0; r < 2; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 2;
    m.host = "h";
    m.ticks_per_second = 1e9;
    m.threads = r == 0 ? std::vector<ThreadDef>{ThreadDef{0, 100}, ThreadDef{1, 101}}
                       : std::vector<ThreadDef>{ThreadDef{0, 200}};
    m.comms = {CommDef{0, 0, false, {0, 1}}};
    d.ranks.push_back(m);
  }
  EXPECT_TRUE(w.finish(d).ok());
  return path;
}

// Paired by time, not by logged order; the cancelled 220 send is neither matched nor unmatched.
const std::vector<Msg> kTwoThreadTruth = {{0, 1, 100, 150, 64}, {0, 1, 200, 250, 200}, {0, 1, 300, 350, 300}};

TEST(MessageMatcherUsers, ReaderAndEndpointsAgreeWhenLoggedOrderIsNotTimeOrder) {
  const std::string path = write_two_thread_log();
  auto file = LogFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();

  auto tr = load_trace(*file);
  ASSERT_TRUE(tr.ok()) << tr.status().to_string();
  std::vector<Msg> reader;
  for (const Message& m : tr->messages) reader.emplace_back(m.src, m.dst, m.send_time, m.recv_time, m.bytes);
  std::sort(reader.begin(), reader.end());
  EXPECT_EQ(reader, kTwoThreadTruth);
  EXPECT_EQ(tr->unmatched_sends, 0u);
  EXPECT_EQ(tr->unmatched_recvs, 1u);

  mpe::analysis::EndpointCollector collector(*file);
  ASSERT_TRUE(run_chunk_pass(*file, {collector.consumer()}).ok());
  const auto collected = collector.finish();
  std::vector<Msg> endpoints;
  for (const mpe::analysis::MatchedMessage& m : mpe::analysis::matched_messages(*collected))
    endpoints.emplace_back(m.src, m.dst, m.send_time, m.recv_time, m.bytes);
  std::sort(endpoints.begin(), endpoints.end());
  EXPECT_EQ(endpoints, kTwoThreadTruth);
  // The rebuilt unexpected queue counts the sends its endpoints did not flag as cancelled, and
  // the ends without a partner.
  auto rebuilt = mpe::analysis::umq::rebuild(*file);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
  EXPECT_EQ(rebuilt->messages, 3u);
  EXPECT_EQ(rebuilt->unmatched, 1u);
  std::filesystem::remove(path);
}

}  // namespace
