// The one message matcher: the reader (load_trace), the viewer's model, the analyses' endpoints
// and the live view pair sends with receives here, so all of them agree on every message.
//
// The rule (MPI's non-overtaking rule): the k-th send of each key (global communicator, source,
// destination, tag; world ranks) is matched with the k-th receive of that key, each side taken in
// time order: a send at the send call's entry, a receive at its completion. Ends at equal times
// keep the order in which they were added (logged order, chunk by chunk in index order).
// A cancelled send (a kSendCancel record) withdraws the latest send of its key added before the
// cancel and not withdrawn already; a withdrawn send is neither matched nor left unmatched. What
// stays without a partner is reported per key; a matched receive that ends before its send began
// (a backward message) is still a pair: the callers' causality repair deals with it.
//
// Design. Each key has two vectors of ends, filled in logged order. match() visits the keys in
// key order, orders each side by (time, logged order) with a stable sort, skipped when the side is
// already in time order (the common case: a key's sends all come from one rank, mostly one
// thread, whose records are logged in time order), pairs them, and frees the key's vectors before
// the next key, so the ends and the caller's growing result do not peak together.
// An End is whatever a caller keeps per end (the viewer's is 16 bytes); it may be a handle into
// the caller's own storage, its time then given by a TimeOf.
// Cost: one hash lookup per end, a linear is_sorted check per side (n log n only for sides out of
// order), and sorting the keys once. Memory: sizeof(End) per end plus one entry per key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mpe::format {

// One side of a message, as matching sees it: (global communicator id, source, destination,
// tag), world ranks.
using MessageKey = std::tuple<uint64_t, int32_t, int32_t, int32_t>;

struct MessageKeyHash {
  size_t operator()(const MessageKey& k) const noexcept {
    uint64_t h = std::get<0>(k) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{static_cast<uint32_t>(std::get<1>(k))} << 32 | static_cast<uint32_t>(std::get<2>(k))) *
         0xC2B2AE3D27D4EB4Full;
    return h ^ (uint64_t{static_cast<uint32_t>(std::get<3>(k))} * 0x165667B19E3779F9ull) ^ (h >> 29);
  }
};

enum class MessageSide : uint8_t { kSend, kRecv };

// The time of an End that has a member `time` (ns): the default.
struct EndTimeMember {
  template <class End>
  int64_t operator()(const End& end, MessageSide) const {
    return end.time;
  }
};

template <class End, class TimeOf = EndTimeMember>
class MessageMatcher {
 public:
  explicit MessageMatcher(TimeOf time_of = {}) : time_of_(std::move(time_of)) {}

  void add_send(const MessageKey& key, const End& end) { queues_[key].sends.push_back(end); }
  void add_recv(const MessageKey& key, const End& end) { queues_[key].recvs.push_back(end); }

  // Withdraws the latest send added on key and returns it; nothing when the key has none left.
  std::optional<End> cancel_latest_send(const MessageKey& key) {
    auto it = queues_.find(key);
    if (it == queues_.end() || it->second.sends.empty()) return std::nullopt;
    End end = std::move(it->second.sends.back());
    it->second.sends.pop_back();
    return end;
  }

  // The pairs match() will make (to reserve the result).
  size_t pairs() const {
    size_t n = 0;
    for (const auto& [key, q] : queues_) n += std::min(q.sends.size(), q.recvs.size());
    return n;
  }

  // Orders one side of a key as match() does: by time, ties in the order added. For a caller that
  // needs each end's place on its side (the k-th send meets the k-th receive) without pairing
  // (the Chrome writer, which gives both ends of a message the same id and streams).
  void order(std::vector<End>& ends, MessageSide side) const {
    auto by_time = [&](const End& a, const End& b) { return time_of_(a, side) < time_of_(b, side); };
    if (!std::is_sorted(ends.begin(), ends.end(), by_time))
      std::stable_sort(ends.begin(), ends.end(), by_time);
  }

