// A logfile's summary in one streaming pass; the design comment is in mpe/log_summary.h.
#include "mpe/log_summary.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "mpe/byte_codec.h"
#include "mpe/log_reader.h"
#include "mpe/message_matcher.h"
#include "mpe/replay_spread.h"

namespace mpe::format {

namespace {

struct MessageEnd {
  int64_t time;
  uint64_t bytes;
};

using Constraints = std::map<std::pair<int32_t, int32_t>, int64_t>;  // (src, dst) -> tightest weight

// A message end or cancel on its way to the process that owns its receiver (same binary at both
// ends: copied as bytes).
struct RoutedEnd {
  enum What : uint32_t { kSend, kRecv, kCancel };
  uint64_t gid;
  int32_t src, dst, tag;
  What what;
  uint64_t seq;
  int64_t time;
  uint64_t bytes;
};

// The messages of one replay: paired by the one rule, counted, and, without shifts, the tightest
// causality constraint per rank pair (add_causality_constraint's weight) kept for the repair.
class MessageTally {
 public:
  MessageTally(const std::vector<int64_t>* shift, const SummaryOptions& options)
      : shift_(shift), ends_per_settle_(options.ends_per_settle) {}

  void add(bool send, const MessageKey& key, uint64_t seq, int64_t time, uint64_t bytes) {
    matcher_.add(send ? MessageSide::kSend : MessageSide::kRecv, key, seq, MessageEnd{time, bytes});
    ++since_settle_;
  }
  void cancel(const MessageKey& key, uint64_t seq) { matcher_.cancel_latest_send(key, seq); }
  // Between chunks: `watermark` is the start of the next chunk of the replay.
  void between_chunks(int64_t watermark) {
    if (since_settle_ >= ends_per_settle_) settle_at(watermark);
  }
  void settle_at(int64_t watermark) {
    since_settle_ = 0;
    matcher_.settle(watermark,
                    [this](const MessageKey& k, const MessageEnd& s, const MessageEnd& r) { pair(k, s, r); });
  }
  void finish(LogSummary* out) {
    matcher_.finish([this](const MessageKey& k, const MessageEnd& s, const MessageEnd& r) { pair(k, s, r); },
                    [&](const MessageKey&, size_t sends_left, size_t recvs_left) {
                      out->unmatched_sends += sends_left;
                      out->unmatched_recvs += recvs_left;
                    });
    out->matched = matched_;
    out->message_bytes = bytes_;
    out->backward_messages = backward_;
  }
  // The constraints, as add_causality_constraint() would have gathered them from every pair.
  std::map<std::pair<int32_t, int32_t>, int64_t> constraints() const {
    std::map<std::pair<int32_t, int32_t>, int64_t> need;
    for (const auto& [pair, w] : need_)
      need.emplace(std::pair<int32_t, int32_t>{static_cast<int32_t>(pair >> 32), static_cast<int32_t>(pair)},
                   w);
    return need;
  }

 private:
  void pair(const MessageKey& key, const MessageEnd& s, const MessageEnd& r) {
    ++matched_;
    bytes_ += s.bytes;
    const int32_t src = std::get<1>(key), dst = std::get<2>(key);
    if (shift_) {
      const auto moved = [&](int64_t t, int32_t rank) {
        return rank >= 0 && static_cast<size_t>(rank) < shift_->size()
                   ? saturating_add(t, (*shift_)[static_cast<size_t>(rank)])
                   : t;
      };
      if (moved(r.time, dst) < moved(s.time, src)) ++backward_;
      return;
    }
    if (r.time < s.time) ++backward_;
    const int64_t w = saturating_add(saturating_add(s.time, -std::max(r.time, INT64_MIN + 1)), 1);
    const uint64_t rank_pair = uint64_t{static_cast<uint32_t>(src)} << 32 | static_cast<uint32_t>(dst);
    auto [it, fresh] = need_.try_emplace(rank_pair, w);
    if (!fresh) it->second = std::max(it->second, w);
  }

