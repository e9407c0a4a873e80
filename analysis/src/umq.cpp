// The unexpected queue rebuilt from a logfile: pass 1 and matching are endpoints.h's, pass 2
// sweeps each (receiving rank, communicator). The design comment is in mpe/umq.h.
#include "mpe/umq.h"

#include <algorithm>
#include <deque>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "endpoints.h"
#include "message_observer.h"
#include "mpe/external_sort.h"
#include "mpe/waits.h"

namespace mpe::analysis::umq {

namespace {

using analysis::Endpoints;
using analysis::kNoSend;
using analysis::kUnknown;
using analysis::RecvEnd;
using analysis::SendEnd;

constexpr int64_t kNever = INT64_MAX;

// A receive post: when the queue is measured, by which call, and which queued message it takes.
// 24 bytes: a big log has tens of millions.
struct Query {
  int64_t time;
  uint32_t group;  // (receiving rank, communicator)
  uint32_t site;   // the posting call's run-wide call site
  int32_t takes;   // the source (world rank) of the queued message it takes, -1 for none
  uint16_t cat;    // the posting call's category
};

// A message that joined a queue. 24 bytes.
struct Arrival {
  int64_t time;    // its send's start
  int64_t leaves;  // its receive's post, kNever without one
  uint32_t group;
  int32_t source;  // world rank
};

// Moves *in to *out ordered by group (stable: a counting sort, O(n)), emptying *in as it goes,
// and returns where each group starts in *out, with the end as the last entry.
template <class T>
std::vector<size_t> bucket_by_group(std::deque<T>* in, size_t ngroups, std::vector<T>* out) {
  std::vector<size_t> start(ngroups + 1, 0);
  for (const T& x : *in) ++start[x.group + 1];
  for (size_t g = 0; g < ngroups; ++g) start[g + 1] += start[g];
  out->resize(in->size());
  std::vector<size_t> next(start.begin(), start.end() - 1);
  for (; !in->empty(); in->pop_front()) (*out)[next[in->front().group]++] = in->front();
  return start;
}

// The receive queues of (rank, communicator) pairs, numbered as first met.
class Groups {
 public:
  uint32_t of(int32_t rank, uint64_t gid) {
    if (last_ < keys_.size() && keys_[last_] == Key{rank, gid}) return last_;  // runs of one rank
    const auto [it, fresh] = ids_.try_emplace(Key{rank, gid}, static_cast<uint32_t>(keys_.size()));
    if (fresh) keys_.push_back(Key{rank, gid});
    return last_ = it->second;
  }
  size_t size() const { return keys_.size(); }
  int32_t rank(uint32_t g) const { return keys_[g].rank; }
  uint64_t gid(uint32_t g) const { return keys_[g].gid; }

 private:
  struct Key {
    int32_t rank;
    uint64_t gid;
    bool operator==(const Key& o) const { return rank == o.rank && gid == o.gid; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return (k.gid * 0x9E3779B97F4A7C15ull) ^
             (uint64_t{static_cast<uint32_t>(k.rank)} * 0xC2B2AE3D27D4EB4Full);
    }
  };
  std::unordered_map<Key, uint32_t, KeyHash> ids_;
  std::vector<Key> keys_;
  uint32_t last_ = UINT32_MAX;
};

// "MPI_COMM_WORLD", "MPI_COMM_SELF", "comm#2 (size 3)": liblog's per-rank indices 0 and 1 are
// the builtin communicators.
std::string describe(const format::CommDef* c) {
  if (!c) return "?";
  if (c->index == 0) return "MPI_COMM_WORLD";
  if (c->index == 1 && c->members.size() == 1) return "MPI_COMM_SELF";
  return "comm#" + std::to_string(c->index) + " (size " + std::to_string(c->members.size()) + ")";
}

const format::CommDef* find_comm(const format::LogFile& file, int32_t rank, uint64_t gid) {
  if (rank < 0 || static_cast<size_t>(rank) >= file.definitions().ranks.size()) return nullptr;
  for (const format::CommDef& c : file.definitions().ranks[static_cast<size_t>(rank)].comms)
    if (c.global_id == gid) return &c;
  return nullptr;
}

// The rank in a communicator of each world rank, built once per communicator (by its global id,
// the same on every member), so that naming a queued message's sender is a lookup, not a walk
// over the communicator's members at every post: that walk, for every rank's queue on
// MPI_COMM_WORLD, was O(ranks²).
class CommRanks {
 public:
  // The rank of world rank w in comm, -1 when it is no member.
  int32_t of(const format::CommDef& comm, int32_t w) {
    auto [it, fresh] = by_comm_.try_emplace(comm.global_id);
    Inverse& inv = it->second;
    if (fresh) {
      for (size_t k = 0; k < comm.members.size() && inv.identity; ++k)
        inv.identity = comm.members[k] == static_cast<int32_t>(k);
      if (!inv.identity)
        for (size_t k = 0; k < comm.members.size(); ++k)
          inv.rank.try_emplace(comm.members[k], static_cast<int32_t>(k));
    }
    if (inv.identity) return w >= 0 && static_cast<size_t>(w) < comm.members.size() ? w : -1;
    const auto r = inv.rank.find(w);
    return r == inv.rank.end() ? -1 : r->second;
  }

