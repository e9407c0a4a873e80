// The streaming summary (mpe/log_summary.h) against load_trace(), the in-memory model whose
// figures `mpe stat` printed before: every figure must be equal. On generated logs whose ranks have
// two threads and many chunks, records logged out of time order, cancels, peers the definitions do
// not know, user states, one-sided operations, and clock offsets that run messages backward (the
// causality repair, including constraints that contradict each other), with the replay settling
// after every end and after a million; and on the golden logs of every format version. The replay's
// matcher is also checked against MessageMatcher on random streams of ends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_summary.h"
#include "mpe/log_writer.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"
#include "random_run.h"
#include "thread_peers.h"

using namespace mpe::format;

namespace {

// What load_trace() gives, in the summary's terms (what cmd_stat's tally read from the Trace).
LogSummary from_trace(const Trace& tr) {
  LogSummary s;
  s.records = tr.records;
  s.t_begin = tr.t_begin;
  s.t_end = tr.t_end;
  s.timelines = static_cast<uint32_t>(tr.timelines.size());
  for (const Timeline& t : tr.timelines) {
    ++s.threads[t.rank];
    for (const State& st : t.states) {
      ++s.states[st.cat].count;
      s.states[st.cat].time += st.end - st.start;
      ++s.rank_states[t.rank][st.cat];
    }
    for (const Event& e : t.events) {
      s.collectives += e.kind == RecordKind::kCollective;
      s.markers += e.kind == RecordKind::kMarker;
      s.user_events += e.kind == RecordKind::kUserEvent;
      s.comm_creates += e.kind == RecordKind::kCommCreate;
    }
  }
  s.matched = tr.messages.size();
  for (const Message& m : tr.messages) s.message_bytes += m.bytes;
  s.unmatched_sends = tr.unmatched_sends;
  s.unmatched_recvs = tr.unmatched_recvs;
  s.backward_messages = tr.backward_messages;
  s.causality_shift_ns = tr.causality_shift_ns;
  s.rma = tr.rma;
  return s;
}

void expect_same(const LogSummary& want, const LogSummary& got, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.records, want.records);
  EXPECT_EQ(got.t_begin, want.t_begin);
  EXPECT_EQ(got.t_end, want.t_end);
  EXPECT_EQ(got.timelines, want.timelines);
  EXPECT_EQ(got.threads, want.threads);
  ASSERT_EQ(got.states.size(), want.states.size());
  for (const auto& [cat, st] : want.states) {
    EXPECT_EQ(got.states.at(cat).count, st.count) << "category " << cat;
    EXPECT_EQ(got.states.at(cat).time, st.time) << "category " << cat;
  }
  EXPECT_EQ(got.rank_states, want.rank_states);
  EXPECT_EQ(got.collectives, want.collectives);
  EXPECT_EQ(got.markers, want.markers);
  EXPECT_EQ(got.user_events, want.user_events);
  EXPECT_EQ(got.comm_creates, want.comm_creates);
  EXPECT_EQ(got.matched, want.matched);
  EXPECT_EQ(got.message_bytes, want.message_bytes);
  EXPECT_EQ(got.unmatched_sends, want.unmatched_sends);
  EXPECT_EQ(got.unmatched_recvs, want.unmatched_recvs);
  EXPECT_EQ(got.backward_messages, want.backward_messages);
  EXPECT_EQ(got.causality_shift_ns, want.causality_shift_ns);
  EXPECT_EQ(got.rma.windows.size(), want.rma.windows.size());
  EXPECT_EQ(got.rma.unresolved, want.rma.unresolved);
  ASSERT_EQ(got.rma.transfers.size(), want.rma.transfers.size());
  for (size_t i = 0; i < want.rma.transfers.size(); ++i) {
    const RmaTransfer &a = want.rma.transfers[i], &b = got.rma.transfers[i];
    EXPECT_EQ(std::tie(a.origin, a.target, a.kind, a.sent, a.received, a.start, a.complete),
              std::tie(b.origin, b.target, b.kind, b.sent, b.received, b.start, b.complete))
        << "transfer " << i;
  }
}