  const std::vector<int64_t>* shift_;
  size_t ends_per_settle_;
  ReplayMessageMatcher<MessageEnd> matcher_;
  size_t since_settle_ = 0;
  uint64_t matched_ = 0, bytes_ = 0, backward_ = 0;
  std::unordered_map<uint64_t, int64_t> need_;  // (src << 32 | dst) -> tightest weight
};

// A one-sided record, kept until the end to be matched in each rank's time order.
struct RmaItem {
  int64_t time;
  uint32_t rank;
  uint32_t timeline;
  uint64_t seq;
  Event event;
};

// The earliest and latest time of a rank's states and events (load_trace's range after a repair).
struct RankRange {
  bool any = false;
  int64_t lo = 0, hi = 0;
  void extend(int64_t begin, int64_t end) {
    if (!any || begin < lo) lo = begin;
    if (!any || end > hi) hi = end;
    any = true;
  }
};

// One replay over the chunks in `order`: the consumer of each chunk, and what it adds up.
class SummaryPass {
 public:
  SummaryPass(const LogFile& file, const std::vector<size_t>& order, const std::vector<int64_t>* shift,
              const SummaryOptions& options, const SpreadPlan* spread = nullptr)
      : file_(file),
        spread_(spread),
        still_to_come_(starts_still_to_come(file, order)),
        messages_(shift, options),
        ranges_(file.definitions().ranks.size()) {
    // Timelines numbered as load_trace() numbers them: by (rank, thread).
    for (const IndexEntry& e : file.index()) timeline_of_.try_emplace({e.rank, e.thread}, 0u);
    uint32_t tl = 0;
    for (auto& [key, number] : timeline_of_) {
      number = tl++;
      ++out_.threads[key.first];
    }
    out_.timelines = tl;
    user_states_.resize(tl);
    if (spread_) outgoing_.resize(static_cast<size_t>(spread_->peers->size()));
  }

  void consume(const Chunk& chunk) {
    if (spread_)  // the rounds before this chunk's are over for every process
      while (round_ < spread_->round_of(chunk.index)) end_round();
    const IndexEntry& e = chunk.entry;
    const uint32_t tl = timeline_of_.at({e.rank, e.thread});
    Sink sink{*this, e.rank, e.thread, tl, uint64_t{chunk.index} << 32};
    interpret_records(file_, e, chunk.records, chunk.count, &user_states_[tl], sink);
    if (!spread_) messages_.between_chunks(still_to_come_[++consumed_]);
  }

  // Spread: takes part in the rounds left, telling the others whether this process failed.
  void finish_rounds(bool failed) {
    failed_ = failed_ || failed;
    while (spread_ && round_ < spread_->rounds) end_round();
  }
  // Spread: another process failed; this one stops at its next chunk.
  bool aborted() const { return aborted_; }

  // The summary, once every chunk was consumed.
  LogSummary finish() {
    messages_.finish(&out_);
    out_.unmatched_sends += unknown_peer_sends_;
    out_.unmatched_recvs += unknown_peer_recvs_;
    return std::move(out_);
  }
  std::map<std::pair<int32_t, int32_t>, int64_t> constraints() const { return messages_.constraints(); }
  const std::vector<RankRange>& ranges() const { return ranges_; }
  std::vector<RmaItem>& rma_items() { return rma_; }

 private:
  struct Sink {
    SummaryPass& p;
    uint32_t rank, thread, timeline;
    uint64_t chunk_seq;  // chunk index << 32; a record's seq adds its position
    uint32_t pos = 0;    // the record being interpreted (span() comes last for each)

    void state(int64_t start, int64_t end, uint32_t cat, uint32_t, uint32_t) {
      LogSummary::StateTotal& s = p.out_.states[cat];
      ++s.count;
      s.time += end - start;
      ++p.out_.rank_states[rank][cat];
      p.range(rank).extend(start, end);
    }
    void event(const Event& e) {
      switch (e.kind) {
        case RecordKind::kCollective:
          ++p.out_.collectives;
          break;
        case RecordKind::kMarker:
          ++p.out_.markers;
          break;
        case RecordKind::kUserEvent:
          ++p.out_.user_events;
          break;
        case RecordKind::kCommCreate:
          ++p.out_.comm_creates;
          break;
        case RecordKind::kSend:
          ++p.unknown_peer_sends_;
          break;
        case RecordKind::kRecv:
          ++p.unknown_peer_recvs_;
          break;
        default:
          break;
      }
      if (is_rma_record(e.kind)) p.rma_.push_back(RmaItem{e.time, rank, timeline, chunk_seq | pos, e});
      p.range(rank).extend(e.time, e.time);
    }
    void message_end(bool send, const MessageKey& key, int64_t t, uint64_t bytes) {
      p.route(send ? RoutedEnd::kSend : RoutedEnd::kRecv, key, chunk_seq | pos, t, bytes);
    }
    void cancel_send(const MessageKey& key) { p.route(RoutedEnd::kCancel, key, chunk_seq | pos, 0, 0); }
    void span(int64_t t, int64_t end) {
      ++pos;
      LogSummary& o = p.out_;
      if (o.records == 0 || t < o.t_begin) o.t_begin = t;
      if (o.records == 0 || end > o.t_end) o.t_end = end;
      ++o.records;
    }
  };