  // Pairs every key's ends, in key order: on_pair(key, const End& send, const End& recv) for each
  // pair in time order, then on_queue_done(key, sends_left, recvs_left) with the counts of the
  // key's ends left without a partner, once the key's ends are freed. Leaves the matcher empty.
  template <class OnPair, class OnQueueDone>
  void match(OnPair&& on_pair, OnQueueDone&& on_queue_done) {
    std::vector<typename Queues::value_type*> keys;
    keys.reserve(queues_.size());
    for (auto& entry : queues_) keys.push_back(&entry);
    std::sort(keys.begin(), keys.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    for (auto* entry : keys) {
      const MessageKey& key = entry->first;
      Queue& q = entry->second;
      order(q.sends, MessageSide::kSend);
      order(q.recvs, MessageSide::kRecv);
      const size_t n = std::min(q.sends.size(), q.recvs.size());
      for (size_t k = 0; k < n; ++k) on_pair(key, std::as_const(q.sends[k]), std::as_const(q.recvs[k]));
      const size_t sends_left = q.sends.size() - n, recvs_left = q.recvs.size() - n;
      std::vector<End>().swap(q.sends);
      std::vector<End>().swap(q.recvs);
      on_queue_done(key, sends_left, recvs_left);
    }
    std::vector<typename Queues::value_type*>().swap(keys);
    queues_.clear();
  }

 private:
  struct Queue {
    std::vector<End> sends;  // in the order added
    std::vector<End> recvs;
  };
  using Queues = std::unordered_map<MessageKey, Queue, MessageKeyHash>;

  TimeOf time_of_;
  Queues queues_;
};

// The same rule for a replay in time order (the streaming summary, mpe/log_summary.h), which hands
// out chunks by their start (chunks_by_start in mpe/chunk_pass.h): once the replay is about to hand
// out a chunk starting at W, every end before W has been added. settle(W) then takes, per key and
// side, the ends before W in (time, seq) order, and pairs the k-th settled send of a key with its
// k-th settled receive: MessageMatcher::match's pairs when seq is the logged order (chunk index,
// then position). A cancel withdraws the send of its key with the largest seq below the cancel's
// that is not paired or withdrawn (MessageMatcher's "latest added before the cancel").
// Memory: the ends added and not yet settled (about a chunk's per timeline between two settles)
// and the settled ends waiting for a partner (the messages in flight at W), never the whole run.
// Cost: amortized O(1) per end, plus one is_sorted pass over a key's unsettled ends per settle.
template <class End>  // End has `int64_t time`
class ReplayMessageMatcher {
 public:
  // Adds an end; returns its key's id (0, 1, 2... in the order the keys were first seen).
  uint32_t add(MessageSide side, const MessageKey& key, uint64_t seq, const End& end) {
    auto [it, fresh] = ids_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
    if (fresh) keys_.push_back(KeyEnds{key, {}, {}, {}, {}, false});
    KeyEnds& k = keys_[it->second];
    (side == MessageSide::kSend ? k.unsettled_sends : k.unsettled_recvs).push_back(Seqd{seq, end});
    if (!k.dirty) {
      k.dirty = true;
      dirty_.push_back(it->second);
    }
    return it->second;
  }

  // Withdraws the send described above and returns it; nothing when the key has none.
  std::optional<End> cancel_latest_send(const MessageKey& key, uint64_t seq) {
    const auto it = ids_.find(key);
    if (it == ids_.end()) return std::nullopt;
    KeyEnds& k = keys_[it->second];
    auto latest_below = [&](auto& ends, size_t from) {
      size_t best = ends.size();
      for (size_t i = from; i < ends.size(); ++i)
        if (ends[i].seq < seq && (best == ends.size() || ends[i].seq > ends[best].seq)) best = i;
      return best;
    };
    const size_t u = latest_below(k.unsettled_sends, 0), s = latest_below(k.sends, k.sends_head);
    const bool in_unsettled = u < k.unsettled_sends.size();
    const bool in_settled = s < k.sends.size();
    if (!in_unsettled && !in_settled) return std::nullopt;
    auto withdraw = [](std::vector<Seqd>& ends, size_t i) {
      End end = std::move(ends[i].end);
      ends.erase(ends.begin() + static_cast<long>(i));
      return end;
    };
    if (in_unsettled && (!in_settled || k.unsettled_sends[u].seq > k.sends[s].seq))
      return withdraw(k.unsettled_sends, u);
    return withdraw(k.sends, s);
  }

