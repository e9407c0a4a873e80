// The streaming wait-state analysis (analyze(file): a replay in time order holding only what is in
// flight, waits_replay.cpp) against the in-memory one (analyze(file, collected): every endpoint
// collected, then measured), which `mpe waits` printed before and upshot still uses: every figure
// and every instance must be equal. On generated runs whose ranks have two threads and many chunks,
// blocking, synchronous and rendezvous sends, nonblocking receives completed by Wait and Waitall,
// cancels, peers the definitions do not know, blocking and nonblocking collectives of every
// pattern (some ranks skipping one, so that instances disagree), records logged out of time order
// and clock offsets that run messages backward (the second replay on the repaired clocks); settling
// after every end, every 7 and every million; spread over 2, 3 and 5 processes (threads here); and
// on the golden logs of every format version.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "endpoints.h"
#include "mpe/chunk_codec.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "mpe/records.h"
#include "mpe/umq.h"
#include "mpe/waits.h"
#include "random_run.h"
#include "thread_peers.h"

using namespace mpe::format;
namespace waits = mpe::analysis::waits;

namespace {

enum : uint16_t {
  kInit,
  kSend,
  kSsend,
  kIsend,
  kRecv,
  kIrecv,
  kWait,
  kWaitall,
  kBarrier,
  kAllreduce,
  kBcast,
  kReduce,
  kIbarrier,
  kIallreduce
};
constexpr uint64_t kEagerLimit = 1000;

// Writes a random run in random_run.h's frame: only thread 0 calls collectives, in a schedule every
// rank shares but now and then skips a step of.
std::string write_waits_run(uint32_t seed, uint32_t ranks, int64_t skew) {
  std::mt19937 rng(seed);
  auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  const std::string path = ::testing::TempDir() + "waits_replay_" + std::to_string(getpid()) + "_" +
                           std::to_string(seed) + ".mpelog";
  auto records_of = [&](uint32_t r, uint32_t thread) {
    std::vector<Record> recs;
    uint64_t t = 1000 + pick(50);
    uint32_t serial = 0;
    auto state = [&](uint16_t cat, uint64_t start, uint64_t length) {
      recs.push_back(StateRecord{start, cat, 0, 0, length}.to_record());
    };
    struct Open {
      int32_t peer, tag;
      uint32_t comm, serial;
    };
    std::vector<Open> open;  // nonblocking receives not yet completed
    auto complete_open = [&](uint16_t cat) {
      const uint64_t length = 1 + pick(60);
      state(cat, t, length);
      for (const Open& o : open) {
        recs.push_back(RequestDoneRecord{{t + length, cat, o.serial, RequestWhat::kRecv}}.to_record());
        recs.push_back(RecvRecord{t + length, cat, o.peer, o.tag, o.comm, 8}.to_record());
      }
      open.clear();
      t += length;
    };
    if (thread == 0) state(kInit, t, 5);
    for (uint32_t step = 0; step < 80; ++step) {
      t += 1 + pick(40);
      std::mt19937 schedule(seed * 1000 + step);  // the same on every rank
      const uint32_t collective = schedule() % 4 == 0 ? 1 + schedule() % 6 : 0;
      const uint32_t coll_comm = schedule() % 2;
      if (thread == 0 && collective != 0) {
        if (pick(25) == 0) continue;  // this rank skips the step: later instances disagree
        const uint16_t cats[] = {kBarrier, kAllreduce, kBcast, kReduce, kIbarrier, kIallreduce};
        const uint16_t cat = cats[collective - 1];
        const int32_t root = cat == kBcast || cat == kReduce ? static_cast<int32_t>(step % ranks) : -1;
        if (cat == kIbarrier || cat == kIallreduce) {
          state(cat, t, 1);
          recs.push_back(CollectiveRecord{t, cat, root, coll_comm, 8, 8}.to_record());
          recs.push_back(RequestPostRecord{{t, cat, ++serial, RequestWhat::kCollective}}.to_record());
          t += 2 + pick(30);
          const uint64_t length = 1 + pick(50);
          state(kWait, t, length);
          recs.push_back(
              RequestDoneRecord{{t + length, kWait, serial, RequestWhat::kCollective}}.to_record());
          t += length;
        } else {
          const uint64_t length = 2 + pick(60);
          state(cat, t, length);
          recs.push_back(CollectiveRecord{t, cat, root, coll_comm, 8, 8}.to_record());
          t += length;
        }
        continue;
      }
      const int32_t peer = static_cast<int32_t>(pick(ranks));
      const int32_t tag = static_cast<int32_t>(pick(2));
      const uint32_t comm = pick(7) == 0 ? 7u : pick(2);  // 7: a communicator the rank never defined
      switch (pick(10)) {
        case 0:
        case 1: {  // a standard send, now and then above the eager limit
          const uint64_t bytes = pick(3) == 0 ? kEagerLimit + 1 : 8u + pick(100);
          state(kSend, t, 3 + pick(20));
          recs.push_back(SendRecord{t, kSend, peer, tag, comm, bytes}.to_record());
          break;
        }
        case 2:
          state(kSsend, t, 3 + pick(20));
          recs.push_back(SendRecord{t, kSsend, peer, tag, comm, 8}.to_record());
          break;
        case 3:
        case 4: {
          const uint64_t length = 4 + pick(40);
          state(kRecv, t, length);
          recs.push_back(RecvRecord{t + length, kRecv, peer, tag, comm, 8u + pick(100)}.to_record());
          break;
        }
        case 5:  // a nonblocking receive, completed later with the others open
          state(kIrecv, t, 1);
          recs.push_back(RequestPostRecord{{t, kIrecv, ++serial, RequestWhat::kRecv}}.to_record());
          open.push_back(Open{peer, tag, comm, serial});
          break;
        case 6:
          if (!open.empty()) complete_open(open.size() == 1 ? kWait : kWaitall);
          break;
        case 7:  // an Isend and, sometimes, its cancel
          state(kIsend, t, 2);
          recs.push_back(SendRecord{t, kIsend, peer, tag, comm, 16}.to_record());
          if (pick(2)) recs.push_back(SendCancelRecord{t + 1 + pick(3), kWait, peer, tag, comm}.to_record());
          break;
        case 8:  // a call whose state record comes after what it logged, ending later
          recs.push_back(RecvRecord{t + 9, kRecv, peer, tag, comm, 4}.to_record());
          state(kRecv, t, 9);
          break;
        default:
          t += pick(200);  // computing
          break;
      }
    }
    if (!open.empty()) complete_open(kWaitall);
    return recs;
  };
  std::vector<Category> categories = mpi_categories(
      {"MPI_Init", "MPI_Send", "MPI_Ssend", "MPI_Isend", "MPI_Recv", "MPI_Irecv", "MPI_Wait", "MPI_Waitall",
       "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Ibarrier", "MPI_Iallreduce"});
  mpe::testing::write_random_run(path, "waits_replay", seed, ranks, skew, rng, records_of,
                                 std::move(categories));
  return path;
}

bool same_instance(const waits::Instance& a, const waits::Instance& b) {
  return a.pattern == b.pattern && a.rank == b.rank && a.thread == b.thread && a.cat == b.cat &&
         a.start == b.start && a.end == b.end && a.state_start == b.state_start &&
         a.state_end == b.state_end && a.site == b.site && a.culprit == b.culprit &&
         a.culprit_thread == b.culprit_thread && a.culprit_cat == b.culprit_cat &&
         a.culprit_time == b.culprit_time && a.culprit_state_start == b.culprit_state_start &&
         a.culprit_state_end == b.culprit_state_end && a.send_time == b.send_time &&
         a.recv_time == b.recv_time;
}

void expect_same(const waits::Report& want, const waits::Report& got, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.ranks, want.ranks);
  EXPECT_EQ(got.records, want.records);
  EXPECT_EQ(got.unmatched, want.unmatched);
  EXPECT_EQ(got.mpi_ns, want.mpi_ns);
  EXPECT_EQ(got.mpi_per_rank, want.mpi_per_rank);
  for (int p = 0; p < waits::kPatternCount; ++p) {
    SCOPED_TRACE(waits::pattern_key(static_cast<waits::Pattern>(p)));
    const waits::PatternTotal& a = want.patterns[p];
    const waits::PatternTotal& b = got.patterns[p];
    EXPECT_EQ(b.ns, a.ns);
    EXPECT_EQ(b.instances, a.instances);
    EXPECT_EQ(b.per_rank, a.per_rank);
    ASSERT_EQ(b.per_site.size(), a.per_site.size());
    for (auto i = a.per_site.begin(), j = b.per_site.begin(); i != a.per_site.end(); ++i, ++j) {
      EXPECT_EQ(j->first, i->first);
      EXPECT_EQ(j->second.ns, i->second.ns);
      EXPECT_EQ(j->second.instances, i->second.instances);
    }
  }
  EXPECT_EQ(got.blame, want.blame);
  ASSERT_EQ(got.instances.size(), want.instances.size());
  for (size_t i = 0; i < want.instances.size(); ++i)
    EXPECT_TRUE(same_instance(got.instances[i], want.instances[i])) << "instance " << i;
}

