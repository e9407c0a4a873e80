// `mpe cut`'s streaming core: the pairing pass and the writing pass (design in log_cut.h).
#include "log_cut.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "mpe/chunk_codec.h"
#include "mpe/chunk_pass.h"
#include "mpe/log_summary.h"
#include "mpe/log_writer.h"
#include "mpe/message_matcher.h"
#include "mpe/records.h"

namespace mpe::cli {

TimeSpans intersect(const TimeSpans& a, const TimeSpans& b) {
  TimeSpans out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t begin = std::max(a[i].begin, b[j].begin), end = std::min(a[i].end, b[j].end);
    if (begin < end) out.push_back({begin, end});
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return out;
}

bool CutSelection::in_window(uint32_t r, int64_t t) const {
  if (windows.empty()) return true;
  if (r >= windows.size()) return false;
  const TimeSpans& spans = windows[r];
  // The last span beginning at or before t.
  auto it = std::upper_bound(spans.begin(), spans.end(), t,
                             [](int64_t x, const TimeSpan& s) { return x < s.begin; });
  return it != spans.begin() && t < std::prev(it)->end;
}

namespace {

using format::Record;
using format::RecordKind;

// Whether the selection keeps record r of `rank` on its own (time t: LogFile::to_ns of its time),
// before the records that belong together are decided together.
bool selected(const format::LogFile& file, const CutSelection& sel, uint32_t rank, const Record& r,
              int64_t t) {
  if (!sel.rank_kept(rank)) return false;
  const RecordKind kind = format::kind_of(r);
  if (kind == RecordKind::kCommCreate || kind == RecordKind::kWinCreate) return true;
  return sel.in_window(rank, t) && (!sel.keep || sel.keep(file, rank, r));
}

// A record's identity in both passes: its chunk's index and its position there.
uint64_t record_id(size_t chunk, size_t pos) { return uint64_t{chunk} << 32 | pos; }

// The message key of a send, receive or send cancel of `rank` whose peer is a kept rank; false
// for other records and for messages the cut keeps or drops whole (a peer outside the selection).
bool message_key(const format::LogFile& file, const CutSelection& sel, uint32_t rank, const Record& r,
                 format::MessageKey* key) {
  const RecordKind kind = format::kind_of(r);
  if (kind != RecordKind::kSend && kind != RecordKind::kRecv && kind != RecordKind::kSendCancel) return false;
  int32_t peer;
  uint64_t gid;
  if (!format::world_rank(file.definitions().ranks[rank], r.comm, r.a, &peer, &gid)) return false;
  if (peer < 0 || !sel.rank_kept(static_cast<uint32_t>(peer))) return false;
  const int32_t me = static_cast<int32_t>(rank);
  *key = kind == RecordKind::kRecv ? format::MessageKey{gid, peer, me, r.b}
                                   : format::MessageKey{gid, me, peer, r.b};
  return true;
}

// Pass 2: the kept ends whose partner is not kept and that are not at the end of their key's
// sequence (log_h's design), found in a replay in time order.
class HalfMessages {
 public:
  HalfMessages(const format::LogFile& file, const CutSelection& sel) : file_(file), sel_(sel) {
    for (size_t i : format::chunks_by_start(file))
      if (sel.rank_kept(file.index()[i].rank)) order_.push_back(i);
    still_to_come_ = format::starts_still_to_come(file, order_);
  }
  const std::vector<size_t>& order() const { return order_; }

  // What the matcher calls with each pair (defined first: its type is deduced).
  auto on_pair() {
    return [this](const format::MessageKey& key, const End& s, const End& r) {
      if (s.kept && r.kept) {
        // A whole message after half-kept ones: those would shift its pairing.
        const auto it = pending_.find(key);
        if (it == pending_.end()) return;
        for (const Half& h : it->second) drop_.push_back(h.id);
        pending_.erase(it);
      } else if (s.kept || r.kept) {
        pending_[key].push_back(s.kept ? Half{s.id, format::MessageSide::kSend}
                                       : Half{r.id, format::MessageSide::kRecv});
      }
    };
  }