  // Pairs what is settled before `watermark`: on_pair(key, const End& send, const End& recv).
  template <class OnPair>
  void settle(int64_t watermark, OnPair&& on_pair) {
    size_t kept = 0;
    for (const uint32_t id : dirty_) {
      settle_key(id, watermark, on_pair);
      KeyEnds& k = keys_[id];
      k.dirty = !k.unsettled_sends.empty() || !k.unsettled_recvs.empty();
      if (k.dirty) {
        dirty_[kept++] = id;
      } else if (k.sends.empty() && k.recvs.empty()) {
        // Nothing of the key waits: its vectors' room goes back. A program that makes a
        // communicator per iteration leaves a key per pair of ranks each time, never used again
        // (synth at 32 M records kept 300 MB of such room).
        std::vector<Seqd>().swap(k.unsettled_sends);
        std::vector<Seqd>().swap(k.unsettled_recvs);
        std::vector<Seqd>().swap(k.sends);
        std::vector<Seqd>().swap(k.recvs);
      }
    }
    dirty_.resize(kept);
  }

  // Pairs what is settled before `watermark` on one key (a caller that knows, per key, that every
  // end of that key before it was added: its source's and destination's timelines have gone past
  // it). The key stays listed for settle().
  template <class OnPair>
  void settle_key(uint32_t id, int64_t watermark, OnPair&& on_pair) {
    KeyEnds& k = keys_[id];
    settle_side(k.unsettled_sends, &k.sends, watermark);
    settle_side(k.unsettled_recvs, &k.recvs, watermark);
    while (k.sends_head < k.sends.size() && k.recvs_head < k.recvs.size())
      on_pair(k.key, std::as_const(k.sends[k.sends_head++].end), std::as_const(k.recvs[k.recvs_head++].end));
    compact(&k.sends, &k.sends_head);
    compact(&k.recvs, &k.recvs_head);
  }

  // Settles everything, then calls on_left(key, sends_left, recvs_left) for each key that has ends
  // without a partner, in key order (as MessageMatcher::match reports them).
  template <class OnPair, class OnLeft>
  void finish(OnPair&& on_pair, OnLeft&& on_left) {
    settle(INT64_MAX, on_pair);
    std::vector<const KeyEnds*> left;
    for (const KeyEnds& k : keys_)
      if (k.sends.size() > k.sends_head || k.recvs.size() > k.recvs_head) left.push_back(&k);
    std::sort(left.begin(), left.end(), [](const KeyEnds* a, const KeyEnds* b) { return a->key < b->key; });
    for (const KeyEnds* k : left)
      on_left(k->key, k->sends.size() - k->sends_head, k->recvs.size() - k->recvs_head);
    keys_.clear();
    ids_.clear();
    dirty_.clear();
  }

  // Calls f(key, side, end) for every end settled and left without a partner (after settle(W),
  // those before W; after settle(INT64_MAX), what finish() will report), in key order of first add.
  template <class F>
  void for_each_left(F&& f) const {
    for (const KeyEnds& k : keys_) {
      for (size_t i = k.sends_head; i < k.sends.size(); ++i) f(k.key, MessageSide::kSend, k.sends[i].end);
      for (size_t i = k.recvs_head; i < k.recvs.size(); ++i) f(k.key, MessageSide::kRecv, k.recvs[i].end);
    }
  }

  // Ends added and not yet paired (for memory accounting and tests).
  size_t waiting() const {
    size_t n = 0;
    for (const KeyEnds& k : keys_)
      n += k.unsettled_sends.size() + k.unsettled_recvs.size() + (k.sends.size() - k.sends_head) +
           (k.recvs.size() - k.recvs_head);
    return n;
  }

