// The view index built: one streaming pass (two when the causality repair shifts ranks), the
// messages through an external sort, the file written through a temporary name; the design
// comment is in mpe/view_index.h.
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "mpe/byte_codec.h"
#include "mpe/chunk_pass.h"
#include "mpe/external_sort.h"
#include "mpe/file_io.h"
#include "mpe/log_reader.h"
#include "mpe/message_matcher.h"
#include "mpe/view_index.h"
#include "view_index_codec.h"

namespace mpe::format {

// One replay of the log in start order (chunks_by_start), on the clocks `shift` gives: the bins,
// the category totals, the span and the matched messages (into the sort).
class ViewIndexBuilder {
 public:
  ViewIndexBuilder(const LogFile& file, ViewIndex& out, const std::vector<int64_t>& shift, MessageSort& sort,
                   const ViewIndexOptions& options)
      : file_(file),
        out_(out),
        shift_(shift),
        sort_(sort),
        still_to_come_(starts_still_to_come(file, order_)) {
    out_.timelines_ = timelines_of(file);
    lay_out_bins(options);
    timeline_state_.resize(out_.timelines_.size());
    out_.lanes_.assign(out_.timelines_.size(), 0);
    out_.codes_.assign(size_t{out_.bins_} * out_.timelines_.size(), 0);
    rank_span_.assign(file.definitions().world_size, {INT64_MAX, INT64_MIN});
  }

  // What the matcher calls for each pair (defined first: its type is deduced).
  auto on_pair() {
    return [this](const MessageKey& key, const PendingEnd& s, const PendingEnd& r) { pair(key, s, r); };
  }
  const std::vector<size_t>& order() const { return order_; }
  const Status& status() const { return status_; }
  uint64_t backward() const { return backward_; }
  const std::map<std::pair<int32_t, int32_t>, int64_t>& constraints() const { return need_; }

  void consume(const Chunk& chunk) {
    const IndexEntry& e = chunk.entry;
    const uint32_t tl = timeline_of(e.rank, e.thread);
    Sink sink{*this, e.rank, tl, uint64_t{chunk.index} << 32};
    interpret_records(file_, e, chunk.records, chunk.count, &timeline_state_[tl].user_states, sink);
    ++consumed_;
    if (since_settle_ < kEndsPerSettle) return;
    since_settle_ = 0;
    matcher_.settle(still_to_come_[consumed_], on_pair());
  }

  // Pairs the ends left and finishes the totals and the span.
  void finish() {
    matcher_.finish(on_pair(), [&](const MessageKey&, size_t, size_t) {});
    std::vector<ViewIndex::CategoryTotal> cats;
    for (auto& [key, total] : totals_) cats.push_back(total);
    out_.categories_ = std::move(cats);
    std::stable_sort(out_.markers_.begin(), out_.markers_.end(), [](const auto& a, const auto& b) {
      return a.timeline != b.timeline ? a.timeline < b.timeline : a.time < b.time;
    });
    if (!shift_.empty() || backward_ > 0) {
      // Repaired (even when no shift could help), the span is that of the states and events moved
      // (load_trace()'s).
      out_.t_begin_ = repaired_.first <= repaired_.second ? repaired_.first : 0;
      out_.t_end_ = repaired_.first <= repaired_.second ? repaired_.second : 0;
      return;
    }
    bool any = false;
    for (size_t r = 0; r < rank_span_.size(); ++r) {
      if (rank_span_[r].first > rank_span_[r].second) continue;
      const int64_t d = shift_of(static_cast<uint32_t>(r));
      const int64_t a = saturating_add(rank_span_[r].first, d), z = saturating_add(rank_span_[r].second, d);
      out_.t_begin_ = any ? std::min(out_.t_begin_, a) : a;
      out_.t_end_ = any ? std::max(out_.t_end_, z) : z;
      any = true;
    }
  }

 private:
  static constexpr size_t kEndsPerSettle = size_t{1} << 20;
  static constexpr uint32_t kMaxDepth = 255;  // deeper states are drawn in the deepest lane (upshot)

  struct Child {
    int64_t start, end, ns;
  };
  struct TimelineState {
    UserStates user_states;
    // Per depth d >= 1: states of depth d logged before the depth d-1 state that encloses them
    // (a call is logged when it ends, so a nested call comes before its caller).
    std::vector<std::vector<Child>> orphans;
    // Per depth: the last state seen, which encloses later-logged deeper states of its time.
    std::vector<std::pair<int64_t, int64_t>> last;
    std::vector<uint32_t> last_cat;
  };