 private:
  struct Inverse {
    bool identity = true;  // members[k] == k (MPI_COMM_WORLD and its duplicates): no map needed
    std::unordered_map<int32_t, int32_t> rank;
  };
  std::unordered_map<uint64_t, Inverse> by_comm_;
};

// The senders of the messages in one queue, counted, and the one with the most queued: the
// queue's distinct senders only, never the whole communicator.
class QueuedSenders {
 public:
  explicit QueuedSenders(uint32_t nranks) : count_(nranks, 0), listed_(nranks, 0) {}

  void add(int32_t w) {
    if (w < 0 || static_cast<uint32_t>(w) >= count_.size()) return;
    ++count_[static_cast<size_t>(w)];
    if (!listed_[static_cast<size_t>(w)]) {
      listed_[static_cast<size_t>(w)] = 1;
      present_.push_back(w);
    }
  }
  void remove(int32_t w) {
    if (w >= 0 && static_cast<uint32_t>(w) < count_.size() && count_[static_cast<size_t>(w)] > 0)
      --count_[static_cast<size_t>(w)];
  }
  // Empties the queue (between groups): O(its senders).
  void clear() {
    for (int32_t w : present_) count_[static_cast<size_t>(w)] = listed_[static_cast<size_t>(w)] = 0;
    present_.clear();
  }
  // The sender with the most messages queued as its rank in comm, and how many; ties go to the
  // lowest rank in comm. (-1, 0) when none is a member.
  std::pair<int, uint32_t> top(const format::CommDef& comm, CommRanks& ranks) {
    int peer = -1;
    uint32_t most = 0;
    size_t kept = 0;
    for (int32_t w : present_) {
      const uint32_t n = count_[static_cast<size_t>(w)];
      if (n == 0) {  // all of its messages were taken: drop it from the list
        listed_[static_cast<size_t>(w)] = 0;
        continue;
      }
      present_[kept++] = w;
      const int32_t k = ranks.of(comm, w);
      if (k >= 0 && (n > most || (n == most && k < peer))) {
        most = n;
        peer = k;
      }
    }
    present_.resize(kept);
    return {peer, most};
  }

 private:
  std::vector<uint32_t> count_;   // per world rank: its messages in the queue
  std::vector<uint8_t> listed_;   // per world rank: in present_
  std::vector<int32_t> present_;  // the world ranks with messages in it (and some whose count fell to 0)
};

// One rank's call sites over the threshold, keyed as libumq keys them: (call site, routine).
class SiteTable {
 public:
  SiteTable(const format::LogFile& file, std::vector<SiteRecord>* out) : file_(file), out_(out) {}

  void add(uint32_t site, uint16_t cat, const format::CommDef* comm, uint64_t length, int peer,
           uint64_t queued) {
    const uint64_t key = uint64_t{site} << 16 | cat;
    auto [it, fresh] = index_.try_emplace(key, out_->size());
    if (fresh) {
      SiteRecord r;
      r.mpi_function = file_.category_name(cat);
      r.communicator = describe(comm);
      if (site && site <= file_.callsites().size()) r.stack = file_.callsites()[site - 1].frames;
      out_->push_back(std::move(r));
      comm_seq_.push_back(UINT64_MAX);
    }
    if (touched_.empty() || touched_.back() != it->second) touched_.push_back(it->second);
    SiteRecord& r = (*out_)[it->second];
    ++r.occurrences;
    r.sum_length += length;
    r.max_length = std::max(r.max_length, length);
    if (peer < 0) return;
    auto p =
        std::find_if(r.peers.begin(), r.peers.end(), [peer](const PeerCount& c) { return c.peer == peer; });
    if (p == r.peers.end()) p = r.peers.insert(r.peers.end(), PeerCount{peer, 0, 0});
    ++p->times_top;
    p->max_queued = std::max(p->max_queued, queued);
  }