void expect_summary_is_load_trace(const std::string& path, const std::string& what) {
  auto file = LogFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto tr = load_trace(*file);
  ASSERT_TRUE(tr.ok()) << tr.status().to_string();
  const LogSummary want = from_trace(*tr);
  for (size_t every : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    SummaryOptions options;
    options.ends_per_settle = every;
    auto got = summarize(*file, {}, options);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_same(want, *got, what + ", settling every " + std::to_string(every) + " ends");
  }
}

enum : uint16_t { kInit, kSend, kIsend, kRecv, kWait, kBarrier, kPut, kFence, kWinCreate };
constexpr uint16_t kUserState = kUserCategoryBase;  // starts at this id, ends at +1
constexpr uint16_t kLoneEvent = kUserCategoryBase + 4;

// A random run of `ranks` ranks (the even ones with two threads), whose clocks are offset by up to
// `skew` ticks so that some messages run backward, written in chunks of 1 to 12 records.
std::string write_random_log(uint32_t seed, uint32_t ranks, int64_t skew) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const std::string path =
      ::testing::TempDir() + "summary_" + std::to_string(getpid()) + "_" + std::to_string(seed) + ".mpelog";
  auto records_of = [&](uint32_t r, uint32_t thread) {
    std::vector<Record> recs;
    uint64_t t = 1000 + pick(50);
    auto state = [&](uint16_t cat, uint64_t start, uint64_t length) {
      recs.push_back(StateRecord{start, cat, 0, 0, length}.to_record());
    };
    if (thread == 0) {
      state(kInit, t, 5);
      recs.push_back(WinCreateRecord{t + 5, kWinCreate, 0, 0, 0, 64}.to_record());
    }
    for (int i = 0; i < 60; ++i) {
      t += 1 + pick(40);
      const int32_t peer = static_cast<int32_t>(pick(ranks));
      const int32_t tag = static_cast<int32_t>(pick(2));
      const uint32_t comm = pick(5) == 0 ? 7u : pick(2);  // 7: a communicator the rank never defined
      switch (pick(9)) {
        case 0:
        case 1:
          state(kSend, t, 3);
          recs.push_back(SendRecord{t, kSend, peer, tag, comm, 8u + pick(100)}.to_record());
          break;
        case 2:
        case 3:
          state(kWait, t, 4);
          recs.push_back(RecvRecord{t + 4, kWait, peer, tag, comm, 8u + pick(100)}.to_record());
          break;
        case 4:  // an Isend and, sometimes, its cancel
          state(kIsend, t, 2);
          recs.push_back(SendRecord{t, kIsend, peer, tag, comm, 16}.to_record());
          if (pick(2)) recs.push_back(SendCancelRecord{t + 1 + pick(3), kWait, peer, tag, comm}.to_record());
          break;
        case 5:  // a user state around a nested call written before it (logged out of time order)
          recs.push_back(UserEventRecord{t, kUserState, 0, 0}.to_record());
          state(kBarrier, t + 2, 3);
          recs.push_back(CollectiveRecord{t + 2, kBarrier, -1, 0, 0, 0}.to_record());
          recs.push_back(UserEventRecord{t + 6, kUserState + 1u, 0, 0}.to_record());
          if (pick(3) == 0) recs.push_back(UserEventRecord{t + 1, kLoneEvent, 0, 0}.to_record());
          break;
        case 6:  // a call whose state record comes after what it logged, ending later
          recs.push_back(RecvRecord{t + 9, kRecv, peer, tag, comm, 4}.to_record());
          state(kRecv, t, 9);
          break;
        case 7:
          state(kPut, t, 2);
          recs.push_back(RmaOpRecord{t, kPut, peer, 0, 32, 0}.to_record());
          break;
        default:
          state(kFence, t, 2);
          recs.push_back(RmaCompleteRecord{t + 2, kFence, -1, 0}.to_record());
          break;
      }
    }
    return recs;
  };
  std::vector<Category> categories =
      mpi_categories({"MPI_Init", "MPI_Send", "MPI_Isend", "MPI_Recv", "MPI_Wait", "MPI_Barrier", "MPI_Put",
                      "MPI_Win_fence", "MPI_Win_create"});
  categories.push_back(Category{kUserState, CategoryKind::kState, kUserState + 1u, 0xC04040, "phase", {}});
  categories.push_back(Category{kLoneEvent, CategoryKind::kEvent, 0, 0x40C040, "mark", {}});
  mpe::testing::write_random_run(path, "summary", seed, ranks, skew, rng, records_of, std::move(categories));
  return path;
}