waits::Options with_instances(size_t ends_per_settle) {
  waits::Options options;
  options.keep_instances = true;
  options.eager_limit = kEagerLimit;
  options.ends_per_settle = ends_per_settle;
  return options;
}

// The in-memory analysis of the whole file.
waits::Report in_memory(const LogFile& file) {
  mpe::analysis::ScanOptions scan;
  scan.eager_limit = kEagerLimit;
  auto collected = mpe::analysis::collect(file, scan);
  EXPECT_TRUE(collected.ok());
  auto report = waits::analyze(file, **collected, with_instances(0));
  EXPECT_TRUE(report.ok());
  return *report;
}

void expect_replay_is_in_memory(const std::string& path, const std::string& what) {
  auto file = LogFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const waits::Report want = in_memory(*file);
  for (size_t every : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    auto got = waits::analyze(*file, with_instances(every));
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_same(want, *got, what + ", settling every " + std::to_string(every));
  }
}

int64_t skew_of(uint32_t seed) { return seed % 3 == 0 ? 0 : seed % 3 == 1 ? 30 : 400; }

TEST(WaitsReplay, EqualsInMemoryOnRandomRuns) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::string path = write_waits_run(seed, 3 + seed % 4, skew_of(seed));
    expect_replay_is_in_memory(path, "seed " + std::to_string(seed));
    std::filesystem::remove(path);
  }
}

