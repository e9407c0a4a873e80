// The wait states by a replay in time order, holding only what is in flight (Scalasca's forward
// replay); the design comment is in mpe/waits.h.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "endpoints.h"
#include "message_observer.h"
#include "mpe/byte_codec.h"
#include "mpe/chunk_pass.h"
#include "mpe/message_matcher.h"
#include "mpe/replay_spread.h"
#include "mpe/waits.h"
#include "rank_watermarks.h"
#include "timeline_scan.h"
#include "waits_report_parts.h"
#include "waits_tally.h"

namespace mpe::analysis::waits {

namespace {

using format::MessageKey;
using format::MessageSide;

constexpr size_t kNone = SIZE_MAX;

// Items reused through a free list: memory follows the most in flight at once, not the run.
template <class T>
class Slab {
 public:
  size_t add(T v) {
    if (free_.empty()) {
      items_.push_back(std::move(v));
      return items_.size() - 1;
    }
    const size_t i = free_.back();
    free_.pop_back();
    items_[i] = std::move(v);
    return i;
  }
  T& operator[](size_t i) { return items_[i]; }
  void remove(size_t i) {
    items_[i].live = false;
    free_.push_back(i);
  }
  // Calls f(index, item) for each item not removed.
  template <class F>
  void for_each(F&& f) {
    for (size_t i = 0; i < items_.size(); ++i)
      if (items_[i].live) f(i, items_[i]);
  }

 private:
  std::vector<T> items_;
  std::vector<size_t> free_;
};

// An end in the replay's matcher: its time and its slot (a SendSlot or a RecvSlot here). Small,
// because the matcher holds every end in flight.
struct PairEnd {
  int64_t time;
  uint32_t slot;
};
constexpr uint32_t kNoSlot = UINT32_MAX;

struct SendSlot {  // a send: its call not known yet, or in the matcher, or paired with a receive in flight
  SendEnd end;
  uint64_t seq;
  bool resolved = false;   // its call is known (and, owned here, it is in the matcher)
  bool cancelled = false;  // withdrawn before its call was known
  bool live = true;
};

struct RecvSlot {  // a receive not yet both grouped with its call's others and paired
  RecvEnd end;
  uint64_t seq;
  uint32_t timeline;
  uint32_t group = kNoSlot;
  uint32_t send = kNoSlot;  // once paired
  bool resolved = false;
  bool live = true;
};

// The receives one call completed (consecutive in logged order, same call start): the one whose
// send began latest (kept in its slots) makes the call a Late Sender.
struct Group {
  int64_t call_start;
  int64_t worst_start = 0;
  uint64_t worst_seq = 0;
  uint32_t worst = kNoSlot;  // the receive's slot
  uint32_t pending = 0;      // grouped receives not yet paired
  bool closed = false;       // the timeline's next receive was another call's
  bool live = true;
};

struct CollSlot {  // a collective member whose call (and completion) is not known yet
  CollEnd end;
  int needs;  // resolutions still to come: its call, and a nonblocking one's completion
  bool live = true;
};

// What crosses between processes, each after a byte saying which it is (same binary at both ends).
enum RoutedKind : uint8_t { kRoutedSend, kRoutedCancel, kRoutedColl };
struct RoutedSend {
  uint64_t gid;
  int32_t src, dst, tag;
  uint8_t waits_for_receiver;
  uint64_t seq;
  int64_t time;
  Call call;
};

// One replay over this process's chunks: the Store of its timelines' scans, the matcher of the
// ends, the receive groups and collective instances in flight, and the tally.
class Replay {
 public:
  using Scan = TimelineScan<Replay>;
  struct Timeline {
    std::unique_ptr<Scan> scan;
    std::deque<uint32_t> recvs;  // receive slots in logged order, not yet grouped
    uint32_t open_group = kNoSlot;
  };

  // What the matcher calls for each pair it makes.
  auto on_pair() {  // defined first: its type is deduced
    return [this](const MessageKey&, const PairEnd& s, const PairEnd& r) { pair(s, r); };
  }

