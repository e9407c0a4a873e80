// What a viewer knows about a running job: the latest frame of every rank, the traffic of the
// last intervals, the profile so far, what was lost, and the hang diagnosis. `mpe top` and
// upshot's live mode both read the job through this one model, so they cannot disagree.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mpe/live_wire.h"
#include "mpe/message_matcher.h"

namespace mpe::live_stream {

// One rank's current call, resolved for display (and for the hang diagnosis).
struct NowRow {
  int32_t rank = 0;
  uint32_t thread = 0;
  bool in_mpi = false;
  double seconds = 0;  // in this call (or in the application) as of the rank's last frame
  std::string routine, callsite, comm;
  std::string host;
  int32_t peer = peer::kUnknown, tag = -1, root = -1;
  bool stuck = false;  // longer than the threshold in a blocking call
};

// A cycle of ranks each waiting for the next (the last waits for the first).
struct Deadlock {
  std::vector<NowRow> cycle;
};

// Ranks blocked, directly or through others, on one rank that is not blocked (computing, or in
// a call that waits for nobody here) or that is in another collective.
struct Stuck {
  NowRow holder;
  std::vector<int32_t> waiting;  // ranks held, sorted
};

struct Diagnosis {
  std::vector<Deadlock> deadlocks;
  std::vector<Stuck> stuck;
  bool empty() const { return deadlocks.empty() && stuck.empty(); }
};

// Sends between two ranks over the kept intervals.
struct PairTraffic {
  int32_t from = 0, to = 0;
  uint64_t count = 0, bytes = 0;
};

// An arrow: a send with the receive it was matched to, if that arrived yet (recv_ns 0 if not).
struct Arrow {
  int32_t from = 0, to = 0, tag = 0;
  uint64_t send_ns = 0, recv_ns = 0, bytes = 0;
};

// A state for a live timeline: a rank in a routine (or the application) over a span.
struct LiveState {
  int32_t rank = 0;
  uint64_t start_ns = 0, end_ns = 0;
  std::string routine;  // "" = application
};

class JobView {
 public:
  // `keep_seconds`: how much traffic, arrows and states are kept (the live timeline's window).
  // `traffic_seconds`: the window of traffic_pairs().
  explicit JobView(double keep_seconds = 60.0, double traffic_seconds = 5.0)
      : keep_ns_(static_cast<uint64_t>(keep_seconds * 1e9)),
        traffic_ns_(static_cast<uint64_t>(traffic_seconds * 1e9)) {}

  // The one reader of the stream, for `mpe top` and upshot alike: decodes a message from the relay
  // and folds it in (a rank's frame, or the job's end); what is not one of ours is counted as
  // rejected.
  void ingest(const void* data, size_t n);
  // How long a stream must be quiet, its .live file gone, before the job counts as over.
  static constexpr double kAbandonedQuietSeconds = 3.0;
  // Ends the view of a job whose end message was lost: a viewer far behind may lose it with the
  // frames, and `mpe run` deletes the .live file when the job is over, so a file gone and a stream
  // quiet for kAbandonedQuietSeconds end it (JobEnd::kExitUnknown). True when it ended it now.
  bool end_if_abandoned(bool live_file_exists, double quiet_seconds);

  // Adds a rank's frame; old frames (a seq not above the last seen) are ignored.
  void add(RankFrame frame);
  void end(const JobEnd& e) { ended_ = true, end_ = e; }
  // Counts a message that could not be decoded (garbage on the stream).
  void reject() { ++rejected_; }

  uint32_t world_size() const { return world_size_; }
  size_t ranks_seen() const { return latest_.size(); }
  size_t ranks_finalized() const;
  bool ended() const { return ended_; }
  const JobEnd& job_end() const { return end_; }
  const std::map<uint32_t, RankFrame>& latest() const { return latest_; }

  // Frames lost: reported by the ranks (could not hand to the transport) plus gaps in their
  // sequence numbers (dropped by the relay or this viewer's queue), and events the ranks' buffers
  // had no room for.
  uint64_t frames_dropped_by_ranks() const;
  uint64_t frames_lost_in_transit() const { return gap_frames_; }
  uint64_t events_dropped() const;
  uint64_t rejected() const { return rejected_; }
  // Frames received and accepted.
  uint64_t frames_received() const { return frames_received_; }
  // Intervals whose traffic a rank aggregated per peer (over its budget).
  uint64_t aggregated_intervals() const { return aggregated_intervals_; }

