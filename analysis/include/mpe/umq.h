// The unexpected-message queue rebuilt from a logfile, for MPIs without an MPI_T variable for it
// (`mpe umq`, upshot's rebuilt counter track). It yields libumq's report (umq_report.h) and, per
// rank, the queue length over time.
//
// Design.
//   Pass 1 is the wait-state analysis's (endpoints.h): every send with its entry, every receive
//   with its completion and its post (a blocking receive's entry, an MPI_Irecv's kRequestPost),
//   matched per (communicator, source, destination, tag) in order, MPI's non-overtaking rule
//   (the log's receive records carry the actual source and tag, so wildcard receives match too),
//   with the reader's causality shifts.
//   Pass 2 sweeps each (receiving rank, communicator): a message joins the queue when its send
//   began, if its receive was not yet posted then, and leaves at its receive's post. At each
//   receive post the length is the messages in the queue, the one this receive takes included (as
//   libumq reads the variable at the receive's entry, before it matches).
//
// What it approximates (docs/umq.md): arrival is taken as the send's start, so a message in flight
// counts early (over-counting by what is in flight, ~1 µs per message on a node); a rendezvous
// (large) message is counted as queued from its send's start, while an MPI queues only its
// small ready-to-send header and moves the data after the match (the length is the MPI's, the
// bytes are not); receives whose post the log does not give (logs without request records, OTF2
// imports) are taken as posted at the entry of the call that completed them, which over-counts;
// probes read the queue in libumq but are not posts here; sends the log never saw received (a
// log cut short) stay queued.
//
// Cost: the wait-state analysis's pass 1 (without collectives), then a counting sort of the posts
// and of the queued messages by (rank, communicator) and a sort by time within each: O(records +
// m log m) time for m messages, and memory about pass 1's (the endpoints are dropped as the posts
// and queued messages are made from them).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpe/endpoint_collector.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"
#include "umq_report.h"

namespace mpe::analysis::umq {

// libumq's default MPE_UMQ_THRESHOLD.
inline constexpr uint64_t kDefaultThreshold = 5;

// The queue length from `time` on (ns since the run's start, corrected as the reader's times).
struct Point {
  int64_t time;
  uint32_t length;
};

struct Options {
  uint64_t threshold = kDefaultThreshold;  // posts that meet a longer queue are counted
  bool keep_series = false;                // fill Rebuilt::series (upshot's counter track)
  // Asked between chunks when set: false stops the rebuild, which then returns kCancelled.
  std::function<bool()> keep_going;
  // Without keep_series, rebuild(file) streams: the posts and queued messages are sorted on disk
  // ($TMPDIR) beyond this many bytes held, so that its memory does not follow the log's size.
  size_t sort_memory = size_t{256} << 20;
};

struct Rebuilt {
  uint32_t ranks = 0;
  // Per rank: its call sites whose receive posts met a queue above the threshold, as libumq's
  // ranks report theirs (stacks from the log's call sites, peers as ranks in the communicator).
  std::vector<std::vector<SiteRecord>> sites;
  std::vector<uint64_t> max_length;  // per rank: the longest queue a receive post met
  // Per rank, with Options::keep_series: the length over all its communicators, one point where
  // it changes (a send to it begins, a receive posts), in time order.
  std::vector<std::vector<Point>> series;
  uint64_t records = 0;
  uint64_t posts = 0;          // receive posts the queue was measured at
  uint64_t unknown_posts = 0;  // of those, taken at the entry of the completing call (see above)
  uint64_t messages = 0;       // sends counted
  uint64_t unexpected = 0;     // of those, begun before their receive was posted
  uint64_t unmatched = 0;      // message ends without a partner
};

// Rebuilds the queue of every rank from a whole logfile. Without options.keep_series it streams:
// the wait-state replay (mpe/waits.h) pairs the messages holding only those in flight, and tells
// each pair to the rebuild, whose posts and queued messages go through an external sort by
// (receiver, communicator, time) into the same sweep as below. Errors: the reader's (corrupt,
// truncated, io-error, the temporary files'), kCancelled.
StatusOr<Rebuilt> rebuild(const format::LogFile& file, const Options& options = {});
// Rebuilds it from what an EndpointCollector collected from a pass over `file` that fed other
// consumers too (upshot's one decode), consuming it; options.keep_going is the pass's then.
StatusOr<Rebuilt> rebuild(const format::LogFile& file, analysis::Collected&& collected,
                          const Options& options = {});

// How the report's header names rebuilt lengths: "rebuilt from <file name>", per communicator.
VariableInfo rebuilt_variable(const std::string& path, uint64_t threshold);

}  // namespace mpe::analysis::umq