  Replay(const format::LogFile& file, const Options& options, const std::vector<int64_t>& shift,
         const format::SpreadPlan* spread, Report* report)
      : file_(file),
        options_(options),
        spread_(spread),
        shift_{shift, file.definitions().world_size},
        report_(report),
        tally_(report, options),
        traits_(category_traits(file)) {
    scan_options_.eager_limit = options.eager_limit;
    totals_.mpi_per_rank.assign(file.definitions().world_size, 0);
    for (const format::IndexEntry& e : file.index()) timeline_of_.try_emplace({e.rank, e.thread}, 0u);
    uint32_t n = 0;
    for (auto& [key, number] : timeline_of_) number = n++;
    timelines_.resize(n);
    index_ranks();
    if (spread_) outgoing_.resize(static_cast<size_t>(spread_->peers->size()));
  }

  void consume(const format::Chunk& chunk) {
    if (spread_)  // the rounds before this chunk's are over for every process
      while (round_ < spread_->round_of(chunk.index)) end_round();
    current_ = timeline_of_.at({chunk.entry.rank, chunk.entry.thread});
    Timeline& t = timelines_[current_];
    if (!t.scan) t.scan = std::make_unique<Scan>(shared_, *this, chunk.entry.rank, chunk.entry.thread);
    totals_.records += chunk.count;
    scan(t).feed(chunk.records, chunk.count, chunk.index);
    rank_consumed(chunk.entry.rank);
  }

  // Spread: takes part in the rounds left, telling the others whether this process failed.
  void finish_rounds(bool failed) {
    failed_ = failed_ || failed;
    while (spread_ && round_ < spread_->rounds) end_round();
  }
  // Spread: another process failed; this one stops at its next chunk.
  bool aborted() const { return aborted_; }

  // Once every chunk was consumed (and, spread, every round was over, with no process failed):
  // what the log leaves open is final, the rest is paired and measured.
  void finish() {
    for (Timeline& t : timelines_) {
      if (t.scan) scan(t).settle_pending(INT64_MAX);
      if (t.open_group != kNoSlot) close_group(t.open_group);
    }
    colls_.for_each([&](size_t i, CollSlot& c) {  // nonblocking ones the log gives no completion for
      route_coll(c.end);
      colls_.remove(i);
    });
    if (spread_) exchange();
    if (options_.observer) {  // what finish() leaves, told before it forgets the ends
      matcher_.settle(INT64_MAX, on_pair());
      matcher_.for_each_left([this](const MessageKey&, MessageSide side, const PairEnd& e) {
        if (side == MessageSide::kSend)
          options_.observer->unpaired_send(sends_[e.slot].end);
        else
          options_.observer->unpaired_recv(recvs_[e.slot].end, recvs_[e.slot].seq);
      });
    }
    matcher_.finish(on_pair(), [this](const MessageKey&, size_t sends, size_t recvs) {
      report_->unmatched += sends + recvs;
    });
    groups_.for_each([&](size_t g, Group&) {
      finish_group(static_cast<uint32_t>(g));
    });  // those with receives never paired
    for (auto& [key, members] : instances_) measure_instance(members);
    instances_.clear();
    tally_.finish();
    report_->records = totals_.records;
    report_->mpi_ns = totals_.mpi_ns;
    report_->mpi_per_rank = std::move(totals_.mpi_per_rank);
  }

  const Constraints& constraints() const { return need_; }

