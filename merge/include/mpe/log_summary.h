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

struct SummaryOptions {
  // Pair the message ends after this many were added: often enough that the ends not yet settled
  // stay small (24 MB), seldom enough that visiting their keys costs little per end. Tests make it
  // small to exercise settling on small logs.
  size_t ends_per_settle = size_t{1} << 20;
};

// Summarizes `file` in one time-ordered pass, handing every decoded chunk to `also_feed` too
// (chunks by start time: a consumer sees each timeline's chunks oldest first, but timelines
// interleaved). Errors: a chunk's (corrupt, truncated, io-error).
StatusOr<LogSummary> summarize(const LogFile& file, const std::vector<ChunkConsumer>& also_feed = {},
                               const SummaryOptions& options = {});

}  // namespace mpe::format