  void consume(const format::Chunk& c) {
    const uint32_t rank = c.entry.rank;
    for (size_t i = 0; i < c.count; ++i) {
      const Record& r = c.records[i];
      format::MessageKey key;
      if (!message_key(file_, sel_, rank, r, &key)) continue;
      const uint64_t id = record_id(c.index, i);
      if (format::kind_of(r) == RecordKind::kSendCancel) {
        matcher_.cancel_latest_send(key, id);
        continue;
      }
      const int64_t t = file_.to_ns(rank, r.time);
      const bool send = format::kind_of(r) == RecordKind::kSend;
      matcher_.add(send ? format::MessageSide::kSend : format::MessageSide::kRecv, key, id,
                   End{t, id, selected(file_, sel_, rank, r, t)});
      ++since_settle_;
    }
    ++consumed_;
    if (since_settle_ < kEndsPerSettle) return;
    since_settle_ = 0;
    matcher_.settle(still_to_come_[consumed_], on_pair());
  }

  // The ids of the ends to drop, sorted.
  std::vector<uint64_t> finish() {
    matcher_.settle(INT64_MAX, on_pair());
    // Ends left without a partner in the original too: on one side of a key only, at its end.
    std::unordered_map<format::MessageKey, uint8_t, format::MessageKeyHash> sides;
    matcher_.for_each_left([&](const format::MessageKey& key, format::MessageSide side, const End& end) {
      if (end.kept && pending_.count(key)) sides[key] |= bit(side);
    });
    // Half-kept ends at the end of a key stay, unless both sides have some: the k-th kept send
    // would then meet another message's receive.
    for (auto& [key, halves] : pending_) {
      uint8_t s = sides[key];
      for (const Half& h : halves) s |= bit(h.side);
      if (s == 3)
        for (const Half& h : halves) drop_.push_back(h.id);
    }
    std::sort(drop_.begin(), drop_.end());
    return std::move(drop_);
  }

 private:
  struct End {
    int64_t time;
    uint64_t id;
    bool kept;
  };
  struct Half {
    uint64_t id;
    format::MessageSide side;
  };
  static uint8_t bit(format::MessageSide side) { return side == format::MessageSide::kSend ? 1 : 2; }

  static constexpr size_t kEndsPerSettle = format::SummaryOptions{}.ends_per_settle;
  const format::LogFile& file_;
  const CutSelection& sel_;
  std::vector<size_t> order_;
  std::vector<int64_t> still_to_come_;
  size_t consumed_ = 0, since_settle_ = 0;
  format::ReplayMessageMatcher<End> matcher_;
  std::unordered_map<format::MessageKey, std::vector<Half>, format::MessageKeyHash> pending_;
  std::vector<uint64_t> drop_;
};

// Where the run started: the timeline and raw ticks the output's earliest chunk must start at.
struct Anchor {
  uint32_t rank = 0, thread = 0;
  uint64_t ticks = 0;
  bool valid = false;
};

// Converts ns of the reference clock to its ticks.
int64_t ns_to_ticks(const format::Definitions& d, int64_t ns) {
  return std::llround(static_cast<double>(ns) * d.ticks_per_second / 1e9);
}

// The chunk whose corrected start is the reader's origin (the first such, as the reader finds it),
// in the output's ticks of its rank (less the rank's causality shift, which the output's clock adds).
Anchor find_anchor(const format::LogFile& file, const CutSelection& sel) {
  Anchor a;
  double best = 0;
  for (const format::IndexEntry& e : file.index()) {
    const double t = file.definitions().ranks[e.rank].sync.correct(e.t_first);
    if (a.valid && !(t < best)) continue;
    a = Anchor{e.rank, e.thread, e.t_first, true};
    best = t;
  }
  if (a.valid && a.rank < sel.causality_ns.size()) {
    const int64_t shift = ns_to_ticks(file.definitions(), sel.causality_ns[a.rank]);
    a.ticks =
        shift > 0 && static_cast<uint64_t>(shift) > a.ticks ? 0 : a.ticks - static_cast<uint64_t>(shift);
  }
  return a;
}

// Pass 3: the kept records, timeline by timeline, into the writer.
class CutWriter {
 public:
  CutWriter(const format::LogFile& file, const CutSelection& sel, const std::vector<uint64_t>& drop,
            format::LogWriter& out, Anchor anchor)
      : file_(file), sel_(sel), drop_(drop), out_(out), anchor_(anchor) {}