  RankRange& range(uint32_t rank) {
    if (rank >= ranges_.size()) ranges_.resize(rank + 1);
    return ranges_[rank];
  }

  // Adds an end to this process's matcher, or queues it for the process that owns its receiver.
  void route(RoutedEnd::What what, const MessageKey& key, uint64_t seq, int64_t t, uint64_t bytes) {
    const int owner = spread_ ? spread_->owner_of(std::get<2>(key)) : 0;
    if (!spread_ || owner == spread_->peers->rank()) return add(what, key, seq, t, bytes);
    RoutedEnd end{
        std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), what, seq, t, bytes};
    outgoing_[static_cast<size_t>(owner)].append(reinterpret_cast<const char*>(&end), sizeof end);
  }
  void add(RoutedEnd::What what, const MessageKey& key, uint64_t seq, int64_t t, uint64_t bytes) {
    if (what == RoutedEnd::kCancel)
      messages_.cancel(key, seq);
    else
      messages_.add(what == RoutedEnd::kSend, key, seq, t, bytes);
  }

  // One round's exchange: a byte saying whether the sender failed, then its ends for the receiver;
  // then the ends before the next round's first chunk are paired.
  void end_round() {
    std::vector<std::string> out(outgoing_.size());
    for (size_t q = 0; q < out.size(); ++q) {
      out[q].reserve(1 + outgoing_[q].size());
      out[q].push_back(failed_ ? 1 : 0);
      out[q] += outgoing_[q];
      outgoing_[q].clear();
    }
    const std::vector<std::string> in = spread_->peers->all_to_all(out);
    for (const std::string& from : in) {
      if (from.empty() || from[0] != 0) aborted_ = true;
      for (size_t at = 1; at + sizeof(RoutedEnd) <= from.size(); at += sizeof(RoutedEnd)) {
        RoutedEnd e;
        std::memcpy(&e, from.data() + at, sizeof e);
        add(e.what, MessageKey{e.gid, e.src, e.dst, e.tag}, e.seq, e.time, e.bytes);
      }
    }
    ++round_;
    messages_.settle_at(still_to_come_[std::min(round_ * spread_->round_chunks, still_to_come_.size() - 1)]);
  }