  // The Store of the timelines' scans (timeline_scan.h).
  size_t add_send(const SendEnd& s, uint64_t seq) { return sends_.add(SendSlot{s, seq}); }
  size_t add_recv(const RecvEnd& r, uint64_t seq) {
    const size_t slot = recvs_.add(RecvSlot{r, seq, current_});
    timelines_[current_].recvs.push_back(static_cast<uint32_t>(slot));
    return slot;
  }
  size_t add_coll(const CollEnd& c, uint64_t) { return colls_.add(CollSlot{c, c.complete ? 1 : 2}); }
  SendEnd& send(size_t i) { return sends_[i].end; }
  RecvEnd& recv(size_t i) { return recvs_[i].end; }
  CollEnd& coll(size_t i) { return colls_[i].end; }
  void resolved(Need what, size_t i) {
    switch (what) {
      case Need::kSend:
        sends_[i].resolved = true;
        if (sends_[i].cancelled)
          sends_.remove(i);
        else
          route_send(static_cast<uint32_t>(i));
        return;
      case Need::kRecv: {
        RecvSlot& r = recvs_[i];
        r.resolved = true;
        note_key(
            matcher_.add(MessageSide::kRecv, r.end.key, r.seq, PairEnd{r.end.time, static_cast<uint32_t>(i)}),
            r.end.key);
        ++since_settle_;
        advance(timelines_[r.timeline]);
        return;
      }
      case Need::kColl:
      case Need::kCollDone:
        if (--colls_[i].needs == 0) {
          route_coll(colls_[i].end);
          colls_.remove(i);
        }
        return;
    }
  }
  // A cancel withdraws the latest send of its key before it (the matcher's rule). A send whose
  // call is not known yet is not in the matcher: the latest such of the key is withdrawn here (a
  // search of the sends in flight; cancels are rare, and no current writer logs them).
  void cancel_send(const MessageKey& key, uint64_t seq) {
    size_t latest = kNone;
    sends_.for_each([&](size_t i, SendSlot& s) {
      if (!s.resolved && s.end.key == key && s.seq < seq && !s.cancelled &&
          (latest == kNone || s.seq > sends_[latest].seq))
        latest = i;
    });
    if (latest != kNone)
      sends_[latest].cancelled = true;
    else
      route_cancel(key, seq);
  }

 private:
  Scan& scan(Timeline& t) { return *t.scan; }

  // Each rank's timelines, and each message key listed under its two ranks, for pairing a key as
  // far as both its ranks have gone (rank_watermarks.h).
  void index_ranks() {
    const uint32_t nranks = watermarks_.ranks();
    keys_of_rank_.resize(nranks);
    timelines_of_rank_.assign(nranks + 1, 0);
    for (const auto& [key, id] : timeline_of_)
      if (key.first < nranks) ++timelines_of_rank_[key.first + 1];
    for (uint32_t r = 0; r < nranks; ++r) timelines_of_rank_[r + 1] += timelines_of_rank_[r];
  }
  // A key first seen: listed under its two ranks.
  void note_key(uint32_t id, const MessageKey& key) {
    if (id < key_ranks_.size()) return;
    key_ranks_.emplace_back(std::get<1>(key), std::get<2>(key));
    for (const int32_t rank : {std::get<1>(key), std::get<2>(key)})
      if (rank >= 0 && static_cast<size_t>(rank) < keys_of_rank_.size() &&
          (keys_of_rank_[static_cast<size_t>(rank)].empty() ||
           keys_of_rank_[static_cast<size_t>(rank)].back() != id))
        keys_of_rank_[static_cast<size_t>(rank)].push_back(id);
  }
  // A chunk of `rank` was consumed: its ends before its new watermark whose call never came are
  // final; its keys are paired as far as both their ranks have gone.
  void rank_consumed(uint32_t rank) {
    if (rank >= watermarks_.ranks()) return;
    watermarks_.consumed(rank);
    const int64_t mine = watermarks_.of(static_cast<int32_t>(rank));
    for (uint32_t id = timelines_of_rank_[rank]; id < timelines_of_rank_[rank + 1]; ++id)
      if (timelines_[id].scan) scan(timelines_[id]).settle_pending(mine);
    if (since_settle_ < options_.ends_per_settle) return;
    since_settle_ = 0;
    settle_keys_of(rank);
  }
  void settle_keys_of(uint32_t rank) {
    for (const uint32_t id : keys_of_rank_[rank]) {
      const auto [src, dst] = key_ranks_[id];
      const int64_t w = std::min(watermarks_.of(src), watermarks_.of(dst));
      matcher_.settle_key(id, w, on_pair());
    }
  }

