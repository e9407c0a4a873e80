// Pass 1 over a logfile's communication endpoints, their matching and causality shifts. The
// design comment is in endpoints.h (and mpe/waits.h).
#include "endpoints.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <utility>

#include "mpe/records.h"

namespace mpe::analysis {

namespace {

using format::Record;
using format::RecordKind;
using format::RequestWhat;

// A collective routine's kind, by its shape (mpe/routine.h). Persistent (_init) collectives are left
// out: their instances are the MPI_Start calls, which the log does not tie to them.
CollKind coll_kind(const format::RoutineInfo& routine) {
  if (routine.family != format::RoutineFamily::kCollective ||
      routine.mode == format::RoutineMode::kPersistentInit)
    return CollKind::kNone;
  switch (routine.shape) {
    case format::CollectiveShape::kBarrier:
      return CollKind::kBarrier;
    case format::CollectiveShape::kAllToAll:
      return CollKind::kNxN;
    case format::CollectiveShape::kOneToAll:
      return CollKind::kBroadcast;
    case format::CollectiveShape::kAllToOne:
      return CollKind::kReduce;
    case format::CollectiveShape::kNone:
    case format::CollectiveShape::kOther:
      break;
  }
  return CollKind::kNone;
}

// What a category's routine is, looked up once per category rather than by name per record.
struct Traits {
  bool blocking_send = false;     // MPI_Send: waits for its receiver above the eager limit
  bool synchronous_send = false;  // MPI_Ssend: always waits for its receiver
  bool blocking_receive = false;  // posted at its own entry
  CollKind coll = CollKind::kNone;
  bool nonblocking_coll = false;
};

std::vector<Traits> category_traits(const format::LogFile& file) {
  std::vector<Traits> traits(format::kUserCategoryBase);
  for (const format::Category& c : file.definitions().categories) {
    if (c.id >= format::kUserCategoryBase) continue;
    Traits& t = traits[c.id];
    const format::RoutineInfo& r = c.routine;  // the log's class of the routine, never its name
    const bool blocking_send = r.family == format::RoutineFamily::kSend && r.blocking();
    t.blocking_send = blocking_send && r.send_mode == format::SendMode::kStandard;
    t.synchronous_send = blocking_send && r.send_mode == format::SendMode::kSynchronous;
    t.blocking_receive =
        (r.family == format::RoutineFamily::kRecv || r.family == format::RoutineFamily::kSendrecv) &&
        r.blocking();
    t.coll = coll_kind(r);
    t.nonblocking_coll = t.coll != CollKind::kNone && r.nonblocking();
  }
  return traits;
}

// True when time t lies in call c. One nanosecond of slack: a state's end is its entry plus its
// duration, converted apart from the exit time that a receive record carries.
bool contains(const Call& c, int64_t t) { return c.start <= t && t <= c.end + 1; }

// Pass 1 over one timeline's chunks, in logged order. Each endpoint belongs to the MPI call
// around its time: liblog writes the call's state before what the call moved, an OTF2 import
// writes the message at its event time inside the call and the state at its end, so an endpoint
// waits (in pending_) until a call around it is known.
class TimelineScan {
 public:
  struct Shared {  // what every timeline's scan adds to
    const format::LogFile& file;
    const std::vector<Traits>& traits;
    const ScanOptions& options;
    Endpoints& out;
    EndpointMatcher& matcher;
    ScanTotals& totals;
    std::unordered_map<uint64_t, uint32_t> coll_count;  // (communicator, rank) -> collectives so far
  };

  TimelineScan(Shared& shared, uint32_t rank, uint32_t thread)
      : g_(shared),
        rm_(shared.file.definitions().ranks[rank]),
        rank_(rank),
        thread_(static_cast<uint16_t>(thread)),
        has_sites_(shared.file.version() >= format::kFirstCallsiteVersion) {}

  // Endpoints whose call never came (a log cut short) keep a zero-length call at their time.
  ~TimelineScan() {
    for (const Pending& p : pending_) assign(p.what, p.index, Call{p.time, p.time, 0, 0, thread_});
  }

  void feed(const Record* recs, size_t n) {
    for (size_t i = 0; i < n; ++i) one(recs[i]);
  }

 private:
  enum class Need : uint8_t { kSend, kRecv, kColl, kCollDone };
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
        g_.out.sends[index].call = c;
        break;
      case Need::kRecv: {
        RecvEnd& r = g_.out.recvs[index];
        r.call = c;
        if (r.post == kUnknown && traits(c.cat).blocking_receive) {
          r.post = c.start;
          r.post_site = c.site;
          r.post_cat = c.cat;
        }
        break;
      }
      case Need::kColl: {
        CollEnd& k = g_.out.colls[index];
        if (k.complete) {  // blocking: it waits in itself, from its entry
          k.waiting = c;
          k.enter = c.start;
        }
        break;
      }
      case Need::kCollDone: {
        CollEnd& k = g_.out.colls[index];
        k.waiting = c;
        k.complete = true;
        break;
      }
    }
  }