  // The streaming sweep takes a rank's queues by communicator id, not in the order their first
  // receives were logged (sweep()'s group order): a site's communicator is then the one of its
  // queue whose first receive was logged first (first_seq), as sweep() names it.
  void end_queue(uint64_t first_seq, const format::CommDef* comm) {
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    for (const size_t i : touched_)
      if (first_seq < comm_seq_[i]) {
        comm_seq_[i] = first_seq;
        (*out_)[i].communicator = describe(comm);
      }
    touched_.clear();
  }

 private:
  const format::LogFile& file_;
  std::vector<SiteRecord>* out_;
  std::unordered_map<uint64_t, size_t> index_;
  std::vector<uint64_t> comm_seq_;  // per record: first_seq of the queue that named its communicator
  std::vector<size_t> touched_;     // records the current queue added to
};

// The series of one rank from its queue's changes (time, +1 or -1): arrivals before departures
// at one time, so that a message sent and taken at the same moment still counts once.
std::vector<Point> step_series(std::vector<std::pair<int64_t, int32_t>>& changes) {
  std::sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  std::vector<Point> out;
  int64_t length = 0;
  for (size_t i = 0; i < changes.size();) {
    const int64_t t = changes[i].first;
    for (; i < changes.size() && changes[i].first == t; ++i) length += changes[i].second;
    out.push_back(Point{t, static_cast<uint32_t>(std::max<int64_t>(length, 0))});
  }
  return out;
}

// The posts, and the messages that were queued (begun before their receive's post), of endpoints
// on the reader's shifts; counts them into out. Each endpoint is dropped as soon as it is read: the
// deques free their blocks as they shrink, and the posts and arrivals, in deques too, grow into
// those blocks, so the peak stays pass 1's.
void read_posts_and_queued(Endpoints e, const std::vector<int64_t>& shift, Groups& groups, Rebuilt& out,
                           std::deque<Query>* posts, std::deque<Arrival>* queued) {
  const uint32_t nranks = out.ranks;
  auto shift_of = [&](int32_t rank) {
    return rank >= 0 && static_cast<uint32_t>(rank) < nranks ? shift[static_cast<size_t>(rank)] : 0;
  };
  // A receive's post, corrected; the completing call's entry when the log does not give it.
  auto post_of = [&](const RecvEnd& r) {
    return (r.post != kUnknown ? r.post : r.call.start) + shift_of(std::get<2>(r.key));
  };
  auto sent_at = [&](const SendEnd& s) { return s.time + shift_of(std::get<1>(s.key)); };

  std::vector<int64_t> leaves(e.sends.size(), kNever);  // each send's receive post
  for (; !e.recvs.empty(); e.recvs.pop_front()) {
    const RecvEnd& r = e.recvs.front();
    const bool posted = r.post != kUnknown;
    out.unknown_posts += !posted;
    const int64_t t = post_of(r);
    bool takes_queued = false;
    if (r.send != kNoSend) {
      leaves[r.send] = t;
      takes_queued = sent_at(e.sends[r.send]) <= t;
    }
    posts->push_back(Query{t, groups.of(std::get<2>(r.key), std::get<0>(r.key)),
                           posted ? r.post_site : r.call.site, takes_queued ? std::get<1>(r.key) : -1,
                           posted ? r.post_cat : r.call.cat});
  }
  out.posts = posts->size();
  for (size_t i = 0; !e.sends.empty(); e.sends.pop_front(), ++i) {
    const SendEnd& s = e.sends.front();
    if (s.cancelled) continue;
    ++out.messages;
    const int64_t t = sent_at(s);
    if (t > leaves[i]) continue;  // its receive was posted first: never unexpected
    queued->push_back(
        Arrival{t, leaves[i], groups.of(std::get<2>(s.key), std::get<0>(s.key)), std::get<1>(s.key)});
  }
  out.unexpected = queued->size();
}

// The posts and the queued messages by group; within a group, in time order.
struct ByGroup {
  std::vector<Query> queries;
  std::vector<size_t> qstart;  // where each group starts in queries, and the end
  std::vector<Arrival> arrivals;
  std::vector<size_t> astart;  // the same in arrivals
};

// Moves the posts and queued messages into their groups and sorts each group by time. A
// timeline's posts mostly are in time order already (logged order), so the stable sort (ties keep
// logged order) only runs where they are not.
ByGroup sort_by_group(std::deque<Query>* posts, std::deque<Arrival>* queued, size_t ngroups) {
  ByGroup b;
  b.qstart = bucket_by_group(posts, ngroups, &b.queries);
  b.astart = bucket_by_group(queued, ngroups, &b.arrivals);
  for (size_t g = 0; g < ngroups; ++g) {
    auto by_time = [](const auto& x, const auto& y) { return x.time < y.time; };
    const auto q0 = b.queries.begin() + static_cast<ptrdiff_t>(b.qstart[g]);
    const auto q1 = b.queries.begin() + static_cast<ptrdiff_t>(b.qstart[g + 1]);
    if (!std::is_sorted(q0, q1, by_time)) std::stable_sort(q0, q1, by_time);
    std::sort(b.arrivals.begin() + static_cast<ptrdiff_t>(b.astart[g]),
              b.arrivals.begin() + static_cast<ptrdiff_t>(b.astart[g + 1]), by_time);
  }
  return b;
}

// One queue at a time (a receiving rank's, on one communicator): messages join it, and a post
// measures it (the rank's longest, and its call site when over the threshold), then the message it
// takes (if it was queued) leaves. Fills out's per-rank maxima and call sites. Both sweeps use it.
class QueueSweep {
 public:
  QueueSweep(const format::LogFile& file, const Options& options, Rebuilt& out)
      : file_(file), options_(options), out_(out), senders_(out.ranks) {
    tables_.reserve(out.ranks);
    for (uint32_t r = 0; r < out.ranks; ++r) tables_.emplace_back(file, &out.sites[r]);
  }
  // Starts the queue of (me, gid); false when me is no rank of the log (its posts are skipped).
  bool start(int32_t me, uint64_t gid) {
    me_ = me;
    length_ = 0;
    senders_.clear();
    if (me < 0 || static_cast<uint32_t>(me) >= out_.ranks) return false;
    comm_ = find_comm(file_, me, gid);
    return true;
  }
  void arrive(int32_t source) {
    ++length_;
    senders_.add(source);
  }
  void post(uint32_t site, uint16_t cat, int32_t takes) {
    out_.max_length[me_] = std::max(out_.max_length[me_], length_);
    if (length_ > options_.threshold) {
      // The communicator rank with the most messages queued.
      const auto [peer, most] = comm_ ? senders_.top(*comm_, comm_ranks_) : std::pair<int, uint32_t>{-1, 0};
      tables_[me_].add(site, cat, comm_, length_, peer, most);
    }
    if (takes >= 0 && length_ > 0) {
      --length_;
      senders_.remove(takes);
    }
  }
  SiteTable& table() { return tables_[me_]; }
  const format::CommDef* comm() const { return comm_; }