  const LogFile& file_;
  const SpreadPlan* spread_;
  std::vector<std::string> outgoing_;  // spread: ends for each process, this round
  size_t round_ = 0;
  bool failed_ = false, aborted_ = false;
  std::vector<int64_t> still_to_come_;  // no record of the k-th chunk handed out or later is before [k]
  size_t consumed_ = 0;
  MessageTally messages_;
  LogSummary out_;
  uint64_t unknown_peer_sends_ = 0, unknown_peer_recvs_ = 0;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> timeline_of_;
  std::vector<UserStates> user_states_;  // per timeline
  std::vector<RankRange> ranges_;        // per rank
  std::vector<RmaItem> rma_;
};

// What a replay adds up beyond the summary: what the causality repair and the one-sided matching
// need once every process's part is in.
struct Part {
  LogSummary summary;
  Constraints need;
  std::vector<RankRange> ranges;  // per rank
  std::vector<RmaItem> rma;
};

// One replay of the chunks in `order` (this process's own, when spread), handing them to also_feed
// too. Spread, every process takes part in every round whatever happens, and all fail together.
StatusOr<Part> replay(const LogFile& file, const std::vector<size_t>& order,
                      const std::vector<int64_t>* shift, const std::vector<ChunkConsumer>& also_feed,
                      const SummaryOptions& options, const SpreadPlan* spread) {
  SummaryPass pass(file, spread ? spread->order : order, shift, options, spread);
  std::vector<ChunkConsumer> consumers{[&pass](const Chunk& c) { pass.consume(c); }};
  consumers.insert(consumers.end(), also_feed.begin(), also_feed.end());
  ChunkPassOptions chunk_pass;
  chunk_pass.decoders = 0;
  chunk_pass.order = &order;
  if (spread) chunk_pass.keep_going = [&pass](size_t) { return !pass.aborted(); };
  Status status = run_chunk_pass(file, consumers, chunk_pass);
  const bool failed_here = !status.ok() && !pass.aborted();
  pass.finish_rounds(failed_here);
  if (spread) status = agree_on_failure(*spread->peers, status, failed_here);
  MPE_RETURN_IF_ERROR(status);
  Part part{pass.finish(), pass.constraints(), pass.ranges(), std::move(pass.rma_items())};
  return part;
}

// A part as bytes, for process 0 (ranges only for the ranks that have any).
std::string pack(const Part& p) {
  ByteWriter w;
  const LogSummary& s = p.summary;
  for (uint64_t v : {s.records, s.collectives, s.markers, s.user_events, s.comm_creates, s.matched,
                     s.unmatched_sends, s.unmatched_recvs, s.backward_messages, s.message_bytes})
    w.pod(v);
  w.pod(s.t_begin), w.pod(s.t_end);
  w.pod(s.states.size());
  for (const auto& [cat, t] : s.states) w.pod(cat), w.pod(t);
  w.pod(s.rank_states.size());
  for (const auto& [rank, counts] : s.rank_states) {
    w.pod(rank), w.pod(counts.size());
    for (const auto& [cat, n] : counts) w.pod(cat), w.pod(n);
  }
  w.pod(p.need.size());
  for (const auto& [ranks, weight] : p.need) w.pod(ranks.first), w.pod(ranks.second), w.pod(weight);
  for (uint32_t r = 0; r < p.ranges.size(); ++r)
    if (p.ranges[r].any) w.pod(r), w.pod(p.ranges[r].lo), w.pod(p.ranges[r].hi);
  w.pod(UINT32_MAX);
  w.pod(p.rma.size());
  for (const RmaItem& it : p.rma) w.pod(it);
  return std::move(w.data());
}

// Adds a packed part into `into` (sums, earliest and latest times, the tightest constraints).
void unpack_into(const std::string& bytes, Part* into) {
  ByteReader r(bytes.data(), bytes.size());
  LogSummary& s = into->summary;
  const bool had_records = s.records > 0;
  const uint64_t records = r.pod<uint64_t>();
  s.records += records;
  for (uint64_t* v : {&s.collectives, &s.markers, &s.user_events, &s.comm_creates, &s.matched,
                      &s.unmatched_sends, &s.unmatched_recvs, &s.backward_messages, &s.message_bytes})
    *v += r.pod<uint64_t>();
  const int64_t t_begin = r.pod<int64_t>();
  const int64_t t_end = r.pod<int64_t>();
  if (records > 0 && (!had_records || t_begin < s.t_begin)) s.t_begin = t_begin;
  if (records > 0 && (!had_records || t_end > s.t_end)) s.t_end = t_end;
  for (size_t n = r.pod<size_t>(); n-- > 0;) {
    const uint32_t cat = r.pod<uint32_t>();
    const auto t = r.pod<LogSummary::StateTotal>();
    s.states[cat].count += t.count;
    s.states[cat].time += t.time;
  }
  for (size_t n = r.pod<size_t>(); n-- > 0;) {
    auto& counts = s.rank_states[r.pod<uint32_t>()];
    for (size_t k = r.pod<size_t>(); k-- > 0;) {
      const uint32_t cat = r.pod<uint32_t>();
      counts[cat] += r.pod<uint64_t>();
    }
  }
  for (size_t n = r.pod<size_t>(); n-- > 0;) {
    const int32_t src = r.pod<int32_t>();
    const int32_t dst = r.pod<int32_t>();
    const std::pair<int32_t, int32_t> ranks{src, dst};
    const int64_t weight = r.pod<int64_t>();
    auto [it, fresh] = into->need.try_emplace(ranks, weight);
    if (!fresh) it->second = std::max(it->second, weight);
  }
  for (uint32_t rank; (rank = r.pod<uint32_t>()) != UINT32_MAX && r.left() > 0;) {
    const int64_t lo = r.pod<int64_t>();
    const int64_t hi = r.pod<int64_t>();
    if (rank >= into->ranges.size()) into->ranges.resize(rank + 1);
    into->ranges[rank].extend(lo, hi);
  }
  for (size_t n = r.pod<size_t>(); n-- > 0;) into->rma.push_back(r.pod<RmaItem>());
}

// The spread replay's parts, added up at process 0 (the others keep an empty part).
StatusOr<Part> replay_everywhere(const LogFile& file, const std::vector<size_t>& order,
                                 const std::vector<int64_t>* shift,
                                 const std::vector<ChunkConsumer>& also_feed, const SummaryOptions& options,
                                 const SpreadPlan* spread) {
  auto mine = replay(file, order, shift, also_feed, options, spread);
  if (!mine.ok() || !spread) return mine;
  const std::vector<std::string> parts = spread->peers->gather(pack(*mine));
  Part sum;
  sum.summary.timelines = mine->summary.timelines;
  sum.summary.threads = mine->summary.threads;
  for (const std::string& bytes : parts) unpack_into(bytes, &sum);
  return sum;
}

// load_trace()'s causality repair on a summary: the shifts, the time range of the shifted states
// and events, and whether the messages must be counted again (when the shifts leave some backward).
bool repair_causality(uint32_t nranks, const Part& part, LogSummary* out) {
  std::vector<int64_t> shift = causality_shifts(part.need, nranks);
  bool any = false;
  for (size_t r = 0; r < part.ranges.size(); ++r) {
    const RankRange& range = part.ranges[r];
    if (!range.any) continue;
    const int64_t d = r < shift.size() ? shift[r] : 0;
    const int64_t lo = saturating_add(range.lo, d), hi = saturating_add(range.hi, d);
    if (!any || lo < out->t_begin) out->t_begin = lo;
    if (!any || hi > out->t_end) out->t_end = hi;
    any = true;
  }
  // A pair's messages are none of them backward once shifted when its weight w (send - receive
  // + 1 at most) is at most shift[dst] - shift[src] + 1, which a met constraint gives. Otherwise
  // (a contradiction, a message to itself) they are counted again with the shifts applied.
  auto shift_of = [&](int32_t rank) {
    return rank >= 0 && static_cast<size_t>(rank) < shift.size() ? shift[static_cast<size_t>(rank)] : 0;
  };
  bool all_met = true;
  for (const auto& [ranks, w] : part.need)
    if (w > shift_of(ranks.second) - shift_of(ranks.first) + 1) all_met = false;
  out->backward_messages = 0;
  out->causality_shift_ns = std::move(shift);
  return !all_met;
}

// Matches the one-sided records as match_rma() does: per rank in (time, timeline, logged) order.
RmaModel match_one_sided(const LogFile& file, std::vector<RmaItem>& items,
                         const std::vector<int64_t>& shift) {
  for (RmaItem& it : items)
    if (it.rank < shift.size()) it.event.time = it.time = saturating_add(it.time, shift[it.rank]);
  std::sort(items.begin(), items.end(), [](const RmaItem& a, const RmaItem& b) {
    return std::tie(a.rank, a.time, a.timeline, a.seq) < std::tie(b.rank, b.time, b.timeline, b.seq);
  });
  RmaMatcher m(file);
  for (const RmaItem& it : items) m.feed(it.rank, it.timeline, it.event);
  return m.finish();
}

}  // namespace

