// A logfile's summary in one streaming pass: what `mpe stat` prints (records, time range, threads,
// states per category and rank, events by kind, messages matched by the one rule, causality
// repair, one-sided operations), the same figures load_trace() gives, without holding the records.
//
// Design. The chunks are replayed in the order of their start (chunks_by_start): each timeline's
// chunks oldest first, so the per-timeline state (open user states) carries over as in
// load_trace(), and message ends are paired by the ReplayMessageMatcher (mpe/message_matcher.h)
// as the replay's time passes them, so only the ends in flight are held. What a summary counts
// is kept per rank or per category, never per record. When matched messages run backward (a
// receive ending before its send began), the causality repair is load_trace()'s: the per-rank
// shifts from the tightest constraint per rank pair (kept per key as the replay pairs), the time
// range from every rank's states and events moved by its shift; and when the shifts cannot meet
// every constraint (clocks that contradict each other), the messages are replayed once more to
// count the ones still backward.
// One difference from load_trace() is possible, on logs no current writer makes: a kSendCancel
// (liblog now logs a cancelled request as a kRequestDone) logged in a later chunk than its send,
// after that send was paired, withdraws the latest send still unpaired instead.
// Memory: the ends not yet paired (about one chunk's worth per timeline), the per-rank and
// per-category totals, and the one-sided records (kWinCreate, kRmaOp, kRmaComplete), which are
// matched at the end as load_trace() matches them (rare next to messages; noted in
// docs/FORMAT.md). Cost: one decode of each chunk plus O(1) per record.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/rma.h"
#include "mpe/status.h"

namespace mpe::format {

class LogFile;

struct LogSummary {
  uint64_t records = 0;
  int64_t t_begin = 0;  // ns since the start of the run, after any causality repair
  int64_t t_end = 0;
  uint32_t timelines = 0;
  std::map<uint32_t, uint32_t> threads;  // rank -> its timelines
  struct StateTotal {
    uint64_t count = 0;
    int64_t time = 0;  // ns
  };
  std::map<uint32_t, StateTotal> states;                         // by category id
  std::map<uint32_t, std::map<uint32_t, uint64_t>> rank_states;  // rank -> category id -> count
  uint64_t collectives = 0, markers = 0, user_events = 0, comm_creates = 0;
  // Messages, as load_trace()'s Trace counts them.
  uint64_t matched = 0;
  uint64_t unmatched_sends = 0;
  uint64_t unmatched_recvs = 0;
  uint64_t backward_messages = 0;           // after the causality repair
  uint64_t message_bytes = 0;               // of the matched messages, as sent
  std::vector<int64_t> causality_shift_ns;  // empty unless the repair ran
  RmaModel rma;
};

// The processes a summary is spread over (`mpiexec -n M mpe stat LOG`): the few collective calls
// it needs, given by the caller so that this library stays free of MPI (cli/summary_peers.cpp
// gives MPI's). Every process calls each of them the same number of times, in the same order.
class SummaryPeers {
 public:
  virtual ~SummaryPeers() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends out[p] to process p (out has size() entries); returns what each process sent here.
  virtual std::vector<std::string> all_to_all(const std::vector<std::string>& out) = 0;
  // Every process's `mine`, in process order, at process 0; empty elsewhere.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Process 0's `value`, on every process.
  virtual std::string broadcast(const std::string& value) = 0;
};

struct SummaryOptions {
  // Pair the message ends after this many were added: often enough that the ends not yet settled
  // stay small (24 MB), seldom enough that visiting their keys costs little per end. Tests make it
  // small to exercise settling on small logs.
  size_t ends_per_settle = size_t{1} << 20;
  // Spread over these processes (null: this one alone). The log's ranks are split among them by
  // the chunk index, each replays its own ranks' chunks, and the message ends go to the process
  // that owns their receiver, a round of exchanges per timeline's worth of chunks; process 0 gets
  // the summary, the same as one process makes.
  SummaryPeers* peers = nullptr;
};

// Summarizes `file` in one time-ordered pass, handing every decoded chunk to `also_feed` too
// (chunks by start time: a consumer sees each timeline's chunks oldest first, but timelines
// interleaved; spread over peers, each process's own chunks only). Spread, the summary is process
// 0's; the others return an empty one. Errors: a chunk's (corrupt, truncated, io-error), on every
// process when one of them fails.
StatusOr<LogSummary> summarize(const LogFile& file, const std::vector<ChunkConsumer>& also_feed = {},
                               const SummaryOptions& options = {});

}  // namespace mpe::format