  void consume(const format::Chunk& c) {
    if (!open_ || c.entry.rank != rank_ || c.entry.thread != thread_)
      begin_timeline(c.entry.rank, c.entry.thread);
    for (size_t i = 0; i < c.count; ++i) {
      const Record& r = c.records[i];
      const RecordKind kind = format::kind_of(r);
      const bool kept = decide(c, i);
      if (held_) {  // a receive's request done goes with the receive just after it
        if (kind == RecordKind::kRecv ? kept : held_kept_) keep(*held_);
        held_.reset();
      }
      if (kind == RecordKind::kRequestDone && r.b == static_cast<int32_t>(format::RequestWhat::kRecv)) {
        held_ = r;
        held_kept_ = kept;
      } else if (kept) {
        keep(r);
      }
      prev_kind_ = kind;
      prev_kept_ = kept;
    }
  }
  // Copies chunk i as it is on disk (every record of it is kept): no decode, no encode.
  void copy(size_t i) {
    const format::IndexEntry& e = file_.index()[i];
    if (!open_ || e.rank != rank_ || e.thread != thread_) begin_timeline(e.rank, e.thread);
    std::string chunk(e.size, '\0');
    if (status_.ok()) status_ = file_.source()->read(chunk.data(), chunk.size(), e.offset);
    if (!status_.ok()) return;
    add(std::move(chunk), e.nrecords);
    written_ += e.nrecords;
  }
  Status finish() {
    end_timeline();
    anchor_before(UINT32_MAX, UINT32_MAX);
    return status_;
  }
  const Status& status() const { return status_; }
  uint64_t written() const { return written_; }
  // States the filter left out, by (rank, category).
  const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& left_out() const { return left_out_; }

 private:
  // A record's own decision, or its partner's for a request post after its send or collective.
  bool decide(const format::Chunk& c, size_t i) {
    const Record& r = c.records[i];
    const RecordKind kind = format::kind_of(r);
    if (kind == RecordKind::kRequestPost) {
      const auto what = static_cast<format::RequestWhat>(r.b);
      if ((what == format::RequestWhat::kSend && prev_kind_ == RecordKind::kSend) ||
          (what == format::RequestWhat::kCollective && prev_kind_ == RecordKind::kCollective))
        return prev_kept_;
    }
    const int64_t t = file_.to_ns(rank_, r.time);
    const bool own = selected(file_, sel_, rank_, r, t);
    if (!own && kind == RecordKind::kState && sel_.keep && sel_.rank_kept(rank_) && sel_.in_window(rank_, t))
      ++left_out_[{rank_, r.cat}];  // left out by the filter: the output's definitions say so
    if (kind == RecordKind::kUserEvent) return user_state_end(r, own);
    if (!own || (kind != RecordKind::kSend && kind != RecordKind::kRecv) || drop_.empty()) return own;
    return !std::binary_search(drop_.begin(), drop_.end(), record_id(c.index, i));
  }
  // A user state is kept whole when its start event is: its end event goes with it, as the reader
  // pairs them (UserStates::feed); other user events stand alone.
  bool user_state_end(const Record& r, bool own) {
    const format::Category* c = file_.category(r.cat);
    if (c && c->kind == format::CategoryKind::kState && c->id == r.cat) {
      open_user_states_.push_back({r.cat, own});
      return own;
    }
    for (size_t k = open_user_states_.size(); k-- > 0;) {
      const format::Category* sc = file_.category(open_user_states_[k].first);
      if (sc && sc->end_id == r.cat) {
        const bool kept = open_user_states_[k].second;
        open_user_states_.erase(open_user_states_.begin() + static_cast<long>(k));
        return kept;
      }
    }
    return own;
  }
  void begin_timeline(uint32_t rank, uint32_t thread) {
    end_timeline();
    anchor_before(rank, thread);
    open_ = true;
    rank_ = rank;
    thread_ = thread;
    chunks_out_ = 0;
    open_user_states_.clear();
    prev_kind_ = RecordKind::kState;
    prev_kept_ = false;
  }
  void end_timeline() {
    if (!open_) return;
    if (held_ && held_kept_) keep(*held_);
    held_.reset();
    flush();
    if (is_anchor(rank_, thread_)) {
      if (chunks_out_ == 0) add_chunk(nullptr, 0);
      anchor_done_ = true;
    }
    open_ = false;
  }
  // The anchor's timeline has no kept rank: an empty chunk of it, in its place in the order.
  void anchor_before(uint32_t rank, uint32_t thread) {
    if (!anchor_.valid || anchor_done_ || std::pair(anchor_.rank, anchor_.thread) >= std::pair(rank, thread))
      return;
    const uint32_t r = rank_, t = thread_, n = chunks_out_;
    rank_ = anchor_.rank;
    thread_ = anchor_.thread;
    chunks_out_ = 0;
    add_chunk(nullptr, 0);
    rank_ = r;
    thread_ = t;
    chunks_out_ = n;
    anchor_done_ = true;
  }
  bool is_anchor(uint32_t rank, uint32_t thread) const {
    return anchor_.valid && anchor_.rank == rank && anchor_.thread == thread;
  }
  void keep(const Record& r) {
    buf_.push_back(r);
    ++written_;
    if (buf_.size() >= kCutChunkRecords) flush();
  }
  void flush() {
    if (buf_.empty()) return;
    add_chunk(buf_.data(), buf_.size());
    buf_.clear();
  }
  // Encodes and writes a chunk of the current timeline; its first starts at the anchor if it is
  // the anchor's.
  void add_chunk(const Record* recs, size_t n) {
    std::string chunk;
    format::encode_events(recs, static_cast<uint32_t>(n), rank_, thread_, 1, &chunk);
    add(std::move(chunk), n);
  }
  // Writes an encoded chunk of n records of the current timeline; the timeline's first starts at
  // the anchor if it is the anchor's (only its header changes).
  void add(std::string chunk, size_t n) {
    if (chunks_out_++ == 0 && is_anchor(rank_, thread_)) {
      format::ChunkHeader h;
      std::memcpy(&h, chunk.data(), sizeof h);
      h.t_first = n ? std::min(h.t_first, anchor_.ticks) : anchor_.ticks;
      if (n == 0) h.t_last = anchor_.ticks;
      format::seal(&h);
      std::memcpy(chunk.data(), &h, sizeof h);
    }
    if (status_.ok()) status_ = out_.add_events_chunk(chunk);
  }