TEST(WaitsReplay, RandomRunsExerciseWhatTheyClaim) {
  // Every pattern, disagreeing instances and unknown peers (unmatched), and clocks repaired.
  std::array<uint64_t, waits::kPatternCount> instances{};
  uint64_t unmatched = 0;
  bool shifted = false;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::string path = write_waits_run(seed, 3 + seed % 4, skew_of(seed));
    auto file = LogFile::open(path);
    ASSERT_TRUE(file.ok());
    mpe::analysis::ScanOptions scan;
    scan.eager_limit = kEagerLimit;
    auto collected = mpe::analysis::collect(*file, scan);
    ASSERT_TRUE(collected.ok());
    for (int64_t d : (*collected)->shift) shifted |= d != 0;
    const waits::Report report = in_memory(*file);
    for (int p = 0; p < waits::kPatternCount; ++p) instances[p] += report.patterns[p].instances;
    unmatched += report.unmatched;
    std::filesystem::remove(path);
  }
  for (int p = 0; p < waits::kPatternCount; ++p)
    EXPECT_GT(instances[p], 0u) << waits::pattern_key(static_cast<waits::Pattern>(p));
  EXPECT_GT(unmatched, 0u);
  EXPECT_TRUE(shifted);
}

TEST(WaitsReplay, EqualsInMemoryOnGoldenLogs) {
  const std::filesystem::path dir = std::filesystem::path(MPE_GOLDEN_DIR);
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".mpelog") {
      expect_replay_is_in_memory(entry.path().string(), entry.path().filename().string());
      ++logs;
    }
  EXPECT_GE(logs, 3);
}

// Spread over 2, 3 and 5 processes (threads here), process 0's report is the in-memory one, and
// the others' are empty; keys paired at every chunk of their ranks, and seldom.
TEST(WaitsReplay, SpreadOverProcessesEqualsInMemory) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::string path = write_waits_run(seed, 3 + seed % 4, skew_of(seed));
    auto file = LogFile::open(path);
    ASSERT_TRUE(file.ok());
    const waits::Report want = in_memory(*file);
    for (int m : {2, 3, 5})
      for (size_t every : {size_t{1}, size_t{1} << 20}) {
        mpe::testing::ThreadPeers::Shared shared(m);
        std::vector<mpe::StatusOr<waits::Report>> got(static_cast<size_t>(m), mpe::Status());
        std::vector<std::thread> processes;
        for (int p = 0; p < m; ++p)
          processes.emplace_back([&, p] {
            mpe::testing::ThreadPeers peers(shared, p);
            waits::Options options = with_instances(every);
            options.peers = &peers;
            got[static_cast<size_t>(p)] = waits::analyze(*file, options);
          });
        for (std::thread& t : processes) t.join();
        for (const auto& g : got) ASSERT_TRUE(g.ok()) << g.status().to_string();
        expect_same(want, *got[0],
                    "seed " + std::to_string(seed) + " over " + std::to_string(m) + ", settling every " +
                        std::to_string(every));
        EXPECT_EQ(got[1]->records, 0u);
        EXPECT_TRUE(got[1]->instances.empty());
      }
    std::filesystem::remove(path);
  }
}