  void one(const Record& r) {
    const RecordKind kind = format::kind_of(r);
    if (kind == RecordKind::kState && r.cat >= format::kUserCategoryBase) return;
    if (kind == RecordKind::kUserEvent || kind == RecordKind::kMarker || kind == RecordKind::kCommCreate)
      return;
    const int64_t t = g_.file.to_ns(rank_, r.time);
    switch (kind) {
      case RecordKind::kState:
        return on_state(r, t);
      case RecordKind::kSend: {
        const format::SendRecord s = format::as<format::SendRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(s.comm, s.dest, &peer, &gid)) return;
        const Traits& fn = traits(s.cat);
        g_.out.sends.push_back(SendEnd{
            format::MessageKey{gid, static_cast<int32_t>(rank_), peer, s.tag}, t,
            fn.synchronous_send || (fn.blocking_send && s.bytes > g_.options.eager_limit), false,
            static_cast<uint32_t>(std::min<uint64_t>(s.bytes, UINT32_MAX)), Call{t, t, 0, s.cat, thread_}});
        g_.matcher.add_send(g_.out.sends.back().key, static_cast<uint32_t>(g_.out.sends.size() - 1));
        attach(Need::kSend, g_.out.sends.size() - 1, t);
        return;
      }
      case RecordKind::kSendCancel: {
        const format::SendCancelRecord c = format::as<format::SendCancelRecord>(r);
        int32_t peer;
        uint64_t gid;
        if (!world(c.comm, c.dest, &peer, &gid)) return;
        if (const auto send = g_.matcher.cancel_latest_send(
                format::MessageKey{gid, static_cast<int32_t>(rank_), peer, c.tag}))
          g_.out.sends[*send].cancelled = true;
        return;
      }
      case RecordKind::kRecv: {
        const format::RecvRecord v = format::as<format::RecvRecord>(r);
        int32_t peer;
        uint64_t gid;
        const Post post = pending_post_;
        pending_post_ = Post{};
        if (!world(v.comm, v.source, &peer, &gid)) return;
        // A nonblocking receive was posted at its kRequestPost (whose serial the kRequestDone just
        // before this record gave); a blocking one at the entry of its call (see assign).
        g_.out.recvs.push_back(RecvEnd{format::MessageKey{gid, peer, static_cast<int32_t>(rank_), v.tag}, t,
                                       kNoSend, post.site, post.time, Call{t, t, 0, v.cat, thread_},
                                       post.cat});
        g_.matcher.add_recv(g_.out.recvs.back().key, static_cast<uint32_t>(g_.out.recvs.size() - 1));
        attach(Need::kRecv, g_.out.recvs.size() - 1, t);
        return;
      }
      case RecordKind::kRequestPost: {
        const format::RequestPostRecord q = format::as<format::RequestPostRecord>(r);
        if (q.what == RequestWhat::kRecv)  // liblog writes the posting call's state just before
          posts_[q.serial] =
              Post{t, have_last_ && last_.cat == q.cat && contains(last_, t) ? last_.site : 0, q.cat};
        if (q.what == RequestWhat::kCollective && last_coll_ != SIZE_MAX) {
          coll_request_[q.serial] = last_coll_;
          last_coll_ = SIZE_MAX;
        }
        return;
      }
      case RecordKind::kRequestDone: {
        const format::RequestDoneRecord q = format::as<format::RequestDoneRecord>(r);
        const RequestWhat what = q.what;
        const uint32_t serial = q.serial;
        if (what == RequestWhat::kRecv) {
          auto it = posts_.find(serial);
          pending_post_ = it == posts_.end() ? Post{} : it->second;
          if (it != posts_.end()) posts_.erase(it);
        } else if (what == RequestWhat::kCancelled) {
          posts_.erase(serial);
        } else if (what == RequestWhat::kCollective) {
          auto it = coll_request_.find(serial);
          if (it != coll_request_.end()) {
            attach(Need::kCollDone, it->second, t);
            coll_request_.erase(it);
          }
        }
        return;
      }
      case RecordKind::kCollective:
        return on_collective(r, t);
      default:
        return;
    }
  }

  // An MPI call: the latest call now, and the call of the ends pending inside it.
  void on_state(const Record& r, int64_t t) {
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
  void on_collective(const Record& r, int64_t t) {
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
    g_.out.colls.push_back(CollEnd{comm.global_id, k++, static_cast<int32_t>(rank_), root, c.cat, fn.coll, t,
                                   Call{t, t, 0, c.cat, thread_}, !fn.nonblocking_coll});
    attach(Need::kColl, g_.out.colls.size() - 1, t);
    if (fn.nonblocking_coll) last_coll_ = g_.out.colls.size() - 1;
  }

  Shared& g_;
  const format::RankMeta& rm_;
  uint32_t rank_;
  uint16_t thread_;
  bool has_sites_;
  Call last_;  // the latest MPI call
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
  std::unordered_map<uint32_t, size_t> coll_request_;  // collective request serial -> colls index
};

}  // namespace

