// Pass 1 over a logfile's communication endpoints, their matching and causality shifts. The
// design comment is in endpoints.h (and mpe/waits.h).
#include "endpoints.h"

#include <algorithm>
#include <cctype>
#include <future>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <utility>

namespace mpe::analysis {

namespace {

using log::Record;
using log::RecordKind;
using log::RequestWhat;

// "MPI_Iallreduce_c" -> (kNxN, nonblocking). Persistent (_init) collectives are left out: their
// instances are the MPI_Start calls, which the log does not tie to them.
std::pair<CollKind, bool> coll_kind(std::string_view name) {
  if (name.substr(0, 4) != "MPI_") return {CollKind::kNone, false};
  name.remove_prefix(4);
  if (name.size() > 2 && name.substr(name.size() - 2) == "_c") name.remove_suffix(2);
  if (name.size() > 5 && name.substr(name.size() - 5) == "_init") return {CollKind::kNone, false};
  auto classify = [](std::string_view n) {
    if (n == "Barrier") return CollKind::kBarrier;
    if (n == "Allreduce" || n == "Allgather" || n == "Allgatherv" || n == "Alltoall" || n == "Alltoallv" ||
        n == "Alltoallw" || n == "Reduce_scatter" || n == "Reduce_scatter_block")
      return CollKind::kNxN;
    if (n == "Bcast" || n == "Scatter" || n == "Scatterv") return CollKind::kBroadcast;
    if (n == "Reduce" || n == "Gather" || n == "Gatherv") return CollKind::kReduce;
    return CollKind::kNone;
  };
  if (const CollKind k = classify(name); k != CollKind::kNone) return {k, false};
  if (name.size() > 1 && name[0] == 'I') {  // MPI_Iallreduce: the rest, capitalized, is the routine
    std::string blocking(name.substr(1));
    blocking[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(blocking[0])));
    return {classify(blocking), true};
  }
  return {CollKind::kNone, false};
}

// What a category's routine is, looked up once per category rather than by name per record.
struct Traits {
  bool blocking_send = false;     // MPI_Send: waits for its receiver above the eager limit
  bool synchronous_send = false;  // MPI_Ssend: always waits for its receiver
  bool blocking_receive = false;  // posted at its own entry
  CollKind coll = CollKind::kNone;
  bool nonblocking_coll = false;
};

std::vector<Traits> category_traits(const log::LogFile& file) {
  std::vector<Traits> traits(log::kUserCategoryBase);
  for (const log::Category& c : file.definitions().categories) {
    if (c.id >= log::kUserCategoryBase) continue;
    Traits& t = traits[c.id];
    std::string fn = c.name;
    if (fn.size() > 2 && fn.compare(fn.size() - 2, 2, "_c") == 0) fn.resize(fn.size() - 2);
    t.blocking_send = fn == "MPI_Send";
    t.synchronous_send = fn == "MPI_Ssend";
    t.blocking_receive =
        fn == "MPI_Recv" || fn == "MPI_Sendrecv" || fn == "MPI_Sendrecv_replace" || fn == "MPI_Mrecv";
    std::tie(t.coll, t.nonblocking_coll) = coll_kind(c.name);
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
    const log::LogFile& file;
    const std::vector<Traits>& traits;
    const ScanOptions& options;
    Endpoints& out;
    ScanTotals& totals;
    std::unordered_map<uint64_t, uint32_t> coll_count;  // (communicator, rank) -> collectives so far
  };

  TimelineScan(Shared& shared, uint32_t rank, uint32_t thread)
      : g_(shared),
        rm_(shared.file.definitions().ranks[rank]),
        rank_(rank),
        thread_(static_cast<uint16_t>(thread)),
        has_sites_(shared.file.version() >= log::kFirstCallsiteVersion),
        first_send_(shared.out.sends.size()) {}

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
    return log::world_rank(rm_, comm, r, out, gid);
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
    const auto kind = static_cast<RecordKind>(r.kind);
    if (kind == RecordKind::kState && r.cat >= log::kUserCategoryBase) return;
    if (kind == RecordKind::kUserEvent || kind == RecordKind::kMarker || kind == RecordKind::kCommCreate)
      return;
    const int64_t t = g_.file.to_ns(rank_, r.time);
    switch (kind) {
      case RecordKind::kState: {
        const int64_t end = log::saturating_add(t, g_.file.duration_ns(rank_, r.c));
        last_ = Call{t, end, has_sites_ ? g_.file.callsite(rank_, static_cast<uint32_t>(r.b)) : 0, r.cat,
                     thread_};
        have_last_ = true;
        if (r.a == 0) {
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
        return;
      }
      case RecordKind::kSend: {
        int32_t peer;
        uint64_t gid;
        if (!world(r.comm, r.a, &peer, &gid)) return;
        const Traits& fn = traits(r.cat);
        g_.out.sends.push_back(
            SendEnd{log::MessageKey{gid, static_cast<int32_t>(rank_), peer, r.b}, t,
                    fn.synchronous_send || (fn.blocking_send && r.c > g_.options.eager_limit), false,
                    Call{t, t, 0, r.cat, thread_}});
        g_.out.by_key[g_.out.sends.back().key].sends.push_back(
            static_cast<uint32_t>(g_.out.sends.size() - 1));
        attach(Need::kSend, g_.out.sends.size() - 1, t);
        return;
      }
      case RecordKind::kSendCancel: {
        int32_t peer;
        uint64_t gid;
        if (!world(r.comm, r.a, &peer, &gid)) return;
        const log::MessageKey key{gid, static_cast<int32_t>(rank_), peer, r.b};
        for (size_t k = g_.out.sends.size(); k-- > first_send_;)
          if (!g_.out.sends[k].cancelled && g_.out.sends[k].key == key) {
            g_.out.sends[k].cancelled = true;
            break;
          }
        return;
      }
      case RecordKind::kRecv: {
        int32_t peer;
        uint64_t gid;
        const Post post = pending_post_;
        pending_post_ = Post{};
        if (!world(r.comm, r.a, &peer, &gid)) return;
        // A nonblocking receive was posted at its kRequestPost (whose serial the kRequestDone just
        // before this record gave); a blocking one at the entry of its call (see assign).
        g_.out.recvs.push_back(RecvEnd{log::MessageKey{gid, peer, static_cast<int32_t>(rank_), r.b}, t,
                                       kNoSend, post.site, post.time, Call{t, t, 0, r.cat, thread_},
                                       post.cat});
        attach(Need::kRecv, g_.out.recvs.size() - 1, t);
        return;
      }
      case RecordKind::kRequestPost: {
        const auto what = static_cast<RequestWhat>(r.b);
        if (what == RequestWhat::kRecv)  // liblog writes the posting call's state just before
          posts_[static_cast<uint32_t>(r.a)] =
              Post{t, have_last_ && last_.cat == r.cat && contains(last_, t) ? last_.site : 0, r.cat};
        if (what == RequestWhat::kCollective && last_coll_ != SIZE_MAX) {
          coll_request_[static_cast<uint32_t>(r.a)] = last_coll_;
          last_coll_ = SIZE_MAX;
        }
        return;
      }
      case RecordKind::kRequestDone: {
        const auto what = static_cast<RequestWhat>(r.b);
        const uint32_t serial = static_cast<uint32_t>(r.a);
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
      case RecordKind::kCollective: {
        last_coll_ = SIZE_MAX;
        if (!g_.options.collectives) return;
        const Traits& fn = traits(r.cat);
        if (fn.coll == CollKind::kNone || r.comm >= rm_.comms.size()) return;
        const log::CommDef& comm = rm_.comms[r.comm];
        if (comm.index != r.comm || comm.inter) return;  // intercommunicators: roots mean otherwise
        int32_t root = -1;
        if (r.a >= 0 && static_cast<size_t>(r.a) < comm.members.size())
          root = comm.members[static_cast<size_t>(r.a)];
        uint32_t& k = g_.coll_count[comm.global_id ^ (uint64_t{rank_} * 0x9E3779B97F4A7C15ull)];
        // Blocking: complete now, waiting in its own call from its entry (set in assign). A
        // nonblocking one was posted now and waits in the call its kRequestDone names.
        g_.out.colls.push_back(CollEnd{comm.global_id, k++, static_cast<int32_t>(rank_), root, r.cat, fn.coll,
                                       t, Call{t, t, 0, r.cat, thread_}, !fn.nonblocking_coll});
        attach(Need::kColl, g_.out.colls.size() - 1, t);
        if (fn.nonblocking_coll) last_coll_ = g_.out.colls.size() - 1;
        return;
      }
      default:
        return;
    }
  }

  Shared& g_;
  const log::RankMeta& rm_;
  uint32_t rank_;
  uint16_t thread_;
  bool has_sites_;
  size_t first_send_;  // this timeline's sends start here
  Call last_;          // the latest MPI call
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

// Pass 2 for messages: pairs the k-th send of each key with its k-th receive, and gives each
// receive its send's index. Logged order is time order on a thread, so this is the reader's
// matching without a sort; it differs only where one rank sends (or receives) on one key from
// several threads, which MPI leaves unordered anyway.
}  // namespace

void match_messages(Endpoints& e, uint64_t* unmatched) {
  for (RecvEnd& r : e.recvs) {
    auto it = e.by_key.find(r.key);
    if (it == e.by_key.end()) {
      ++*unmatched;
      continue;
    }
    KeyQueue& q = it->second;
    while (q.taken < q.sends.size() && e.sends[q.sends[q.taken]].cancelled) ++q.taken;
    if (q.taken == q.sends.size()) {
      ++*unmatched;
      continue;
    }
    r.send = q.sends[q.taken++];
  }
  for (auto& [key, q] : e.by_key)
    for (size_t k = q.taken; k < q.sends.size(); ++k) *unmatched += !e.sends[q.sends[k]].cancelled;
  e.by_key.clear();
}

Status collect_endpoints(const log::LogFile& file, const ScanOptions& options, Endpoints* out,
                         ScanTotals* totals) {
  totals->mpi_per_rank.assign(file.definitions().world_size, 0);
  // The chunks of one timeline are consecutive in the index. The next chunks are read and decoded
  // on a second thread while this one scans (decoding is about half the work), a batch of them
  // per thread: at 100,000 ranks a log has 100,000 small chunks, and a thread for each (100,000
  // clone3 and 300,000 futex calls) took half of the analysis's time.
  const std::vector<Traits> traits = category_traits(file);
  TimelineScan::Shared shared{file, traits, options, *out, *totals, {}};
  std::unique_ptr<TimelineScan> scan;
  uint32_t cur_rank = UINT32_MAX, cur_thread = UINT32_MAX;
  const std::vector<log::IndexEntry>& index = file.index();
  const size_t nchunks = index.size();
  // Two batches: the worker fills one while this thread scans the other.
  struct Batch {
    size_t end = 0;  // the batch holds chunks [end - recs.size(), end)
    log::LogFile::ChunkScratch scratch;
    std::vector<std::vector<Record>> recs;  // one per chunk
  } batches[2];
  constexpr uint64_t kBatchRecords = 1 << 16;  // or one chunk, when it is larger
  constexpr size_t kBatchChunks = 1024;
  auto read = [&file, &index, nchunks](Batch* b, size_t first) {
    size_t n = 0;
    for (uint64_t records = 0; first + n < nchunks && n < kBatchChunks && (n == 0 || records < kBatchRecords);
         ++n)
      records += index[first + n].nrecords;
    b->end = first + n;
    b->recs.resize(n);
    for (size_t k = 0; k < n; ++k) MPE_RETURN_IF_ERROR(file.read_chunk(first + k, &b->scratch, &b->recs[k]));
    return Status();
  };
  std::future<Status> next;
  if (nchunks) next = std::async(std::launch::async, read, &batches[0], 0);
  for (size_t i = 0, which = 0; i < nchunks; which ^= 1) {
    const Status got = next.get();
    if (!got.ok()) return got;
    Batch& batch = batches[which];
    if (batch.end < nchunks) next = std::async(std::launch::async, read, &batches[which ^ 1], batch.end);
    for (const std::vector<Record>& recs : batch.recs) {
      if (options.keep_going && !options.keep_going())
        return Status(StatusCode::kCancelled, std::string(options.what) + " stopped");
      const log::IndexEntry& entry = index[i++];
      if (entry.rank != cur_rank || entry.thread != cur_thread) {
        scan.reset();  // settles the previous timeline's pending endpoints first
        cur_rank = entry.rank;
        cur_thread = entry.thread;
        scan = std::make_unique<TimelineScan>(shared, cur_rank, cur_thread);
      }
      totals->records += recs.size();
      scan->feed(recs.data(), recs.size());
    }
  }
  return Status();
}

std::vector<int64_t> causality_shifts(const Endpoints& e, uint32_t nranks) {
  std::map<std::pair<int32_t, int32_t>, int64_t> need;
  for (const RecvEnd& r : e.recvs)
    if (r.send != kNoSend && r.time < e.sends[r.send].time)
      log::add_causality_constraint(&need, std::get<1>(r.key), std::get<2>(r.key), e.sends[r.send].time,
                                    r.time);
  std::vector<int64_t> shift =
      need.empty() ? std::vector<int64_t>(nranks, 0) : log::causality_shifts(need, nranks);
  shift.resize(nranks, 0);
  return shift;
}

}  // namespace mpe::analysis