  // A send (or a cancel) goes to the process that owns its receiver.
  ByteWriter* outgoing_to_receiver(const MessageKey& key) {
    const int owner = spread_ ? spread_->owner_of(std::get<2>(key)) : 0;
    return !spread_ || owner == spread_->peers->rank() ? nullptr : &outgoing_[static_cast<size_t>(owner)];
  }
  void route_send(uint32_t slot) {
    const SendSlot& s = sends_[slot];
    ByteWriter* w = outgoing_to_receiver(s.end.key);
    if (!w) return match_send(slot);
    const MessageKey& key = s.end.key;
    w->pod(kRoutedSend);
    w->pod(RoutedSend{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key),
                      static_cast<uint8_t>(s.end.waits_for_receiver), s.seq, s.end.time, s.end.call});
    sends_.remove(slot);
  }
  void route_cancel(const MessageKey& key, uint64_t seq) {
    ByteWriter* w = outgoing_to_receiver(key);
    if (!w) return cancel_matched(key, seq);
    w->pod(kRoutedCancel);
    w->pod(RoutedSend{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), 0, seq, 0,
                      Call{}});
  }
  void match_send(uint32_t slot) {
    const SendSlot& s = sends_[slot];
    note_key(matcher_.add(MessageSide::kSend, s.end.key, s.seq, PairEnd{s.end.time, slot}), s.end.key);
    ++since_settle_;
  }
  void cancel_matched(const MessageKey& key, uint64_t seq) {
    if (const auto withdrawn = matcher_.cancel_latest_send(key, seq)) sends_.remove(withdrawn->slot);
  }

  // A collective member goes to the process that measures its instance.
  void route_coll(const CollEnd& c) {
    const int owner = spread_ ? static_cast<int>((c.gid * 0x9E3779B97F4A7C15ull ^ c.k) %
                                                 static_cast<uint64_t>(spread_->peers->size()))
                              : 0;
    if (!spread_ || owner == spread_->peers->rank()) return add_member(c);
    ByteWriter& w = outgoing_[static_cast<size_t>(owner)];
    w.pod(kRoutedColl);
    w.pod(c);
  }
  void add_member(const CollEnd& c) {
    auto it = instances_.try_emplace(InstanceKey{c.gid, c.k}).first;
    it->second.push_back(c);
    if (it->second.size() == c.members) {
      measure_instance(it->second);
      instances_.erase(it);
    }
  }
  void measure_instance(std::vector<CollEnd>& members) {
    std::sort(members.begin(), members.end(),
              [](const CollEnd& a, const CollEnd& b) { return a.member < b.member; });
    tally_collective(members.data(), members.data() + members.size(), shift_, tally_, *report_);
  }

  // A matched message: Late Receiver now; Late Sender once its receive's group is complete.
  void pair(const PairEnd& send, const PairEnd& recv) {
    RecvSlot& r = recvs_[recv.slot];
    const SendEnd& s = sends_[send.slot].end;
    if (r.end.time < s.time) {  // backward: the tightest constraint per rank pair (add_causality_constraint)
      const int64_t w =
          format::saturating_add(format::saturating_add(s.time, -std::max(r.end.time, INT64_MIN + 1)), 1);
      const uint64_t ranks = uint64_t{static_cast<uint32_t>(std::get<1>(s.key))} << 32 |
                             static_cast<uint32_t>(std::get<2>(s.key));
      auto [it, fresh] = need_.try_emplace(ranks, w);
      if (!fresh) it->second = std::max(it->second, w);
    }
    tally_late_receiver(s, r.end, shift_, tally_);
    if (options_.observer) options_.observer->paired(s, r.end, r.seq);
    r.send = send.slot;
    if (r.group == kNoSlot) return;  // grouped later, when the receives logged before it have their calls
    const uint32_t g = r.group;
    fold(g, recv.slot);
    if (--groups_[g].pending == 0 && groups_[g].closed) finish_group(g);
  }

  // Groups a timeline's receives in logged order, as far as their calls are known.
  void advance(Timeline& t) {
    while (!t.recvs.empty() && recvs_[t.recvs.front()].resolved) {
      const uint32_t slot = t.recvs.front();
      t.recvs.pop_front();
      const int64_t start = recvs_[slot].end.call.start;
      if (t.open_group == kNoSlot || groups_[t.open_group].call_start != start) {
        if (t.open_group != kNoSlot) close_group(t.open_group);
        t.open_group = static_cast<uint32_t>(groups_.add(Group{start}));
      }
      if (recvs_[slot].send != kNoSlot) {
        fold(t.open_group, slot);
      } else {
        recvs_[slot].group = t.open_group;
        ++groups_[t.open_group].pending;
      }
    }
  }
  // Takes a paired receive into group g: the latest send wins; of equal ones, the receive logged
  // first (the in-memory analysis's rule). The loser's slots are freed.
  void fold(uint32_t g, uint32_t recv) {
    Group& group = groups_[g];
    const RecvSlot& r = recvs_[recv];
    const SendEnd& s = sends_[r.send].end;
    const int64_t start = s.call.start + shift_(std::get<1>(s.key));
    if (group.worst != kNoSlot &&
        (start < group.worst_start || (start == group.worst_start && r.seq > group.worst_seq)))
      return release(recv);
    if (group.worst != kNoSlot) release(group.worst);
    group.worst = recv;
    group.worst_start = start;
    group.worst_seq = r.seq;
  }
  void release(uint32_t recv) {
    sends_.remove(recvs_[recv].send);
    recvs_.remove(recv);
  }
  void close_group(uint32_t g) {
    groups_[g].closed = true;
    if (groups_[g].pending == 0) finish_group(g);
  }
  void finish_group(uint32_t g) {
    const uint32_t worst = groups_[g].worst;
    if (worst != kNoSlot) {
      tally_late_sender(sends_[recvs_[worst].send].end, recvs_[worst].end, shift_, tally_);
      release(worst);
    }
    groups_.remove(g);
  }