TEST(LogSummary, EqualsLoadTraceOnRandomRuns) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const int64_t skew = seed % 3 == 0 ? 0 : seed % 3 == 1 ? 30 : 400;
    const std::string path = write_random_log(seed, 3 + seed % 4, skew);
    expect_summary_is_load_trace(path, "seed " + std::to_string(seed) + ", skew " + std::to_string(skew));
    std::filesystem::remove(path);
  }
}

TEST(LogSummary, RandomRunsExerciseWhatTheyClaim) {
  // The generated runs must reach the paths compared above: backward messages repaired, shifts
  // that leave some backward (the second replay), cancels, unknown peers, one-sided transfers.
  bool repaired = false, still_backward = false;
  uint64_t unknown = 0, transfers = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::string path = write_random_log(seed, 3 + seed % 4,
                                              seed % 3 == 0   ? 0
                                              : seed % 3 == 1 ? 30
                                                              : 400);
    auto file = LogFile::open(path);
    ASSERT_TRUE(file.ok());
    auto s = summarize(*file);
    ASSERT_TRUE(s.ok());
    repaired |= !s->causality_shift_ns.empty();
    still_backward |= s->backward_messages > 0;
    unknown += s->unmatched_sends;
    transfers += s->rma.transfers.size();
    std::filesystem::remove(path);
  }
  EXPECT_TRUE(repaired);
  EXPECT_TRUE(still_backward);
  EXPECT_GT(unknown, 0u);
  EXPECT_GT(transfers, 0u);
}

TEST(LogSummary, EqualsLoadTraceOnGoldenLogs) {
  const std::filesystem::path dir = std::filesystem::path(MPE_SOURCE_DIR) / "tests/merge/golden";
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".mpelog") {
      expect_summary_is_load_trace(entry.path().string(), entry.path().filename().string());
      ++logs;
    }
  EXPECT_GE(logs, 3);
}

// Spread over 2, 3 and 5 processes (threads here), process 0's summary is load_trace()'s, and the
// others return empty ones.
TEST(LogSummary, SpreadOverProcessesEqualsLoadTrace) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::string path = write_random_log(seed, 3 + seed % 4, seed % 3 == 0 ? 0 : 400);
    auto file = LogFile::open(path);
    ASSERT_TRUE(file.ok());
    auto tr = load_trace(*file);
    ASSERT_TRUE(tr.ok());
    for (int m : {2, 3, 5}) {
      mpe::testing::ThreadPeers::Shared shared(m);
      std::vector<mpe::StatusOr<LogSummary>> got(static_cast<size_t>(m), mpe::Status());
      std::vector<std::thread> processes;
      for (int p = 0; p < m; ++p)
        processes.emplace_back([&, p] {
          mpe::testing::ThreadPeers peers(shared, p);
          SummaryOptions options;
          options.peers = &peers;
          got[static_cast<size_t>(p)] = summarize(*file, {}, options);
        });
      for (std::thread& t : processes) t.join();
      for (const auto& g : got) ASSERT_TRUE(g.ok()) << g.status().to_string();
      expect_same(from_trace(*tr), *got[0], "seed " + std::to_string(seed) + " over " + std::to_string(m));
      EXPECT_EQ(got[1]->records, 0u);
    }
    std::filesystem::remove(path);
  }
}

