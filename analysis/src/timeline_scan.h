// Pass 1 of the analyses over messages, one timeline at a time: which MPI call each message end
// and collective belongs to, when a receive was posted, a nonblocking collective's completion.
// EndpointCollector (endpoints.cpp) runs it over the log in index order and keeps every end; the
// wait states' replay (waits_replay.cpp) runs it in time order and keeps only what is in flight.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "endpoints.h"
#include "mpe/records.h"

namespace mpe::analysis {

// What a category's routine is, looked up once per category rather than by name per record.
struct Traits {
  bool blocking_send = false;     // MPI_Send: waits for its receiver above the eager limit
  bool synchronous_send = false;  // MPI_Ssend: always waits for its receiver
  bool blocking_receive = false;  // posted at its own entry
  CollKind coll = CollKind::kNone;
  bool nonblocking_coll = false;
};

// Per category id below kUserCategoryBase.
std::vector<Traits> category_traits(const format::LogFile& file);

// True when time t lies in call c. One nanosecond of slack: a state's end is its entry plus its
// duration, converted apart from the exit time that a receive record carries.
inline bool contains(const Call& c, int64_t t) { return c.start <= t && t <= c.end + 1; }

// Pass 1 over one timeline's chunks, in logged order. Each endpoint belongs to the MPI call
// around its time: liblog writes the call's state before what the call moved, an OTF2 import
// writes the message at its event time inside the call and the state at its end, so an endpoint
// waits (in pending_) until a call around it is known.
//
// The scan keeps its ends in a Store, which decides what becomes of them (the collector keeps every
// end and matches them at the end; the wait states' replay pairs them as it goes):
//   size_t add_send(const SendEnd&, uint64_t seq), add_recv(const RecvEnd&, uint64_t seq),
//          add_coll(const CollEnd&, uint64_t seq): keep a new end, return its handle;
//   SendEnd& send(size_t), RecvEnd& recv(size_t), CollEnd& coll(size_t): the end of a handle;
//   void resolved(Need, size_t): what the scan knows of that end is final (its call; for a
//          nonblocking collective, also its completion);
//   void cancel_send(const MessageKey&, uint64_t seq): a kSendCancel.
// seq orders the ends as logged: the chunk's index << 32 | the record's place in it.
enum class Need : uint8_t { kSend, kRecv, kColl, kCollDone };

template <class Store>
class TimelineScan {
 public:
  struct Shared {  // what every timeline's scan adds to
    const format::LogFile& file;
    const std::vector<Traits>& traits;
    const ScanOptions& options;
    ScanTotals& totals;
    std::unordered_map<uint64_t, uint32_t> coll_count;  // (communicator, rank) -> collectives so far
  };

  TimelineScan(Shared& shared, Store& store, uint32_t rank, uint32_t thread)
      : g_(shared),
        store_(store),
        rm_(shared.file.definitions().ranks[rank]),
        rank_(rank),
        thread_(static_cast<uint16_t>(thread)),
        has_sites_(shared.file.version() >= format::kFirstCallsiteVersion) {}

  ~TimelineScan() { settle_pending(INT64_MAX); }
  TimelineScan(const TimelineScan&) = delete;
  TimelineScan& operator=(const TimelineScan&) = delete;

  // The records of one chunk (index `chunk`), in logged order.
  void feed(const format::Record* recs, size_t n, size_t chunk) {
    for (size_t i = 0; i < n; ++i) {
      seq_ = uint64_t{chunk} << 32 | i;
      one(recs[i]);
    }
  }

  // Endpoints before `before` whose call never came keep a zero-length call at their time: no
  // call can come for them once no record still to come is before `before` (a call around an end
  // starts before it). At the timeline's end (INT64_MAX), every one left: a log cut short.
  void settle_pending(int64_t before) {
    if (pending_.empty()) return;
    size_t kept = 0;
    for (const Pending& p : pending_)
      if (p.time < before)
        assign(p.what, p.index, Call{p.time, p.time, 0, 0, thread_});
      else
        pending_[kept++] = p;
    pending_.resize(kept);
  }
  bool has_pending() const { return !pending_.empty(); }

 private:
  struct Pending {
    Need what;
    size_t index;
    int64_t time;
  };