  // One round's exchange: a byte saying whether the sender failed, then what it routed here; then
  // the keys of the ranks owned elsewhere are paired as far as the round took them.
  void end_round() {
    ++round_;
    exchange();
    // the keys of the ranks replayed elsewhere, as far as the round took them
    watermarks_.advance_remote(round_ * spread_->round_chunks,
                               [this](uint32_t rank) { settle_keys_of(rank); });
  }
  void exchange() {
    std::vector<std::string> out(outgoing_.size());
    for (size_t q = 0; q < out.size(); ++q) {
      out[q].reserve(1 + outgoing_[q].data().size());
      out[q].push_back(failed_ ? 1 : 0);
      out[q] += outgoing_[q].data();
      outgoing_[q].data().clear();
    }
    const std::vector<std::string> in = spread_->peers->all_to_all(out);
    for (const std::string& from : in) {
      if (from.empty() || from[0] != 0) aborted_ = true;
      ByteReader r(from.data() + std::min<size_t>(1, from.size()),
                   from.size() - std::min<size_t>(1, from.size()));
      while (r.left() > 0) {
        const auto kind = r.pod<RoutedKind>();
        if (kind == kRoutedColl) {
          add_member(r.pod<CollEnd>());
          continue;
        }
        const auto s = r.pod<RoutedSend>();
        const MessageKey key{s.gid, s.src, s.dst, s.tag};
        if (kind == kRoutedCancel) {
          cancel_matched(key, s.seq);
          continue;
        }
        SendSlot slot{SendEnd{key, s.time, s.waits_for_receiver != 0, false, 0, s.call}, s.seq};
        slot.resolved = true;
        match_send(static_cast<uint32_t>(sends_.add(slot)));
      }
    }
  }

  struct InstanceKey {
    uint64_t gid;
    uint32_t k;
    bool operator==(const InstanceKey&) const = default;
  };
  struct InstanceHash {
    size_t operator()(const InstanceKey& key) const { return key.gid * 0x9E3779B97F4A7C15ull ^ key.k; }
  };

  const format::LogFile& file_;
  const Options& options_;
  const format::SpreadPlan* spread_;
  Shifts shift_;
  Report* report_;
  Tally tally_;
  const std::vector<Traits> traits_;
  ScanOptions scan_options_;
  ScanTotals totals_;
  Scan::Shared shared_{file_, traits_, scan_options_, totals_, {}};
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> timeline_of_;
  uint32_t current_ = 0;  // the timeline of the chunk being scanned
  // How far each rank has gone, each key's (source, destination) by its matcher id, and each
  // rank's keys and timelines.
  RankWatermarks watermarks_{file_, format::chunks_by_start(file_), [this](uint32_t rank) {
                               return spread_ &&
                                      spread_->owner_of(static_cast<int32_t>(rank)) != spread_->peers->rank();
                             }};
  std::vector<std::pair<int32_t, int32_t>> key_ranks_;
  std::vector<std::vector<uint32_t>> keys_of_rank_;
  std::vector<uint32_t> timelines_of_rank_;  // rank r's timelines: [r], [r + 1]
  size_t since_settle_ = 0, round_ = 0;
  bool failed_ = false, aborted_ = false;
  std::vector<ByteWriter> outgoing_;  // spread: what goes to each process this round
  format::ReplayMessageMatcher<PairEnd> matcher_;
  Slab<SendSlot> sends_;
  Slab<RecvSlot> recvs_;
  Slab<Group> groups_;
  Slab<CollSlot> colls_;
  std::unordered_map<InstanceKey, std::vector<CollEnd>, InstanceHash> instances_;
  Constraints need_;
  // Last, so that the scans (whose ends may still be pending after a failure) go first.
  std::vector<Timeline> timelines_;
};

