// A logfile's summary in one streaming pass; the design comment is in mpe/log_summary.h.
#include "mpe/log_summary.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "mpe/log_reader.h"
#include "mpe/message_matcher.h"

namespace mpe::format {

namespace {

struct MessageEnd {
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
    if (since_settle_ < ends_per_settle_) return;
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
              const SummaryOptions& options)
      : file_(file),
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
  }

  void consume(const Chunk& chunk) {
    const IndexEntry& e = chunk.entry;
    const uint32_t tl = timeline_of_.at({e.rank, e.thread});
    Sink sink{*this, e.rank, e.thread, tl, uint64_t{chunk.index} << 32};
    interpret_records(file_, e, chunk.records, chunk.count, &user_states_[tl], sink);
    messages_.between_chunks(still_to_come_[++consumed_]);
  }

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
      p.messages_.add(send, key, chunk_seq | pos, t, bytes);
    }
    void cancel_send(const MessageKey& key) { p.messages_.cancel(key, chunk_seq | pos); }
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

  const LogFile& file_;
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

// One replay of every chunk in `order`, handing the chunks to also_feed too.
StatusOr<LogSummary> replay(const LogFile& file, const std::vector<size_t>& order,
                            const std::vector<ChunkConsumer>& also_feed, SummaryPass* pass) {
  std::vector<ChunkConsumer> consumers{[pass](const Chunk& c) { pass->consume(c); }};
  consumers.insert(consumers.end(), also_feed.begin(), also_feed.end());
  ChunkPassOptions options;
  options.decoders = 0;
  options.order = &order;
  MPE_RETURN_IF_ERROR(run_chunk_pass(file, consumers, options));
  return pass->finish();
}

// load_trace()'s causality repair on a summary: the shifts, the time range of the shifted states
// and events, and the messages still backward (counted again only when the shifts leave some).
Status repair_causality(const LogFile& file, const std::vector<size_t>& order, const SummaryPass& pass,
                        const SummaryOptions& options, LogSummary* out) {
  const uint32_t nranks = file.definitions().world_size;
  const auto need = pass.constraints();
  std::vector<int64_t> shift = causality_shifts(need, nranks);
  bool any = false;
  for (size_t r = 0; r < pass.ranges().size(); ++r) {
    const RankRange& range = pass.ranges()[r];
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
  for (const auto& [ranks, w] : need)
    if (w > shift_of(ranks.second) - shift_of(ranks.first) + 1) all_met = false;
  out->backward_messages = 0;
  if (!all_met) {
    SummaryPass again(file, order, &shift, options);
    auto recount = replay(file, order, {}, &again);
    if (!recount.ok()) return recount.status();
    out->backward_messages = recount->backward_messages;
  }
  out->causality_shift_ns = std::move(shift);
  return Status();
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
  const std::vector<size_t> order = chunks_by_start(file);
  SummaryPass pass(file, order, nullptr, options);
  auto summary = replay(file, order, also_feed, &pass);
  if (!summary.ok()) return summary.status();
  LogSummary out = std::move(summary).value();
  if (out.backward_messages > 0) MPE_RETURN_IF_ERROR(repair_causality(file, order, pass, options, &out));
  out.rma = match_one_sided(file, pass.rma_items(), out.causality_shift_ns);
  return out;
}

}  // namespace mpe::format