 private:
  const format::LogFile& file_;
  const Options& options_;
  Rebuilt& out_;
  std::vector<SiteTable> tables_;
  QueuedSenders senders_;
  CommRanks comm_ranks_;
  int32_t me_ = -1;
  uint64_t length_ = 0;
  const format::CommDef* comm_ = nullptr;
};

// The sweep: per group, arrivals join up to each post's time, then the post.
void sweep(const format::LogFile& file, const Groups& groups, const ByGroup& b, const Options& options,
           Rebuilt& out) {
  QueueSweep queue(file, options, out);
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (!queue.start(groups.rank(g), groups.gid(g))) continue;
    size_t a = b.astart[g];
    for (size_t q = b.qstart[g]; q < b.qstart[g + 1]; ++q) {
      const Query& query = b.queries[q];
      for (; a < b.astart[g + 1] && b.arrivals[a].time <= query.time; ++a) queue.arrive(b.arrivals[a].source);
      queue.post(query.site, query.cat, query.takes);
    }
    queue.table().end_queue(g, queue.comm());  // groups are numbered in logged order already
  }
}

// Each rank's queue length over time, from the queued messages (freed as soon as counted).
void build_series(const Groups& groups, std::vector<Arrival>&& arrivals, Rebuilt& out) {
  const uint32_t nranks = out.ranks;
  std::vector<std::vector<std::pair<int64_t, int32_t>>> changes(nranks);
  for (const Arrival& x : arrivals) {
    const int32_t me = groups.rank(x.group);
    if (me < 0 || static_cast<uint32_t>(me) >= nranks) continue;
    changes[me].emplace_back(x.time, 1);
    if (x.leaves != kNever) changes[me].emplace_back(x.leaves, -1);
  }
  std::vector<Arrival>().swap(arrivals);
  out.series.resize(nranks);
  for (uint32_t r = 0; r < nranks; ++r) {
    out.series[r] = step_series(changes[r]);
    std::vector<std::pair<int64_t, int32_t>>().swap(changes[r]);
  }
}

// One post or queued message on its way through the external sort to the sweep: by queue
// (receiving rank and communicator), then time; at one time queued messages before posts (the
// sweep adds those that began up to a post's time), posts in logged order. 40 bytes, compared as
// three integers: a 100 M-record log sorts some 20 M of them.
struct SweepItem {
  uint64_t queue;  // the receiver's world rank << 32 | its communicator's number (comm_number)
  int64_t time;
  uint64_t order;  // 0 for a queued message; for a post, kPost | its place in logged order (seq)
  int32_t source;  // a queued message's sender; a post's `takes` (Query::takes)
  uint32_t site;
  uint16_t cat;
};
constexpr uint64_t kPost = uint64_t{1} << 63;  // seq is chunk index << 32 | position: below 2^63
struct SweepOrder {
  bool operator()(const SweepItem& a, const SweepItem& b) const {
    if (a.queue != b.queue) return a.queue < b.queue;
    return a.time != b.time ? a.time < b.time : a.order < b.order;
  }
};

// Told each message by the wait-state replay: counts it and hands its post and, when it was
// queued, its arrival to the sort, on the replay's shifted clocks (read_posts_and_queued's rules).
class StreamingQueue : public MessageObserver {
 public:
  StreamingQueue(const Options& options, Rebuilt& out)
      : out_(out), sort_(options.sort_memory, "umq", SweepOrder()) {}