  const Traits& traits(uint32_t cat) const {
    static const Traits kNone;
    return cat < g_.traits.size() ? g_.traits[cat] : kNone;
  }

  bool world(uint32_t comm, int32_t r, int32_t* out, uint64_t* gid) const {
    return format::world_rank(rm_, comm, r, out, gid);
  }

  void attach(Need what, size_t index, int64_t t) {
    if (have_last_ && contains(last_, t))
      assign(what, index, last_);
    else
      pending_.push_back(Pending{what, index, t});
  }

  void assign(Need what, size_t index, const Call& c) {
    switch (what) {
      case Need::kSend:
        store_.send(index).call = c;
        break;
      case Need::kRecv: {
        RecvEnd& r = store_.recv(index);
        r.call = c;
        if (r.post == kUnknown && traits(c.cat).blocking_receive) {
          r.post = c.start;
          r.post_site = c.site;
          r.post_cat = c.cat;
        }
        break;
      }
      case Need::kColl: {
        CollEnd& k = store_.coll(index);
        if (k.complete) {  // blocking: it waits in itself, from its entry
          k.waiting = c;
          k.enter = c.start;
        }
        break;
      }
      case Need::kCollDone: {
        CollEnd& k = store_.coll(index);
        k.waiting = c;
        k.complete = true;
        break;
      }
    }
    store_.resolved(what, index);
  }