  struct Sink {
    ViewIndexBuilder& b;
    uint32_t rank, timeline;
    uint64_t chunk_seq;
    uint32_t pos = 0;

    void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t) {
      const int64_t d = b.shift_of(rank);
      b.add_state(timeline, saturating_add(start, d), saturating_add(end, d), cat, depth);
      b.repaired_span(saturating_add(start, d), saturating_add(end, d));
    }
    void event(const Event& e) {
      b.repaired_span(saturating_add(e.time, b.shift_of(rank)), saturating_add(e.time, b.shift_of(rank)));
      if (e.kind == RecordKind::kMarker) {
        const MarkerRecord m = as<MarkerRecord>(e);
        b.out_.markers_.push_back(
            {saturating_add(e.time, b.shift_of(rank)), timeline, m.level, m.logging_on});
      }
      // As upshot's model: collectives name a category, user events also count in it.
      if (e.kind == RecordKind::kUserEvent || e.kind == RecordKind::kCollective) {
        ViewIndex::CategoryTotal& t = b.total(e.cat, false);
        if (e.kind == RecordKind::kUserEvent) ++t.count;
      }
    }
    void message_end(bool send, const MessageKey& key, int64_t t, uint64_t bytes) {
      b.matcher_.add(send ? MessageSide::kSend : MessageSide::kRecv, key, chunk_seq | pos,
                     PendingEnd{t, timeline, bytes});
      ++b.since_settle_;
    }
    void cancel_send(const MessageKey& key) { b.matcher_.cancel_latest_send(key, chunk_seq | pos); }
    void span(int64_t t, int64_t end) {
      ++pos;
      ++b.out_.records_;
      auto& s = b.rank_span_[rank];
      s.first = std::min(s.first, t);
      s.second = std::max(s.second, end);
    }
  };

  void pair(const MessageKey& key, const PendingEnd& s, const PendingEnd& r) {
    const int32_t src = std::get<1>(key), dst = std::get<2>(key);
    ViewMessage m{saturating_add(s.time, shift_of(static_cast<uint32_t>(src))),
                  saturating_add(r.time, shift_of(static_cast<uint32_t>(dst))),
                  s.timeline,
                  r.timeline,
                  std::get<3>(key),
                  0,
                  s.bytes};
    // Every message constrains the repair (load_trace()'s), not only the backward ones.
    if (shift_.empty()) add_causality_constraint(&need_, src, dst, s.time, r.time);
    if (m.recv_time < m.send_time) ++backward_;
    out_.max_latency_ = std::max(out_.max_latency_, m.recv_time - m.send_time);
    ++out_.messages_;
    if (status_.ok()) status_ = sort_.add(m);
  }

  // The bins over the log's span on the shifted clocks, as fine as the budget allows.
  void lay_out_bins(const ViewIndexOptions& options) {
    int64_t a = INT64_MAX, z = INT64_MIN;
    for (const IndexEntry& e : file_.index()) {
      const int64_t d = shift_of(e.rank);
      a = std::min(a, saturating_add(file_.to_ns(e.rank, e.t_first), d));
      z = std::max(z, saturating_add(file_.to_ns(e.rank, e.t_last), d));
    }
    if (a > z) a = z = 0;
    out_.bins_ = static_cast<uint32_t>(
        std::clamp<uint64_t>(options.bin_budget / std::max<size_t>(1, out_.timelines_.size()),
                             ViewIndex::kMinBins, ViewIndex::kMaxBins));
    out_.bin_origin_ = static_cast<double>(a);
    out_.bin_width_ = std::max(1e-3, static_cast<double>(z - a) / out_.bins_);
  }

  int64_t shift_of(uint32_t rank) const { return rank < shift_.size() ? shift_[rank] : 0; }
  void repaired_span(int64_t t, int64_t end) {
    repaired_.first = std::min(repaired_.first, t);
    repaired_.second = std::max(repaired_.second, end);
  }
  uint32_t timeline_of(uint32_t rank, uint32_t thread) const {
    const auto& T = out_.timelines_;
    return static_cast<uint32_t>(std::lower_bound(T.begin(), T.end(), std::make_pair(rank, thread)) -
                                 T.begin());
  }
  ViewIndex::CategoryTotal& total(uint32_t cat, bool state) {
    auto [it, fresh] = totals_.try_emplace({!state, cat});
    if (fresh) it->second.id = cat, it->second.state = state;
    return it->second;
  }