  void begin(const std::vector<int64_t>& shift) override {
    shift_ = shift;
    sort_.clear();
    out_.posts = out_.unknown_posts = out_.messages = out_.unexpected = out_.unmatched = 0;
    stored_ = Status();
  }
  void paired(const SendEnd& s, const RecvEnd& r, uint64_t recv_seq) override {
    const int64_t post = post_of(r);
    const int64_t sent = sent_at(s);
    const bool queued = sent <= post;
    add_post(r, post, recv_seq, queued ? std::get<1>(r.key) : -1);
    ++out_.messages;
    if (queued) add_arrival(s, sent);
  }
  void unpaired_send(const SendEnd& s) override {
    ++out_.unmatched;
    ++out_.messages;
    add_arrival(s, sent_at(s));  // never received: queued for good
  }
  void unpaired_recv(const RecvEnd& r, uint64_t recv_seq) override {
    ++out_.unmatched;
    add_post(r, post_of(r), recv_seq, -1);
  }

  const Status& stored() const { return stored_; }
  // The receiving rank and communicator of a queue.
  int32_t rank_of(uint64_t queue) const { return static_cast<int32_t>(queue >> 32); }
  uint64_t gid_of(uint64_t queue) const { return gids_[static_cast<uint32_t>(queue)]; }
  format::ExternalSort<SweepItem, SweepOrder>& sorted() { return sort_; }

 private:
  int64_t shift_of(int32_t rank) const {
    return rank >= 0 && static_cast<size_t>(rank) < shift_.size() ? shift_[static_cast<size_t>(rank)] : 0;
  }
  int64_t post_of(const RecvEnd& r) const {
    return (r.post != kUnknown ? r.post : r.call.start) + shift_of(std::get<2>(r.key));
  }
  int64_t sent_at(const SendEnd& s) const { return s.time + shift_of(std::get<1>(s.key)); }
  void add_post(const RecvEnd& r, int64_t post, uint64_t seq, int32_t takes) {
    const bool posted = r.post != kUnknown;
    ++out_.posts;
    out_.unknown_posts += !posted;
    add(SweepItem{queue_of(std::get<2>(r.key), std::get<0>(r.key)), post, kPost | seq, takes,
                  posted ? r.post_site : r.call.site, posted ? r.post_cat : r.call.cat});
  }
  void add_arrival(const SendEnd& s, int64_t sent) {
    ++out_.unexpected;
    add(SweepItem{queue_of(std::get<2>(s.key), std::get<0>(s.key)), sent, 0, std::get<1>(s.key), 0, 0});
  }
  void add(const SweepItem& item) {
    if (stored_.ok()) stored_ = sort_.add(item);
  }
  uint64_t queue_of(int32_t rank, uint64_t gid) {
    auto [it, fresh] = comm_number_.try_emplace(gid, static_cast<uint32_t>(gids_.size()));
    if (fresh) gids_.push_back(gid);
    return uint64_t{static_cast<uint32_t>(rank)} << 32 | it->second;
  }