// The replay's matcher against MessageMatcher: random ends on two keys from three timelines (two
// sending threads and a receiver), each a run of chunks whose starts increase, handed out by start
// as chunks_by_start() does and settled before each chunk at the least time still to come; a send
// is sometimes cancelled right after it is logged. The pairs and the ends left over must be the
// same as MessageMatcher's on the ends in logged order.
TEST(ReplayMessageMatcher, PairsAsMessageMatcherDoes) {
  struct End {
    int64_t time;
    int id;
  };
  struct Added {
    int64_t chunk_start;
    uint64_t seq;
    bool send;
    MessageKey key;
    End end;
    bool cancel;
  };
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<Added> all;
    int id = 0;
    for (uint64_t timeline = 0; timeline < 3; ++timeline) {
      int64_t base = static_cast<int64_t>(rng() % 40);
      for (uint64_t c = 0; c < 3; ++c) {
        const uint64_t chunk = timeline * 3 + c;
        const size_t first = all.size();
        for (uint32_t pos = 0; pos < 6; ++pos) {
          const MessageKey key{0, 0, 1, static_cast<int32_t>(rng() % 2)};
          const End end{base + static_cast<int64_t>(rng() % 30), id++};
          all.push_back(Added{0, chunk << 32 | pos, timeline < 2, key, end, false});
          if (timeline < 2 && rng() % 5 == 0)
            all.push_back(Added{0, chunk << 32 | ++pos, true, key, end, true});
        }
        int64_t least = INT64_MAX;
        for (size_t i = first; i < all.size(); ++i) least = std::min(least, all[i].end.time);
        for (size_t i = first; i < all.size(); ++i) all[i].chunk_start = least;
        base += static_cast<int64_t>(rng() % 25);
      }
    }
    // The reference: everything in logged order (seq), then matched.
    MessageMatcher<End> reference;
    for (const Added& a : all) {
      if (a.cancel)
        reference.cancel_latest_send(a.key);
      else if (a.send)
        reference.add_send(a.key, a.end);
      else
        reference.add_recv(a.key, a.end);
    }
    std::vector<std::tuple<MessageKey, int, int>> want, got;
    std::vector<std::tuple<MessageKey, size_t, size_t>> want_left, got_left;
    reference.match(
        [&](const MessageKey& k, const End& s, const End& r) { want.emplace_back(k, s.id, r.id); },
        [&](const MessageKey& k, size_t s, size_t r) {
          if (s || r) want_left.emplace_back(k, s, r);
        });
    // The replay: chunks by start (a timeline's own chunks in order), settled between chunks.
    std::vector<int64_t> timeline_start(3, INT64_MIN);
    for (Added& a : all) {
      int64_t& t = timeline_start[(a.seq >> 32) / 3];
      if ((a.seq & 0xffffffff) == 0) t = std::max(t, a.chunk_start);
      a.chunk_start = t;
    }
    std::stable_sort(all.begin(), all.end(), [](const Added& a, const Added& b) {
      return std::tie(a.chunk_start, a.seq) < std::tie(b.chunk_start, b.seq);
    });
    ReplayMessageMatcher<End> replay;
    auto on_pair = [&](const MessageKey& k, const End& s, const End& r) { got.emplace_back(k, s.id, r.id); };
    for (size_t i = 0; i < all.size(); ++i) {
      const Added& a = all[i];
      if (a.cancel)
        replay.cancel_latest_send(a.key, a.seq);
      else
        replay.add(a.send ? MessageSide::kSend : MessageSide::kRecv, a.key, a.seq, a.end);
      if (i + 1 < all.size() && all[i + 1].seq >> 32 != a.seq >> 32) {
        int64_t still_to_come = INT64_MAX;
        for (size_t j = i + 1; j < all.size(); ++j) still_to_come = std::min(still_to_come, all[j].end.time);
        replay.settle(still_to_come, on_pair);
      }
    }
    replay.finish(on_pair, [&](const MessageKey& k, size_t s, size_t r) { got_left.emplace_back(k, s, r); });
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want) << "round " << round;
    ASSERT_EQ(got_left, want_left) << "round " << round;
  }
}

}  // namespace