StatusOr<LogSummary> summarize(const LogFile& file, const std::vector<ChunkConsumer>& also_feed,
                               const SummaryOptions& options) {
  const std::vector<size_t> global = chunks_by_start(file);
  std::optional<SpreadPlan> spread;
  std::vector<size_t> order = global;
  if (options.peers && options.peers->size() > 1) {
    spread = plan_spread(file, options.peers, global);
    order = spread->own_chunks(file);
  }
  const SpreadPlan* plan = spread ? &*spread : nullptr;
  auto part = replay_everywhere(file, order, nullptr, also_feed, options, plan);
  if (!part.ok()) return part.status();
  const bool root = !plan || plan->peers->rank() == 0;
  LogSummary out = std::move(part->summary);
  // Whether the causality repair runs, its shifts, and whether it counts again: process 0's call.
  bool recount =
      root && out.backward_messages > 0 && repair_causality(file.definitions().world_size, *part, &out);
  if (plan) {
    ByteWriter w;
    w.pod(recount);
    for (int64_t d : out.causality_shift_ns) w.pod(d);
    const std::string decided = plan->peers->broadcast(root ? w.data() : std::string());
    ByteReader r(decided.data(), decided.size());
    recount = r.pod<bool>();
    std::vector<int64_t> shift;
    while (r.left() > 0) shift.push_back(r.pod<int64_t>());
    if (!root) out.causality_shift_ns = std::move(shift);
  }
  if (recount) {
    auto again = replay_everywhere(file, order, &out.causality_shift_ns, {}, options, plan);
    if (!again.ok()) return again.status();
    out.backward_messages = again->summary.backward_messages;
  }
  if (!root) return LogSummary{};
  out.rma = match_one_sided(file, part->rma, out.causality_shift_ns);
  return out;
}

}  // namespace mpe::format
