// Wait states: who makes whom wait, from a logfile (Scalasca's patterns, plus nonblocking
// point-to-point and collectives), for `mpe waits` and upshot's overlay.
//
// Design. Two analyses share one scan (timeline_scan.h: which MPI call each message end and
// collective belongs to) and one measure (waits_tally.h: an instance from a matched message, a
// receive group or a collective instance), so they agree on every instance:
//   The replay (analyze(file), `mpe waits`) is Scalasca's forward replay: chunks in time order
//   (chunks_by_start); an end joins the replay's matcher (mpe/message_matcher.h's
//   ReplayMessageMatcher) once its call is known, and an end whose call never comes is final once
//   no chunk still to come starts before it. Once no chunk still to come starts before W, the
//   ends before W are paired: a pair gives Late Receiver at once and folds into its receive
//   group (the receives one call completed, in logged order per timeline) for Late Sender once
//   the group is closed and paired. A collective instance (communicator, k-th collective of each
//   member) is measured once its comm-size members have arrived. So memory follows what is in
//   flight (messages sent and not yet received, instances not yet complete, calls not yet
//   closed), not the records.
//   Spread over M processes (options.peers: `mpiexec -n M mpe waits LOG`), each replays the
//   chunks of the timelines it owns (mpe/replay_spread.h) in rounds; at each round's end the
//   sends go to the process that owns their receiver, and each collective member to the process
//   that owns its instance (a hash of communicator and k), with MPI's all-to-all. Process 0 adds
//   up the reports; every sum and list is ordered the same whoever measured it.
//   Messages that ran backward (a receive completing before its send began) give per rank pair
//   the tightest constraint; when they call for clock shifts (the reader's causality repair),
//   the replay runs again on the shifted clocks: a second pass only for such logs.
//   The in-memory analysis (analyze(file, collected)) measures what an EndpointCollector kept of
//   every end, for upshot, which decodes the log once for its model and this overlay.
//
// Invariant: every waiting interval lies inside the state that waits ([start, end] within
// [state_start, state_end]); an instance exists only when its waiting time is positive.
//
// Cost: one decode of every chunk (the reader's cost, ~20-50 ns per record; twice for a log whose
// clocks need repair), O(1) amortized per end; memory O(ends in flight), the in-memory
// analysis's O(e) for e endpoints. Nothing is O(ranks²): who
// made whom wait is kept per pair that waited (a hash map while measuring, a sorted list after),
// not as a ranks × ranks matrix (10^10 cells at 100,000 ranks, of which a run fills a sliver:
// neighbours, and the latest members of collectives).
//
// Failure modes: a damaged chunk stops the analysis with the reader's error. What the log cannot
// say is skipped, not guessed: an unmatched message end, a collective instance whose members
// disagree on the routine, a receive whose posting time is unknown (no Late Receiver for it),
// nonblocking collectives without completion records (logs before they were written). Spread,
// a process that fails says so at the next round's exchange and every process returns an error.
// Where the two analyses may differ: collectives on one communicator called from two threads of a
// rank (which MPI leaves to the program to order) are numbered in time order by the replay, in
// logged order of each thread by the in-memory analysis. A kSendCancel (which liblog no longer
// writes: it logs a cancelled request as a kRequestDone) logged in a later chunk than its send,
// after that send was paired, withdraws the latest send still unpaired instead (as in
// mpe/log_summary.h).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/endpoint_collector.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace mpe::format {
class SummaryPeers;
}
namespace mpe::analysis {
class MessageObserver;
}

