// The view index's file parts, shared by its builder (view_index_build.cpp) and its reader
// (view_index.cpp): the footer, the message order, and the codec of the sections.
#pragma once

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "mpe/byte_codec.h"
#include "mpe/external_sort.h"
#include "mpe/file_io.h"
#include "mpe/log_reader.h"
#include "mpe/view_index.h"

namespace mpe::format {

namespace view_index_detail {

inline constexpr char kViewMagic[8] = {'M', 'P', 'E', 'V', 'I', 'E', 'W', '1'};

// The last bytes of a view index.
struct ViewFooter {
  char magic[8];
  uint32_t version;
  uint32_t reserved;
  uint64_t codes_offset, codes_size;    // zstd frame of timelines x bins codes
  uint64_t tables_offset, tables_size;  // zstd frame of the tables (ByteWriter)
  uint64_t log_size;                    // the log it describes
  uint64_t log_index_hash;              // hash64 of that log's index
  uint64_t footer_hash;                 // hash64 of the bytes above
};
static_assert(sizeof(ViewFooter) == 72);

inline uint64_t index_hash(const LogFile& file) {
  return hash64(file.index().data(), file.index().size() * sizeof(IndexEntry));
}

inline std::vector<std::pair<uint32_t, uint32_t>> timelines_of(const LogFile& file) {
  std::vector<std::pair<uint32_t, uint32_t>> tl;
  for (const IndexEntry& e : file.index()) tl.emplace_back(e.rank, e.thread);
  std::sort(tl.begin(), tl.end());
  tl.erase(std::unique(tl.begin(), tl.end()), tl.end());
  return tl;
}

inline Status corrupt(const std::string& path, const std::string& what) {
  return Status(StatusCode::kCorrupt, "view index " + path + ": " + what + "; delete it to build it again");
}

struct ByTime {
  bool operator()(const ViewMessage& a, const ViewMessage& b) const {
    if (a.send_time != b.send_time) return a.send_time < b.send_time;
    if (a.send_timeline != b.send_timeline) return a.send_timeline < b.send_timeline;
    return a.recv_time < b.recv_time;
  }
};
using MessageSort = ExternalSort<ViewMessage, ByTime>;

// A message end waiting for its partner.
struct PendingEnd {
  int64_t time;
  uint32_t timeline;
  uint64_t bytes;
};

}  // namespace view_index_detail

using namespace view_index_detail;

// Writes and reads the parts of the file.
class ViewIndexCodec {
 public:
  static std::string compress(const void* data, size_t n) {
    std::string out(ZSTD_compressBound(n), '\0');
    const size_t z = ZSTD_compress(out.data(), out.size(), data, n, 1);
    out.resize(ZSTD_isError(z) ? 0 : z);
    return out;
  }
  static bool decompress(const std::string& in, void* out, size_t n) {
    const size_t z = ZSTD_decompress(out, n, in.data(), in.size());
    return !ZSTD_isError(z) && z == n;
  }

  static std::string tables(const ViewIndex& v) {
    ByteWriter w;
    w.u64(v.records_);
    w.i64(v.t_begin_);
    w.i64(v.t_end_);
    w.f64(v.bin_origin_);
    w.f64(v.bin_width_);
    w.u32(v.bins_);
    w.u32(static_cast<uint32_t>(v.timelines_.size()));
    for (auto [r, t] : v.timelines_) w.u32(r), w.u32(t);
    for (uint16_t l : v.lanes_) w.u32(l);
    w.u32(static_cast<uint32_t>(v.shifts_.size()));
    for (int64_t d : v.shifts_) w.i64(d);
    w.u32(static_cast<uint32_t>(v.code_categories_.size()));
    for (uint32_t c : v.code_categories_) w.u32(c);
    w.u32(static_cast<uint32_t>(v.categories_.size()));
    for (const auto& c : v.categories_) {
      w.u32(c.id);
      w.u8(c.state);
      w.u64(c.count);
      w.i64(c.inclusive_ns);
      w.i64(c.exclusive_ns);
    }
    w.u32(static_cast<uint32_t>(v.markers_.size()));
    for (const auto& m : v.markers_) {
      w.i64(m.time);
      w.u32(m.timeline);
      w.u32(static_cast<uint32_t>(m.level));
      w.u8(m.on);
    }
    w.u64(v.messages_);
    w.i64(v.max_latency_);
    w.u64(v.sample_stride_);
    w.u32(static_cast<uint32_t>(v.sample_.size()));
    w.raw(v.sample_.data(), v.sample_.size() * sizeof(ViewMessage));
    w.u32(static_cast<uint32_t>(v.blocks_.size()));
    for (const auto& b : v.blocks_) {
      w.u64(b.offset);
      w.u32(b.size);
      w.u32(b.count);
      w.i64(b.first_send);
      w.i64(b.last_send);
      w.i64(b.last_recv);
    }
    return std::move(w.data());
  }