  void add_state(uint32_t tl, int64_t start, int64_t end, uint32_t cat, uint32_t depth) {
    ViewIndex::CategoryTotal& t = total(cat, true);
    const int64_t ns = end - start;
    ++t.count;
    t.inclusive_ns += ns;
    t.exclusive_ns += ns;
    nest(tl, start, end, ns, cat, depth);
    if (depth == 0) sample(tl, start, end, cat);
    out_.lanes_[tl] =
        static_cast<uint16_t>(std::max<uint32_t>(out_.lanes_[tl], std::min(depth, kMaxDepth) + 1));
  }

  // Takes a state's time out of its enclosing caller's exclusive time, the caller being logged
  // before it (it is the last of the depth above) or after it (it claims its orphans).
  void nest(uint32_t tl, int64_t start, int64_t end, int64_t ns, uint32_t cat, uint32_t depth) {
    TimelineState& T = timeline_state_[tl];
    if (T.last.size() <= depth) {
      T.last.resize(depth + 1, {INT64_MAX, INT64_MIN});
      T.last_cat.resize(depth + 1, 0);
      T.orphans.resize(depth + 2);
    }
    if (depth > 0) {
      const auto [ps, pe] = T.last[depth - 1];
      if (ps <= start && pe >= end)
        total(T.last_cat[depth - 1], true).exclusive_ns -= ns;
      else
        T.orphans[depth].push_back({start, end, ns});
    }
    auto& mine = T.orphans[depth + 1];
    for (const Child& c : mine)
      if (start <= c.start && end >= c.end) total(cat, true).exclusive_ns -= c.ns;
    mine.clear();
    T.last[depth] = {start, end};
    T.last_cat[depth] = cat;
  }

  // Gives the bins whose centre lies in [start, end) the state's code.
  void sample(uint32_t tl, int64_t start, int64_t end, uint32_t cat) {
    const double w = out_.bin_width_, o = out_.bin_origin_;
    const int64_t n = out_.bins_;
    const int64_t k0 = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((start - o) / w - 0.5)));
    const int64_t k1 = std::min<int64_t>(n, static_cast<int64_t>(std::ceil((end - o) / w - 0.5)));
    if (k0 >= k1) return;
    const uint8_t code = code_of(cat);
    uint8_t* row = out_.codes_.data() + size_t{tl} * out_.bins_;
    std::fill(row + k0, row + k1, code);
  }
  uint8_t code_of(uint32_t cat) {
    auto [it, fresh] = code_.try_emplace(cat, 0);
    if (fresh && out_.code_categories_.size() < 254) {
      out_.code_categories_.push_back(cat);
      it->second = static_cast<uint8_t>(out_.code_categories_.size());
    }
    return it->second;
  }

  const LogFile& file_;
  ViewIndex& out_;
  const std::vector<int64_t>& shift_;
  MessageSort& sort_;
  const std::vector<size_t> order_ = chunks_by_start(file_);
  const std::vector<int64_t> still_to_come_;
  size_t consumed_ = 0, since_settle_ = 0;
  std::vector<TimelineState> timeline_state_;
  std::vector<std::pair<int64_t, int64_t>> rank_span_;  // per rank: earliest time, latest end (unshifted)
  std::pair<int64_t, int64_t> repaired_{INT64_MAX, INT64_MIN};            // of the shifted states and events
  std::map<std::pair<bool, uint32_t>, ViewIndex::CategoryTotal> totals_;  // (event?, id)
  std::map<uint32_t, uint8_t> code_;
  ReplayMessageMatcher<PendingEnd> matcher_;
  std::map<std::pair<int32_t, int32_t>, int64_t> need_;
  uint64_t backward_ = 0;
  Status status_;
};