namespace mpe::analysis::waits {

enum class Pattern : uint8_t {
  kLateSender,     // a receive-side call waits for a send that began later
  kLateReceiver,   // a synchronous or rendezvous send waits for its receive to be posted
  kWaitBarrier,    // Barrier (and Ibarrier's completion): latest member's entry - own entry
  kWaitNxN,        // Allreduce, Allgather(v), Alltoall(v/w), Reduce_scatter(_block), their I forms
  kLateBroadcast,  // Bcast, Scatter(v): root's entry - own entry, on the other members
  kEarlyReduce,    // Reduce, Gather(v): on the root, earliest other entry - own entry
};
inline constexpr int kPatternCount = 6;

// "late_sender", "late_receiver", "wait_barrier", "wait_nxn", "late_broadcast", "early_reduce".
const char* pattern_key(Pattern p);
// "Late Sender", "Late Receiver", "Wait at Barrier", "Wait at N×N", "Late Broadcast", "Early Reduce".
const char* pattern_name(Pattern p);

// One waiting interval: the part of a state (an MPI call) spent waiting for another rank.
// The 32-bit fields in pairs between the 64-bit ones: 104 bytes, no padding (the viewer holds
// every instance of a run while it lays them out).
struct Instance {
  Pattern pattern;
  uint32_t rank;  // who waits
  uint32_t thread;
  uint32_t cat;   // the call that waits: its category (MPI function)
  int64_t start;  // the waiting part, ns since the run's start (corrected, as the reader's)
  int64_t end;
  int64_t state_start;  // the call that waits
  int64_t state_end;
  uint32_t site;  // its run-wide call site (LogFile::callsites()), 0 when unknown
  // Who made it wait: the late sender, the late receiver, the last member to enter, the root.
  int32_t culprit = -1;  // world rank
  uint32_t culprit_thread = 0;
  uint32_t culprit_cat = 0;  // the category of the culprit's call (below)
  int64_t culprit_time = 0;  // when the culprit entered (send enter, receive post, collective entry)
  // The culprit's call that caused it (the late send's state, for Late Sender), when known.
  int64_t culprit_state_start = 0;
  int64_t culprit_state_end = 0;
  // Late Sender and Late Receiver: the message's send entry and receive completion (its arrow).
  int64_t send_time = 0;
  int64_t recv_time = 0;
};
static_assert(sizeof(Instance) == 104);

// The order of Report::instances: by (rank, thread, start).
inline bool by_timeline(const Instance& a, const Instance& b) {
  return a.rank != b.rank ? a.rank < b.rank : a.thread != b.thread ? a.thread < b.thread : a.start < b.start;
}

struct SiteTotal {
  int64_t ns = 0;
  uint64_t instances = 0;
};

struct PatternTotal {
  int64_t ns = 0;  // waiting time summed over instances
  uint64_t instances = 0;
  std::vector<int64_t> per_rank;                                // ns waited by each rank
  std::map<std::pair<uint32_t, uint32_t>, SiteTotal> per_site;  // (run-wide site, category) -> total
};

// What one rank's lateness cost another: one entry per (culprit, waiter) pair that waited.
struct Blame {
  uint32_t culprit;
  uint32_t waiter;
  int64_t ns;
  bool operator==(const Blame&) const = default;
};

struct Report {
  uint32_t ranks = 0;
  std::array<PatternTotal, kPatternCount> patterns;
  int64_t mpi_ns = 0;  // time in MPI calls (depth 0) over all ranks: shares are of this
  std::vector<int64_t> mpi_per_rank;
  std::vector<Blame> blame;         // with Options::keep_blame: the pairs that waited, by (culprit, waiter)
  std::vector<Instance> instances;  // with Options::keep_instances, in by_timeline order
  uint64_t records = 0;
  uint64_t unmatched = 0;  // message ends without a partner, collective instances skipped
};

struct Options {
  // Keep every instance (upshot's overlay); without it only the totals are built.
  bool keep_instances = false;
  // Keep who made whom wait (Report::blame); upshot, which does not show it, saves its memory.
  bool keep_blame = true;
  // A standard-mode blocking send of more bytes than this is taken to use a rendezvous (and can
  // be a Late Receiver); synchronous sends always are. MPICH and Open MPI switch at 16-64 KiB.
  uint64_t eager_limit = 65536;
  // Asked between chunks when set: false stops the analysis, which then returns kCancelled (a
  // viewer whose user opened another file).
  std::function<bool()> keep_going;
  // The streaming analysis (analyze(file)) alone pairs a chunk's rank's message keys after the
  // chunk once this many ends were added since it last paired (1: after every chunk, which costs a
  // visit of the rank's keys); tests vary it.
  size_t ends_per_settle = 1;
  // Spread the streaming analysis over these processes (`mpiexec -n M mpe waits LOG`; null: this
  // one alone): the report is process 0's, the same as one process makes; the others get an
  // empty one.
  format::SummaryPeers* peers = nullptr;
  // The streaming analysis also hands each chunk of its first replay to these (`mpe diff`'s tables,
  // from the same decode): every chunk, each timeline's in logged order, the timelines interleaved
  // by time; spread, only this process's chunks.
  std::vector<format::ChunkConsumer> also_feed;
  // Told every message of the streaming analysis, paired or left alone (analysis/src/
  // message_observer.h: `mpe umq`'s streaming rebuild). Not spread.
  MessageObserver* observer = nullptr;
};

// ns that culprit's lateness cost waiter, 0 when none: a binary search of report.blame.
int64_t blame_ns(const Report& report, uint32_t culprit, uint32_t waiter);
// Per rank, ns its lateness cost all the others: report.blame summed by culprit (report.ranks entries).
std::vector<int64_t> blame_by_culprit(const Report& report);

// Analyzes a whole logfile by a replay in time order that holds only what is in flight
// (waits_replay.cpp), spread over options.peers when given. Errors: the reader's (corrupt,
// truncated, io-error), kCancelled; spread, on every process when one of them fails.
StatusOr<Report> analyze(const format::LogFile& file, const Options& options = {});
// Analyzes what an EndpointCollector collected (with its collectives) from a pass over `file`
// that fed other consumers too (upshot's one decode); options.eager_limit and keep_going are the
// collector's and the pass's then. Sorts the collected collectives; the rest stays for
// analysis::umq::rebuild(). Errors: invalid-argument when the collectives were not collected.
StatusOr<Report> analyze(const format::LogFile& file, analysis::Collected& collected,
                         const Options& options = {});

}  // namespace mpe::analysis::waits