  static bool read_tables(ByteReader& r, ViewIndex& v) {
    uint32_t n = 0;
    if (!r.u64(&v.records_) || !r.i64(&v.t_begin_) || !r.i64(&v.t_end_) || !r.f64(&v.bin_origin_) ||
        !r.f64(&v.bin_width_) || !r.u32(&v.bins_) || !r.count(&n, 12))
      return false;
    v.timelines_.resize(n);
    for (auto& [rank, thread] : v.timelines_)
      if (!r.u32(&rank) || !r.u32(&thread)) return false;
    v.lanes_.resize(n);
    for (uint16_t& l : v.lanes_) {
      uint32_t lanes = 0;
      if (!r.u32(&lanes) || lanes > 256) return false;
      l = static_cast<uint16_t>(lanes);
    }
    if (!r.count(&n, 8)) return false;
    v.shifts_.resize(n);
    for (int64_t& d : v.shifts_)
      if (!r.i64(&d)) return false;
    if (!r.count(&n, 4) || n > 254) return false;
    v.code_categories_.resize(n);
    for (uint32_t& c : v.code_categories_)
      if (!r.u32(&c)) return false;
    if (!r.count(&n, 29)) return false;
    v.categories_.resize(n);
    for (auto& c : v.categories_) {
      uint8_t state = 0;
      if (!r.u32(&c.id) || !r.u8(&state) || !r.u64(&c.count) || !r.i64(&c.inclusive_ns) ||
          !r.i64(&c.exclusive_ns))
        return false;
      c.state = state != 0;
    }
    if (!r.count(&n, 17)) return false;
    v.markers_.resize(n);
    for (auto& m : v.markers_) {
      uint32_t level = 0;
      uint8_t on = 0;
      if (!r.i64(&m.time) || !r.u32(&m.timeline) || !r.u32(&level) || !r.u8(&on) ||
          m.timeline >= v.timelines_.size())
        return false;
      m.level = static_cast<int32_t>(level);
      m.on = on != 0;
    }
    if (!r.u64(&v.messages_) || !r.i64(&v.max_latency_) || !r.u64(&v.sample_stride_) ||
        !r.count(&n, sizeof(ViewMessage)))
      return false;
    v.sample_.resize(n);
    if (!r.raw(v.sample_.data(), n * sizeof(ViewMessage)) || !r.count(&n, 40)) return false;
    v.blocks_.resize(n);
    for (auto& b : v.blocks_)
      if (!r.u64(&b.offset) || !r.u32(&b.size) || !r.u32(&b.count) || !r.i64(&b.first_send) ||
          !r.i64(&b.last_send) || !r.i64(&b.last_recv) || b.count > ViewIndex::kBlockMessages)
        return false;
    return r.left() == 0 && v.bins_ >= 1 && v.bins_ <= ViewIndex::kMaxBins && v.bin_width_ > 0;
  }

  // Writes the sorted messages in blocks to fd from offset 0, keeping every stride-th as the sample.
  static Status write_messages(int fd, MessageSort& sort, ViewIndex& v, uint64_t* end) {
    v.sample_stride_ = std::max<uint64_t>(1, v.messages_ / ViewIndex::kSampleTarget);
    std::vector<ViewMessage> block;
    block.reserve(ViewIndex::kBlockMessages);
    uint64_t at = 0, seen = 0;
    Status written;
    auto flush = [&] {
      if (block.empty() || !written.ok()) return;
      const std::string z = compress(block.data(), block.size() * sizeof(ViewMessage));
      ViewIndex::Block b;
      b.offset = at;
      b.size = static_cast<uint32_t>(z.size());
      b.count = static_cast<uint32_t>(block.size());
      b.first_send = block.front().send_time;
      b.last_send = block.back().send_time;
      b.last_recv = INT64_MIN;
      for (const ViewMessage& m : block) b.last_recv = std::max(b.last_recv, m.recv_time);
      written = io::pwrite_all(fd, z.data(), z.size(), at);
      at += z.size();
      v.blocks_.push_back(b);
      block.clear();
    };
    Status sorted = sort.for_each_sorted([&](const ViewMessage& m) {
      if (seen++ % v.sample_stride_ == 0) v.sample_.push_back(m);
      block.push_back(m);
      if (block.size() == ViewIndex::kBlockMessages) flush();
    });
    flush();
    *end = at;
    MPE_RETURN_IF_ERROR(sorted);
    return written;
  }
};

}  // namespace mpe::format