namespace {

// One replay with the given shifts into v and sort. Errors: the log's, the sort's, kCancelled.
Status replay(const LogFile& file, const std::vector<int64_t>& shift, const ViewIndexOptions& options,
              int pass, int passes, ViewIndex& v, MessageSort& sort,
              std::map<std::pair<int32_t, int32_t>, int64_t>* need, uint64_t* backward) {
  ViewIndexBuilder builder(file, v, shift, sort, options);
  ChunkPassOptions pass_options;
  pass_options.decoders = 0;
  pass_options.order = &builder.order();
  pass_options.what = "view index";
  const size_t n = std::max<size_t>(1, file.index().size());
  int reported = -1;
  pass_options.keep_going = [&](size_t done) {
    if (!builder.status().ok()) return false;
    const int percent = static_cast<int>((100 * pass + 90 * done / n) / passes);
    if (percent == reported || !options.progress) return true;
    reported = percent;
    return options.progress(percent);
  };
  Status s = run_chunk_pass(file, {[&](const Chunk& c) { builder.consume(c); }}, pass_options);
  if (!builder.status().ok()) return builder.status();
  MPE_RETURN_IF_ERROR(s);
  builder.finish();
  MPE_RETURN_IF_ERROR(builder.status());
  if (need) *need = builder.constraints();
  *backward = builder.backward();
  return Status();
}

}  // namespace

ViewIndex::~ViewIndex() = default;

StatusOr<std::unique_ptr<ViewIndex>> ViewIndex::build(const LogFile& file, const std::string& path,
                                                      const ViewIndexOptions& options) {
  std::unique_ptr<ViewIndex> v(new ViewIndex());
  MessageSort sort(options.sort_memory, "view-index");
  std::map<std::pair<int32_t, int32_t>, int64_t> need;
  uint64_t backward = 0;
  const std::vector<int64_t> none;
  MPE_RETURN_IF_ERROR(replay(file, none, options, 0, 1, *v, sort, &need, &backward));
  if (backward > 0) {
    // Clocks that disagree: the bins and messages again on the repaired clocks.
    std::vector<int64_t> shift = causality_shifts(need, file.definitions().world_size);
    if (std::any_of(shift.begin(), shift.end(), [](int64_t d) { return d != 0; })) {
      sort.clear();
      std::unique_ptr<ViewIndex> again(new ViewIndex());
      MPE_RETURN_IF_ERROR(replay(file, shift, options, 1, 2, *again, sort, nullptr, &backward));
      again->shifts_ = std::move(shift);
      v = std::move(again);
    }
  }
  const std::string temporary = path + ".part";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status(StatusCode::kIoError,
                  "cannot write the view index " + temporary + ": " + std::strerror(errno));
  auto fail = [&](Status s) {
    ::close(fd);
    std::remove(temporary.c_str());
    return s;
  };
  uint64_t at = 0;
  if (Status s = ViewIndexCodec::write_messages(fd, sort, *v, &at); !s.ok()) return fail(s);

  const std::string codes = ViewIndexCodec::compress(v->codes_.data(), v->codes_.size());
  const std::string plain_tables = ViewIndexCodec::tables(*v);
  const std::string tables = ViewIndexCodec::compress(plain_tables.data(), plain_tables.size());
  ViewFooter f{};
  std::memcpy(f.magic, kViewMagic, sizeof f.magic);
  f.version = kVersion;
  f.codes_offset = at;
  f.codes_size = codes.size();
  f.tables_offset = at + codes.size();
  f.tables_size = tables.size();
  f.log_size = file.file_size();
  f.log_index_hash = index_hash(file);
  f.footer_hash = hash64(&f, offsetof(ViewFooter, footer_hash));
  for (auto [bytes, n, off] :
       {std::tuple{codes.data(), codes.size(), f.codes_offset},
        std::tuple{tables.data(), tables.size(), f.tables_offset},
        std::tuple{reinterpret_cast<const char*>(&f), sizeof f, f.tables_offset + tables.size()}})
    if (Status s = io::pwrite_all(fd, bytes, n, off); !s.ok()) return fail(s);
  if (::close(fd) != 0 || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return Status(StatusCode::kIoError, "cannot write the view index " + path + ": " + std::strerror(errno));
  }
  return open(file, path);
}

StatusOr<std::unique_ptr<ViewIndex>> ViewIndex::open_or_build(const LogFile& file,
                                                              const std::string& log_path,
                                                              const ViewIndexOptions& options) {
  const std::string path = path_for(log_path);
  // A missing, stale or damaged index is built again (over the damaged one).
  auto opened = open(file, path);
  if (opened.ok()) return opened;
  return build(file, path, options);
}

}  // namespace mpe::format