  const format::LogFile& file_;
  const CutSelection& sel_;
  const std::vector<uint64_t>& drop_;
  format::LogWriter& out_;
  const Anchor anchor_;
  bool anchor_done_ = false;
  bool open_ = false;
  uint32_t rank_ = 0, thread_ = 0;
  uint32_t chunks_out_ = 0;  // of the current timeline
  RecordKind prev_kind_ = RecordKind::kState;
  bool prev_kept_ = false;
  std::optional<Record> held_;  // a receive's request done, waiting for the record after it
  bool held_kept_ = false;
  std::vector<std::pair<uint32_t, bool>> open_user_states_;  // (start id, kept), of the timeline
  std::vector<Record> buf_;
  uint64_t written_ = 0;
  Status status_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> left_out_;
};

// The chunks of the kept ranks, rank by rank, each rank's threads in order, each timeline's chunks
// in index order (oldest first): the order LogWriter's index promises.
std::vector<size_t> writing_order(const format::LogFile& file, const CutSelection& sel) {
  std::vector<size_t> order;
  for (size_t i = 0; i < file.index().size(); ++i)
    if (sel.rank_kept(file.index()[i].rank)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const format::IndexEntry &x = file.index()[a], &y = file.index()[b];
    return std::pair(x.rank, x.thread) < std::pair(y.rank, y.thread);
  });
  return order;
}

// Adds `ticks` to a clock correction (both measurements; one made up when there was none).
void shift_clock(format::ClockSync* s, int64_t ticks) {
  if (!(s->valid & 3)) *s = format::ClockSync{1, 0, 0, 0, 0, 0, 0};
  s->offset_init += ticks;
  s->offset_final += ticks;
}

// The input's definitions, with the causality shifts moved into the ranks' clocks and, for a
// filter, its rules and the calls it left out added to each kept rank's (format v7), so that every
// reader says what is missing.
format::Definitions output_definitions(const format::LogFile& file, const CutSelection& sel,
                                       const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& left_out) {
  format::Definitions d = file.definitions();
  for (size_t r = 0; r < sel.causality_ns.size() && r < d.ranks.size(); ++r)
    if (sel.causality_ns[r] != 0) shift_clock(&d.ranks[r].sync, ns_to_ticks(d, sel.causality_ns[r]));
  if (sel.filter.empty()) return d;
  for (uint32_t r = 0; r < d.ranks.size(); ++r)
    if (sel.rank_kept(r)) d.ranks[r].filter += sel.filter;
  for (const auto& [key, calls] : left_out) {
    std::vector<format::LeftOut>& list = d.ranks[key.first].left_out;
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const format::LeftOut& l) { return l.category == key.second; });
    if (it == list.end()) it = list.insert(list.end(), format::LeftOut{key.second, 0});
    it->calls += calls;
  }
  return d;
}