  void one(const format::Record& r) {
    const format::RecordKind kind = format::kind_of(r);
    if (kind == format::RecordKind::kState && r.cat >= format::kUserCategoryBase) return;
    if (kind == format::RecordKind::kUserEvent || kind == format::RecordKind::kMarker ||
        kind == format::RecordKind::kCommCreate)
      return;
    const int64_t t = g_.file.to_ns(rank_, r.time);
    switch (kind) {
      case format::RecordKind::kState:
        return on_state(r, t);
      case format::RecordKind::kSend: {
        const format::SendRecord s = format::as<format::SendRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(s.comm, s.dest, &peer, &gid)) return;
        const Traits& fn = traits(s.cat);
        const size_t send = store_.add_send(
            SendEnd{format::MessageKey{gid, static_cast<int32_t>(rank_), peer, s.tag}, t,
                    fn.synchronous_send || (fn.blocking_send && s.bytes > g_.options.eager_limit), false,
                    static_cast<uint32_t>(std::min<uint64_t>(s.bytes, UINT32_MAX)),
                    Call{t, t, 0, s.cat, thread_}},
            seq_);
        attach(Need::kSend, send, t);
        return;
      }
      case format::RecordKind::kSendCancel: {
        const format::SendCancelRecord c = format::as<format::SendCancelRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(c.comm, c.dest, &peer, &gid)) return;
        store_.cancel_send(format::MessageKey{gid, static_cast<int32_t>(rank_), peer, c.tag}, seq_);
        return;
      }
      case format::RecordKind::kRecv: {
        const format::RecvRecord v = format::as<format::RecvRecord>(r);
        int32_t peer;
        uint64_t gid;
        const Post post = pending_post_;
        pending_post_ = Post{};
        if (!world(v.comm, v.source, &peer, &gid)) return;
        // A nonblocking receive was posted at its kRequestPost (whose serial the kRequestDone just
        // before this record gave); a blocking one at the entry of its call (see assign).
        const size_t recv =
            store_.add_recv(RecvEnd{format::MessageKey{gid, peer, static_cast<int32_t>(rank_), v.tag}, t,
                                    kNoSend, post.site, post.time, Call{t, t, 0, v.cat, thread_}, post.cat},
                            seq_);
        attach(Need::kRecv, recv, t);
        return;
      }
      case format::RecordKind::kRequestPost: {
        const format::RequestPostRecord q = format::as<format::RequestPostRecord>(r);
        if (q.what == format::RequestWhat::kRecv)  // liblog writes the posting call's state just before
          posts_[q.serial] =
              Post{t, have_last_ && last_.cat == q.cat && contains(last_, t) ? last_.site : 0, q.cat};
        if (q.what == format::RequestWhat::kCollective && last_coll_ != SIZE_MAX) {
          coll_request_[q.serial] = last_coll_;
          last_coll_ = SIZE_MAX;
        }
        return;
      }
      case format::RecordKind::kRequestDone: {
        const format::RequestDoneRecord q = format::as<format::RequestDoneRecord>(r);
        const format::RequestWhat what = q.what;
        const uint32_t serial = q.serial;
        if (what == format::RequestWhat::kRecv) {
          auto it = posts_.find(serial);
          pending_post_ = it == posts_.end() ? Post{} : it->second;
          if (it != posts_.end()) posts_.erase(it);
        } else if (what == format::RequestWhat::kCancelled) {
          posts_.erase(serial);
        } else if (what == format::RequestWhat::kCollective) {
          auto it = coll_request_.find(serial);
          if (it != coll_request_.end()) {
            attach(Need::kCollDone, it->second, t);
            coll_request_.erase(it);
          }
        }
        return;
      }
      case format::RecordKind::kCollective:
        return on_collective(r, t);
      default:
        return;
    }
  }

  // An MPI call: the latest call now, and the call of the ends pending inside it.
  void on_state(const format::Record& r, int64_t t) {
    const format::StateRecord st = format::as<format::StateRecord>(r);
    const int64_t end = format::saturating_add(t, g_.file.duration_ns(rank_, st.duration));
    last_ = Call{t, end, has_sites_ ? g_.file.callsite(rank_, st.site) : 0, st.cat, thread_};
    have_last_ = true;
    if (st.depth == 0) {
      g_.totals.mpi_ns += end - t;
      g_.totals.mpi_per_rank[rank_] += end - t;
    }
    if (!pending_.empty()) {
      size_t kept = 0;
      for (const Pending& p : pending_)
        if (contains(last_, p.time))
          assign(p.what, p.index, last_);
        else
          pending_[kept++] = p;
      pending_.resize(kept);
    }
  }

  // A collective: a member of the instance (communicator, k), blocking or not.
  void on_collective(const format::Record& r, int64_t t) {
    last_coll_ = SIZE_MAX;
    if (!g_.options.collectives) return;
    const format::CollectiveRecord c = format::as<format::CollectiveRecord>(r);
    const Traits& fn = traits(c.cat);
    if (fn.coll == CollKind::kNone || c.comm >= rm_.comms.size()) return;
    const format::CommDef& comm = rm_.comms[c.comm];
    if (comm.index != c.comm || comm.inter) return;  // intercommunicators: roots mean otherwise
    int32_t root = -1;
    if (c.root >= 0 && static_cast<size_t>(c.root) < comm.members.size())
      root = comm.members[static_cast<size_t>(c.root)];
    uint32_t& k = g_.coll_count[comm.global_id ^ (uint64_t{rank_} * 0x9E3779B97F4A7C15ull)];
    // Blocking: complete now, waiting in its own call from its entry (set in assign). A
    // nonblocking one was posted now and waits in the call its kRequestDone names.
    const size_t coll =
        store_.add_coll(CollEnd{comm.global_id, k++, static_cast<int32_t>(rank_), root, c.cat, fn.coll, t,
                                Call{t, t, 0, c.cat, thread_}, !fn.nonblocking_coll,
                                static_cast<uint32_t>(comm.members.size())},
                        seq_);
    attach(Need::kColl, coll, t);
    if (fn.nonblocking_coll) last_coll_ = coll;
  }

  Shared& g_;
  Store& store_;
  const format::RankMeta& rm_;
  uint32_t rank_;
  uint16_t thread_;
  bool has_sites_;
  uint64_t seq_ = 0;  // the record being scanned
  Call last_;         // the latest MPI call
  bool have_last_ = false;
  std::vector<Pending> pending_;
  struct Post {  // a receive's posting: when, and the call that posted it
    int64_t time = kUnknown;
    uint32_t site = 0;
    uint16_t cat = 0;
  };
  Post pending_post_;
  size_t last_coll_ = SIZE_MAX;                        // a nonblocking collective awaiting its kRequestPost
  std::unordered_map<uint32_t, Post> posts_;           // receive request serial -> its post
  std::unordered_map<uint32_t, size_t> coll_request_;  // collective request serial -> its handle
};

}  // namespace mpe::analysis