  std::unordered_map<uint64_t, uint32_t> comm_number_;  // by global id, numbered as first met
  std::vector<uint64_t> gids_;
  Rebuilt& out_;
  std::vector<int64_t> shift_;
  format::ExternalSort<SweepItem, SweepOrder> sort_;
  Status stored_;
};

// sweep()'s walk over the sorted stream: per (rank, communicator), queued messages before the
// posts at their time.
Status sweep_sorted(const format::LogFile& file, StreamingQueue& queue, const Options& options,
                    Rebuilt& out) {
  QueueSweep sweep(file, options, out);
  bool first = true, counted = false;
  uint64_t current = 0, first_seq = UINT64_MAX;
  auto end_queue = [&] {
    if (counted) sweep.table().end_queue(first_seq, sweep.comm());
  };
  const Status s = queue.sorted().for_each_sorted([&](const SweepItem& x) {
    if (first || x.queue != current) {  // the next queue
      end_queue();
      first = false;
      current = x.queue;
      first_seq = UINT64_MAX;
      counted = sweep.start(queue.rank_of(x.queue), queue.gid_of(x.queue));
    }
    if (!counted) return;
    if (!(x.order & kPost)) return sweep.arrive(x.source);
    first_seq = std::min(first_seq, x.order & ~kPost);
    sweep.post(x.site, x.cat, x.source);
  });
  end_queue();
  return s;
}

// The streaming rebuild (see rebuild()).
StatusOr<Rebuilt> rebuild_streaming(const format::LogFile& file, const Options& options) {
  Rebuilt out;
  out.ranks = file.definitions().world_size;
  out.sites.resize(out.ranks);
  out.max_length.assign(out.ranks, 0);
  StreamingQueue queue(options, out);
  waits::Options replay;
  replay.keep_going = options.keep_going;
  replay.keep_blame = false;
  replay.observer = &queue;
  auto report = waits::analyze(file, replay);
  if (!report.ok()) return report.status();
  MPE_RETURN_IF_ERROR(queue.stored());
  out.records = report->records;
  MPE_RETURN_IF_ERROR(sweep_sorted(file, queue, options, out));
  return out;
}

}  // namespace

VariableInfo rebuilt_variable(const std::string& path, uint64_t threshold) {
  return VariableInfo{"rebuilt from " + std::string(base_name(path)), true, threshold};
}

StatusOr<Rebuilt> rebuild(const format::LogFile& file, const Options& options) {
  if (!options.keep_series) return rebuild_streaming(file, options);
  analysis::ScanOptions scan;
  scan.collectives = false;
  scan.keep_going = options.keep_going;
  scan.what = "unexpected-queue rebuild";
  auto collected = analysis::collect(file, scan);
  if (!collected.ok()) return collected.status();
  return rebuild(file, std::move(**collected), options);
}

StatusOr<Rebuilt> rebuild(const format::LogFile& file, analysis::Collected&& collected,
                          const Options& options) {
  Rebuilt out;
  const uint32_t nranks = file.definitions().world_size;
  out.ranks = nranks;
  out.sites.resize(nranks);
  out.max_length.assign(nranks, 0);

  Endpoints e = std::move(collected.endpoints);
  std::vector<int64_t> shift = std::move(collected.shift);
  out.records = collected.totals.records;
  out.unmatched = collected.unmatched;
  collected = analysis::Collected();
  decltype(e.colls)().swap(e.colls);  // the wait states' share of a shared collection

  Groups groups;
  std::deque<Query> posts;
  std::deque<Arrival> queued;
  read_posts_and_queued(std::move(e), shift, groups, out, &posts, &queued);
  ByGroup by_group = sort_by_group(&posts, &queued, groups.size());
  sweep(file, groups, by_group, options, out);
  std::vector<Query>().swap(by_group.queries);  // the series below grow into their memory
  if (options.keep_series) build_series(groups, std::move(by_group.arrivals), out);
  return out;
}

}  // namespace mpe::analysis::umq