// `mpe umq`'s streaming rebuild (the replay's pairs through an external sort) gives what the
// in-memory rebuild gives (keep_series takes that path): every rank's longest queue, its call
// sites with their counts, peers and communicator, and the totals; with everything held, and
// with a sort budget of a few items (hundreds of runs, merged in several levels).
void expect_streamed_umq_is_in_memory(const std::string& path, uint64_t threshold, const std::string& what) {
  namespace umq = mpe::analysis::umq;
  SCOPED_TRACE(what + ", threshold " + std::to_string(threshold));
  auto file = LogFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  umq::Options in_memory;
  in_memory.threshold = threshold;
  in_memory.keep_series = true;
  auto want = umq::rebuild(*file, in_memory);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  auto sorted_sites = [](std::vector<umq::SiteRecord> sites) {
    std::vector<std::string> out;
    for (const umq::SiteRecord& r : sites) {
      std::string line = r.mpi_function + " " + r.communicator + " " + std::to_string(r.occurrences) + " " +
                         std::to_string(r.sum_length) + " " + std::to_string(r.max_length) + " frames " +
                         std::to_string(r.stack.size()) + (r.stack.empty() ? "" : " " + r.stack[0].function);
      std::vector<std::string> peers;  // in the order first met: the reports sort them
      for (const umq::PeerCount& p : r.peers)
        peers.push_back(" peer " + std::to_string(p.peer) + ":" + std::to_string(p.times_top) + "/" +
                        std::to_string(p.max_queued));
      std::sort(peers.begin(), peers.end());
      for (const std::string& p : peers) line += p;
      out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  for (size_t budget : {size_t{256} << 20, 4 * sizeof(int64_t) * 6}) {
    umq::Options streamed;
    streamed.threshold = threshold;
    streamed.sort_memory = budget;
    auto got = umq::rebuild(*file, streamed);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    SCOPED_TRACE("sort budget " + std::to_string(budget));
    EXPECT_EQ(got->max_length, want->max_length);
    EXPECT_EQ(got->records, want->records);
    EXPECT_EQ(got->posts, want->posts);
    EXPECT_EQ(got->unknown_posts, want->unknown_posts);
    EXPECT_EQ(got->messages, want->messages);
    EXPECT_EQ(got->unexpected, want->unexpected);
    EXPECT_EQ(got->unmatched, want->unmatched);
    ASSERT_EQ(got->sites.size(), want->sites.size());
    for (size_t r = 0; r < got->sites.size(); ++r)
      EXPECT_EQ(sorted_sites(got->sites[r]), sorted_sites(want->sites[r])) << "rank " << r;
  }
}

TEST(UmqStreaming, EqualsInMemoryOnRandomAndGoldenRuns) {
  uint64_t unexpected = 0, sites = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const std::string path = write_waits_run(seed, 3 + seed % 4, skew_of(seed));
    for (uint64_t threshold : {0, 1, 3})
      expect_streamed_umq_is_in_memory(path, threshold, "seed " + std::to_string(seed));
    auto file = LogFile::open(path);
    auto rebuilt = mpe::analysis::umq::rebuild(*file, {0});
    ASSERT_TRUE(rebuilt.ok());
    unexpected += rebuilt->unexpected;
    for (const auto& rank : rebuilt->sites) sites += rank.size();
    std::filesystem::remove(path);
  }
  EXPECT_GT(unexpected, 100u);  // the runs queue messages and meet long queues
  EXPECT_GT(sites, 20u);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(MPE_GOLDEN_DIR)))
    if (entry.path().extension() == ".mpelog")
      expect_streamed_umq_is_in_memory(entry.path().string(), 0, entry.path().filename().string());
}

}  // namespace
