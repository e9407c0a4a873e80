// The view index: what a viewer needs to draw a log without loading its records, built in one
// streaming pass and kept beside the log (`run.mpelog.view`), so that upshot opens a log larger
// than memory at once and reads records only for the chunks a zoomed-in view overlaps.
//
// Design. The pass is the streaming summary's (mpe/log_summary.h: chunks by start, message ends
// paired by the ReplayMessageMatcher, the causality repair's shifts) with one more consumer that
//   - samples each timeline's depth-0 category at the centres of fixed bins over the run (the
//     summary band's rule, upshot's summary.h): one byte per timeline and bin;
//   - totals each category's states (count, inclusive and exclusive time) and events;
//   - sends every matched message (40 bytes) through an external sort by send time (mpe/external_sort.h)
//     into zstd blocks of kBlockMessages, each block with its send range and latest receive, so a
//     view's messages are the few blocks it crosses; every k-th message is also kept as the arrow
//     sample (k = messages / 65536, as upshot's model samples).
// When the repair shifts ranks (clocks that disagree), the consumer's work is done again in a
// second pass with the shifts, so that bins and messages are on the repaired clocks.
//
// File: message blocks | bin codes (one zstd frame) | tables (one zstd frame) | ViewFooter. The
// footer names the log it describes (its size and the hash of its index): an index of another log
// is stale and is built again. Memory while building: the summary's (the ends in flight), the
// bins, and the sort's budget; while open: the bins, the tables and the sample.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mpe/file_io.h"
#include "mpe/status.h"

namespace mpe::format {

class LogFile;

// A matched message: 40 bytes, times on the repaired clocks (ns since the start of the run).
struct ViewMessage {
  int64_t send_time;  // entry of the send call
  int64_t recv_time;  // completion of the receive
  uint32_t send_timeline;
  uint32_t recv_timeline;
  int32_t tag;
  uint32_t reserved = 0;
  uint64_t bytes;
};
static_assert(sizeof(ViewMessage) == 40);

struct ViewIndexOptions {
  // Bin codes over all timelines: bins per timeline = this / timelines, within [kMinBins, kMaxBins]:
  // 16,384 bins a timeline up to 256 timelines (sharp up to ~9x zoom on a 1,824-px plot), 2,048 from
  // 2,048 timelines on (grouped, as the summary band's bins). The summary model holds at most a
  // 12-byte state per bin.
  uint64_t bin_budget = uint64_t{4} << 20;
  size_t sort_memory = size_t{256} << 20;  // the message sort's budget
  // Called with 0..100 as the pass goes; false stops it (kCancelled).
  std::function<bool(int percent)> progress;
};

class ViewIndex {
 public:
  static constexpr uint32_t kVersion = 1;
  static constexpr uint32_t kMinBins = 2048, kMaxBins = 16384;
  static constexpr size_t kBlockMessages = 4096;
  static constexpr size_t kSampleTarget = 65536;

  // Builds the view index of `file` and writes it to `path` (through a temporary name). Errors:
  // the log's (corrupt, truncated), io-error (the index or the sort's runs cannot be written), kCancelled.
  static StatusOr<std::unique_ptr<ViewIndex>> build(const LogFile& file, const std::string& path,
                                                    const ViewIndexOptions& options = {});
  // Opens the view index at `path`. Errors: io-error, not-a-logfile, corrupt, and invalid-argument
  // when it describes another log (or another version of this one): build it again.
  static StatusOr<std::unique_ptr<ViewIndex>> open(const LogFile& file, const std::string& path);
  // The same from any source of its bytes (a remote one: `mpe serve`).
  static StatusOr<std::unique_ptr<ViewIndex>> open(const LogFile& file,
                                                   std::shared_ptr<const io::ByteSource> source);
  // Where the index of the log at log_path lives: beside it, or (when that directory cannot be
  // written) under $XDG_CACHE_HOME (else ~/.cache)/mpe-tools.
  static std::string path_for(const std::string& log_path);
  // Opens the index at path_for(log_path), or builds it there when it is missing or stale.
  static StatusOr<std::unique_ptr<ViewIndex>> open_or_build(const LogFile& file, const std::string& log_path,
                                                            const ViewIndexOptions& options = {});