 private:
  struct Seqd {
    uint64_t seq;
    End end;
  };
  struct KeyEnds {
    MessageKey key;
    std::vector<Seqd> unsettled_sends, unsettled_recvs;  // as added
    std::vector<Seqd> sends, recvs;                      // settled, (time, seq) order, from *_head on
    size_t sends_head = 0, recvs_head = 0;
    bool dirty = false;  // has unsettled ends, or is listed in dirty_ already
  };

  // Moves the ends before the watermark, in (time, seq) order, from unsettled to settled.
  static void settle_side(std::vector<Seqd>& unsettled, std::vector<Seqd>* settled, int64_t watermark) {
    if (unsettled.empty()) return;
    auto before = [](const Seqd& a, const Seqd& b) {
      return a.end.time != b.end.time ? a.end.time < b.end.time : a.seq < b.seq;
    };
    if (!std::is_sorted(unsettled.begin(), unsettled.end(), before))
      std::sort(unsettled.begin(), unsettled.end(), before);
    auto first_unsettled = std::partition_point(unsettled.begin(), unsettled.end(),
                                                [&](const Seqd& e) { return e.end.time < watermark; });
    settled->insert(settled->end(), unsettled.begin(), first_unsettled);
    unsettled.erase(unsettled.begin(), first_unsettled);
  }
  // Drops the paired ends at the front once they are half of the vector.
  static void compact(std::vector<Seqd>* ends, size_t* head) {
    if (*head == ends->size()) {
      ends->clear();
      *head = 0;
    } else if (*head > 64 && *head * 2 > ends->size()) {
      ends->erase(ends->begin(), ends->begin() + static_cast<long>(*head));
      *head = 0;
    }
  }

  std::unordered_map<MessageKey, uint32_t, MessageKeyHash> ids_;
  std::vector<KeyEnds> keys_;
  std::vector<uint32_t> dirty_;  // keys with unsettled ends
};

// The same rule for ends that arrive as a stream (the live view, which sees each rank's interval
// as it comes): the k-th send of a key meets the k-th receive of that key, each side in the
// order added (a key's sends come from one rank, which reports them in time order; likewise its
// receives). Either side may come first; what waits is bounded per key and side (`max_waiting`:
// the oldest is forgotten), since a rank that reports only totals never sends its ends.
template <class End>
class StreamingMessageMatcher {
 public:
  explicit StreamingMessageMatcher(size_t max_waiting) : max_waiting_(max_waiting) {}

  // Adds a send; returns the receive it meets, when one was waiting.
  std::optional<End> add_send(const MessageKey& key, const End& end) {
    return add(queues_[key], &Queue::recvs, &Queue::sends, end, [](const End&) { return true; });
  }
  // Adds a receive; returns the send it meets, skipping (and forgetting) waiting sends for which
  // usable(send) is false (the caller dropped them).
  template <class Usable>
  std::optional<End> add_recv(const MessageKey& key, const End& end, Usable&& usable) {
    return add(queues_[key], &Queue::sends, &Queue::recvs, end, usable);
  }

 private:
  struct Queue {
    std::deque<End> sends, recvs;  // waiting for a partner, oldest first
  };
  template <class Usable>
  std::optional<End> add(Queue& q, std::deque<End> Queue::*other, std::deque<End> Queue::*own, const End& end,
                         Usable&& usable) {
    std::deque<End>& partners = q.*other;
    while (!partners.empty() && !usable(partners.front())) partners.pop_front();
    if (!partners.empty()) {
      End partner = partners.front();
      partners.pop_front();
      return partner;
    }
    std::deque<End>& waiting = q.*own;
    if (waiting.size() == max_waiting_) waiting.pop_front();
    waiting.push_back(end);
    return std::nullopt;
  }

  size_t max_waiting_;
  std::unordered_map<MessageKey, Queue, MessageKeyHash> queues_;
};

}  // namespace mpe::format