// Refuses an output that is the input itself (it would be truncated before it was read).
Status check_output(const std::string& in_path, const std::string& out) {
  struct stat a {
  }, b{};
  if (::stat(in_path.c_str(), &a) == 0 && ::stat(out.c_str(), &b) == 0 && a.st_dev == b.st_dev &&
      a.st_ino == b.st_ino)
    return Status(StatusCode::kInvalidArgument, out + " is the input log; write the cut to another file");
  return Status();
}

// Where the writer writes: a temporary name beside `out`, renamed once complete; `out` itself when
// it exists and is not a regular file (/dev/null).
std::string scratch_name(const std::string& out) {
  struct stat st {};
  if (::stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return out;
  return out + ".cut-" + std::to_string(::getpid()) + ".tmp";
}

Status run_pass(const format::LogFile& file, const std::vector<size_t>& order, const format::ChunkConsumer& f,
                std::function<bool(size_t)> keep_going) {
  format::ChunkPassOptions options;
  options.decoders = 0;
  options.order = &order;
  options.what = "cut";
  options.keep_going = std::move(keep_going);
  return format::run_chunk_pass(file, {f}, options);
}

// Passes 2 and 3 into `path`.
StatusOr<CutCounts> write_cut(const format::LogFile& file, const CutSelection& sel, const std::string& path) {
  CutCounts counts;
  for (const format::IndexEntry& e : file.index()) counts.records_in += e.nrecords;
  std::vector<uint64_t> drop;
  if (sel.drops_within_ranks()) {
    HalfMessages halves(file, sel);
    MPE_RETURN_IF_ERROR(
        run_pass(file, halves.order(), [&](const format::Chunk& c) { halves.consume(c); }, {}));
    drop = halves.finish();
    counts.half_messages_dropped = drop.size();
  }
  format::LogWriter out;
  MPE_RETURN_IF_ERROR(out.open(path));
  CutWriter writer(file, sel, drop, out, find_anchor(file, sel));
  const std::vector<size_t> order = writing_order(file, sel);
  if (sel.drops_within_ranks()) {
    const Status read = run_pass(
        file, order, [&](const format::Chunk& c) { writer.consume(c); },
        [&](size_t) { return writer.status().ok(); });
    MPE_RETURN_IF_ERROR(writer.status());
    MPE_RETURN_IF_ERROR(read);
  } else {  // whole ranks: their chunks as they are
    for (size_t i = 0; i < order.size() && writer.status().ok(); ++i) writer.copy(order[i]);
  }
  MPE_RETURN_IF_ERROR(writer.finish());
  MPE_RETURN_IF_ERROR(out.finish(output_definitions(file, sel, writer.left_out())));
  counts.records_out = writer.written();
  for (const auto& [key, calls] : writer.left_out()) counts.states_left_out += calls;
  return counts;
}

}  // namespace

StatusOr<CutCounts> cut_log(const format::LogFile& file, const std::string& in_path, const CutSelection& sel,
                            const std::string& out) {
  MPE_RETURN_IF_ERROR(check_output(in_path, out));
  const std::string path = scratch_name(out);
  StatusOr<CutCounts> counts = write_cut(file, sel, path);
  if (!counts.ok() || path == out) return counts;
  if (std::rename(path.c_str(), out.c_str()) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    return Status(StatusCode::kIoError, out + ": cannot rename the cut into place: " + std::strerror(err));
  }
  return counts;
}

}  // namespace mpe::cli