  ~ViewIndex();

  uint64_t records() const { return records_; }
  int64_t t_begin() const { return t_begin_; }
  int64_t t_end() const { return t_end_; }
  // The timelines (rank, thread), by rank then thread: timeline numbers index this.
  const std::vector<std::pair<uint32_t, uint32_t>>& timelines() const { return timelines_; }
  // The causality repair's shift per rank (empty when none).
  const std::vector<int64_t>& shifts() const { return shifts_; }
  int64_t shift_of(uint32_t rank) const { return rank < shifts_.size() ? shifts_[rank] : 0; }
  // Chunk i of `file`: its first record's time and its latest end, on the repaired clocks (ns).
  std::pair<int64_t, int64_t> chunk_span(const LogFile& file, size_t i) const;

  // Bin k of a timeline covers [bin_origin + k * bin_width, + bin_width); its code is that of the
  // depth-0 state containing its centre: 0 none, c >= 1 the category id code_categories()[c - 1].
  double bin_origin() const { return bin_origin_; }
  double bin_width() const { return bin_width_; }
  uint32_t bins() const { return bins_; }
  const uint8_t* codes(uint32_t timeline) const { return codes_.data() + size_t{timeline} * bins_; }
  const std::vector<uint32_t>& code_categories() const { return code_categories_; }
  // The lanes (deepest state's depth + 1, at most 256) of each timeline over the whole run.
  uint32_t lanes(uint32_t timeline) const { return timeline < lanes_.size() ? lanes_[timeline] : 0; }

  // A category's states (or events) over the whole run.
  struct CategoryTotal {
    uint32_t id = 0;
    bool state = true;
    uint64_t count = 0;
    int64_t inclusive_ns = 0;
    int64_t exclusive_ns = 0;  // minus the time of the states nested in them
  };
  const std::vector<CategoryTotal>& categories() const { return categories_; }

  // An MPI_Pcontrol call: upshot draws the logging level from each to the next along the row.
  struct Marker {
    int64_t time;
    uint32_t timeline;
    int32_t level;
    bool on;  // logging on after the call
  };
  // Every marker of the run, by timeline then time (a few per rank).
  const std::vector<Marker>& markers() const { return markers_; }

  uint64_t messages() const { return messages_; }
  int64_t max_latency() const { return max_latency_; }
  // Every sample_stride()-th message by send time.
  const std::vector<ViewMessage>& sample() const { return sample_; }
  uint64_t sample_stride() const { return sample_stride_; }
  // Calls f for each message that may cross [t0, t1] (sent by t1, received from t0 on), by send
  // time, reading only the blocks that hold such messages. Errors: io-error, corrupt.
  Status messages_crossing(int64_t t0, int64_t t1, const std::function<void(const ViewMessage&)>& f) const;
  // Bytes this index holds in memory.
  size_t memory_bytes() const;

 private:
  ViewIndex() = default;
  friend class ViewIndexBuilder;
  friend class ViewIndexCodec;

  struct Block {
    uint64_t offset = 0;  // in the index file
    uint32_t size = 0;    // compressed bytes
    uint32_t count = 0;   // messages
    int64_t first_send = 0, last_send = 0, last_recv = 0;
  };

  std::shared_ptr<const io::ByteSource> source_;
  uint64_t records_ = 0;
  int64_t t_begin_ = 0, t_end_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> timelines_;
  std::vector<int64_t> shifts_;
  double bin_origin_ = 0, bin_width_ = 1;
  uint32_t bins_ = 0;
  std::vector<uint8_t> codes_;
  std::vector<uint32_t> code_categories_;
  std::vector<uint16_t> lanes_;
  std::vector<CategoryTotal> categories_;
  std::vector<Marker> markers_;
  uint64_t messages_ = 0;
  int64_t max_latency_ = 0;
  std::vector<ViewMessage> sample_;
  uint64_t sample_stride_ = 1;
  std::vector<Block> blocks_;
};

}  // namespace mpe::format