  // Every rank's current call, sorted by time in it (longest first), with `stuck` set past
  // `stuck_seconds` for blocking calls.
  std::vector<NowRow> now_table(double stuck_seconds) const;
  // The wait-for graph of the ranks blocked for at least `stuck_seconds`: its deadlocks and the
  // ranks that hold others.
  Diagnosis diagnose(double stuck_seconds) const;

  // Sends per (from, to) over the last `traffic_seconds` of frames (the matrix of recent
  // traffic), or since the viewer attached when `cumulative`; most bytes first.
  std::vector<PairTraffic> traffic_pairs(bool cumulative = false) const;
  // Receives per (source, receiver) since the viewer attached, from the receive events (not
  // counted for intervals a rank aggregated); most bytes first.
  std::vector<PairTraffic> received_pairs() const;
  // Totals over all frames received: what the ranks counted, interval by interval.
  uint64_t total_sends() const { return total_sends_; }
  uint64_t total_send_bytes() const { return total_send_bytes_; }
  uint64_t total_recvs() const { return total_recvs_; }
  uint64_t total_collectives() const { return total_collectives_; }
  // Fraction of wall time each rank spent in MPI since its first frame seen.
  std::map<uint32_t, double> mpi_share() const;

  // The arrows and states kept (the last keep_seconds of each rank's frames), for a timeline.
  const std::deque<Arrow>& arrows() const { return arrows_; }
  const std::deque<LiveState>& states() const { return states_; }
  // The newest interval end seen, ns since the epoch.
  uint64_t now_ns() const { return now_ns_; }

 private:
  void add_traffic(const RankFrame& f);
  void add_states(const RankFrame& f);
  void trim();

  uint64_t keep_ns_, traffic_ns_;
  std::map<std::pair<int32_t, int32_t>, PairTraffic> cumulative_, cumulative_received_;
  uint32_t world_size_ = 0;
  std::map<uint32_t, RankFrame> latest_;  // without events (kept in arrows_)
  struct RankTotals {
    uint64_t first_ns = 0, last_ns = 0, mpi_ns = 0;
  };
  std::map<uint32_t, RankTotals> totals_;
  uint64_t gap_frames_ = 0, rejected_ = 0, aggregated_intervals_ = 0, frames_received_ = 0;
  uint64_t total_sends_ = 0, total_send_bytes_ = 0, total_recvs_ = 0, total_collectives_ = 0;
  struct IntervalTraffic {
    uint64_t end_ns;
    std::vector<PairTraffic> pairs;
  };
  std::deque<IntervalTraffic> traffic_;
  std::deque<Arrow> arrows_;
  // Sends (indices into arrows_ offset by arrows_base_) and receives (their times) waiting for
  // their partner; at most kMaxUnmatched per key and side: a rank whose sends arrive aggregated
  // (over its budget) never matches its receives, so they must not pile up.
  static constexpr size_t kMaxUnmatched = 1024;
  format::StreamingMessageMatcher<uint64_t> matcher_{kMaxUnmatched};
  uint64_t arrows_base_ = 0;
  std::deque<LiveState> states_;
  uint64_t states_base_ = 0;                 // states popped from the front so far
  std::map<uint32_t, uint64_t> last_state_;  // each rank's newest state, as states_base_ + index
  uint64_t now_ns_ = 0;
  bool ended_ = false;
  JobEnd end_;
};

// What a rank is doing, for people: "MPI_Recv peer 2 tag 7 on comm of 3 ranks, in hang.c:10 (main),
// 2.0 s", or "in the application, 2.0 s". `mpe top` and upshot both show this text.
std::string call_text(const NowRow& row);

// The snapshot `mpe top --once --json` prints (schema in docs/live.md).
std::string snapshot_json(const JobView& view, double stuck_seconds);

}  // namespace mpe::live_stream