void match_messages(Endpoints& e, EndpointMatcher& matcher, uint64_t* unmatched) {
  matcher.match([&](const format::MessageKey&, uint32_t send, uint32_t recv) { e.recvs[recv].send = send; },
                [&](const format::MessageKey&, size_t sends_left, size_t recvs_left) {
                  *unmatched += sends_left + recvs_left;
                });
}

struct EndpointCollector::Impl {
  Impl(const format::LogFile& f, const CollectSettings& settings)
      : file(f), traits(category_traits(f)), out(std::make_shared<Collected>()) {
    options.eager_limit = settings.eager_limit;
    options.collectives = settings.collectives;
    out->collectives = settings.collectives;
    out->totals.mpi_per_rank.assign(f.definitions().world_size, 0);
  }

  const format::LogFile& file;
  ScanOptions options;
  const std::vector<Traits> traits;
  std::shared_ptr<Collected> out;
  EndpointMatcher matcher{EndpointTime{&out->endpoints}};
  TimelineScan::Shared shared{file, traits, options, out->endpoints, matcher, out->totals, {}};
  // The timeline being scanned: the chunks of one timeline are consecutive in the index.
  std::unique_ptr<TimelineScan> scan;
  uint32_t rank = UINT32_MAX, thread = UINT32_MAX;
};

EndpointCollector::EndpointCollector(const format::LogFile& file, const CollectSettings& settings)
    : impl_(std::make_unique<Impl>(file, settings)) {}

EndpointCollector::~EndpointCollector() = default;

void EndpointCollector::consume(const format::Chunk& chunk) {
  Impl& m = *impl_;
  if (chunk.entry.rank != m.rank || chunk.entry.thread != m.thread) {
    m.scan.reset();  // settles the previous timeline's pending endpoints first
    m.rank = chunk.entry.rank;
    m.thread = chunk.entry.thread;
    m.scan = std::make_unique<TimelineScan>(m.shared, m.rank, m.thread);
  }
  m.out->totals.records += chunk.count;
  m.scan->feed(chunk.records, chunk.count);
}

std::shared_ptr<Collected> EndpointCollector::finish() {
  Impl& m = *impl_;
  m.scan.reset();
  std::shared_ptr<Collected> c = std::move(m.out);
  match_messages(c->endpoints, m.matcher, &c->unmatched);
  c->shift = causality_shifts(c->endpoints, m.file.definitions().world_size);
  return c;
}

std::vector<MatchedMessage> matched_messages(const Collected& c) {
  std::vector<MatchedMessage> out;
  const Endpoints& e = c.endpoints;
  auto shift_of = [&](int32_t rank) {
    return rank >= 0 && static_cast<size_t>(rank) < c.shift.size() ? c.shift[static_cast<size_t>(rank)] : 0;
  };
  for (const RecvEnd& r : e.recvs) {
    if (r.send == kNoSend) continue;
    const SendEnd& s = e.sends[r.send];
    const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
    out.push_back(MatchedMessage{src, dst, std::get<3>(s.key), s.time + shift_of(src), r.time + shift_of(dst),
                                 s.bytes});
  }
  return out;
}

StatusOr<std::shared_ptr<Collected>> collect(const format::LogFile& file, const ScanOptions& options) {
  EndpointCollector collector(file, CollectSettings{options.eager_limit, options.collectives});
  // One decoder thread ahead of the scan: decoding is about half the work.
  format::ChunkPassOptions pass;
  pass.decoders = 1;
  pass.what = options.what;
  if (options.keep_going) pass.keep_going = [&](size_t) { return options.keep_going(); };
  MPE_RETURN_IF_ERROR(format::run_chunk_pass(file, {collector.consumer()}, pass));
  return collector.finish();
}

std::vector<int64_t> causality_shifts(const Endpoints& e, uint32_t nranks) {
  std::map<std::pair<int32_t, int32_t>, int64_t> need;
  for (const RecvEnd& r : e.recvs)
    if (r.send != kNoSend && r.time < e.sends[r.send].time)
      format::add_causality_constraint(&need, std::get<1>(r.key), std::get<2>(r.key), e.sends[r.send].time,
                                       r.time);
  std::vector<int64_t> shift =
      need.empty() ? std::vector<int64_t>(nranks, 0) : format::causality_shifts(need, nranks);
  shift.resize(nranks, 0);
  return shift;
}

}  // namespace mpe::analysis