// One replay of this process's chunks (`order`), the first one also feeding options.also_feed.
// Spread, every process takes part in every round whatever happens, and all fail together.
Status replay(const format::LogFile& file, const std::vector<size_t>& order, const Options& options,
              const std::vector<int64_t>& shift, const format::SpreadPlan* spread, Report* report,
              Constraints* need, bool first) {
  *report = empty_report(file);
  if (options.observer) options.observer->begin(shift);
  Replay r(file, options, shift, spread, report);
  format::ChunkPassOptions pass;
  pass.decoders = 0;
  pass.order = &order;
  pass.what = "wait-state analysis";
  pass.keep_going = [&](size_t) { return !r.aborted() && (!options.keep_going || options.keep_going()); };
  std::vector<format::ChunkConsumer> consumers{[&r](const format::Chunk& c) { r.consume(c); }};
  if (first) consumers.insert(consumers.end(), options.also_feed.begin(), options.also_feed.end());
  Status status = format::run_chunk_pass(file, consumers, pass);
  const bool failed_here = !status.ok() && !r.aborted();
  r.finish_rounds(failed_here);
  if (spread) status = format::agree_on_failure(*spread->peers, status, failed_here);
  MPE_RETURN_IF_ERROR(status);
  r.finish();
  *need = r.constraints();
  return Status();
}

// The spread replay's reports and constraints, added up at process 0 (the others keep empty ones).
Status replay_everywhere(const format::LogFile& file, const std::vector<size_t>& order,
                         const Options& options, const std::vector<int64_t>& shift,
                         const format::SpreadPlan* spread, Report* report, Constraints* need, bool first) {
  MPE_RETURN_IF_ERROR(replay(file, order, options, shift, spread, report, need, first));
  if (!spread) return Status();
  const std::vector<std::string> parts = spread->peers->gather(pack(*report, *need));
  *report = empty_report(file);
  need->clear();
  for (const std::string& bytes : parts) unpack_into(bytes, report, need);
  return Status();
}

}  // namespace

StatusOr<Report> analyze(const format::LogFile& file, const Options& options) {
  const uint32_t nranks = file.definitions().world_size;
  const std::vector<size_t> global = format::chunks_by_start(file);
  std::optional<format::SpreadPlan> plan;
  std::vector<size_t> order = global;
  if (options.peers && options.peers->size() > 1) {
    plan = format::plan_spread(file, options.peers, global);
    order = plan->own_chunks(file);
  }
  const format::SpreadPlan* spread = plan ? &*plan : nullptr;
  const bool root = !spread || spread->peers->rank() == 0;
  Report report;
  Constraints need;
  std::vector<int64_t> shift(nranks, 0);
  MPE_RETURN_IF_ERROR(replay_everywhere(file, order, options, shift, spread, &report, &need, true));
  // Messages that ran backward: the reader's shifts, process 0's, for every process; then the
  // patterns are measured again on the shifted clocks.
  bool again = false;
  if (root) {
    shift = shifts_for(need, nranks);
    again = std::any_of(shift.begin(), shift.end(), [](int64_t d) { return d != 0; });
  }
  if (spread) {
    ByteWriter w;
    w.pod(again);
    for (int64_t d : shift) w.pod(d);
    const std::string decided = spread->peers->broadcast(root ? w.data() : std::string());
    ByteReader r(decided.data(), decided.size());
    again = r.pod<bool>();
    for (int64_t& d : shift) d = r.pod<int64_t>();
  }
  if (again)
    MPE_RETURN_IF_ERROR(replay_everywhere(file, order, options, shift, spread, &report, &need, false));
  if (!root) return empty_report(file);
  std::sort(report.instances.begin(), report.instances.end(), in_report_order);
  return report;
}

}  // namespace mpe::analysis::waits
