// JobView: folds the ranks' frames into what viewers show, and the hang diagnosis.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "mpe/live_view.h"

namespace mpe::live_stream {

namespace {

double seconds_between(uint64_t from_ns, uint64_t to_ns) {
  return to_ns > from_ns ? static_cast<double>(to_ns - from_ns) / 1e9 : 0.0;
}

bool blocking(const ThreadNow& t) { return t.in_mpi && t.wait != WaitKind::kNone; }

}  // namespace

void JobView::ingest(const void* data, size_t n) {
  auto kind = peek_kind(data, n);
  if (kind.ok() && *kind == MessageKind::kRankFrame) {
    if (auto f = decode_frame(data, n); f.ok()) return add(std::move(*f));
  } else if (kind.ok() && *kind == MessageKind::kJobEnd) {
    if (auto e = decode_job_end(data, n); e.ok()) return end(*e);
  }
  reject();
}

bool JobView::end_if_abandoned(bool live_file_exists, double quiet_seconds) {
  if (ended_ || live_file_exists || quiet_seconds <= kAbandonedQuietSeconds) return false;
  end(JobEnd{JobEnd::kExitUnknown, ""});
  return true;
}

std::string call_text(const NowRow& r) {
  std::string s = r.in_mpi ? (r.routine.empty() ? "?" : r.routine) : "in the application";
  if (r.in_mpi) {
    if (r.peer == peer::kAnySource)
      s += " peer MPI_ANY_SOURCE";
    else if (r.peer >= 0)
      s += " peer " + std::to_string(r.peer);
    if (r.peer >= 0 || r.peer == peer::kAnySource) s += " tag " + std::to_string(r.tag);
    if (r.root >= 0) s += " root " + std::to_string(r.root);
    if (!r.comm.empty() && r.comm != "MPI_COMM_WORLD") s += " on " + r.comm;
    if (!r.callsite.empty()) s += ", in " + r.callsite;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, ", %.1f s", r.seconds);
  return s + buf;
}

void JobView::add(RankFrame f) {
  const uint32_t rank = f.rank;
  if (auto it = latest_.find(rank); it != latest_.end()) {
    const RankFrame& last = it->second;
    const bool restarted = last.pid != f.pid || last.host != f.host;  // a new run on the same stream
    if (!restarted && f.seq <= last.seq) return;
    if (!restarted && f.seq > last.seq + 1) gap_frames_ += f.seq - last.seq - 1;
  }
  ++frames_received_;
  world_size_ = std::max(world_size_, f.world_size);
  now_ns_ = std::max(now_ns_, f.interval_end_ns);
  RankTotals& t = totals_[rank];
  if (t.first_ns == 0) t.first_ns = f.interval_start_ns;
  t.last_ns = f.interval_end_ns;
  t.mpi_ns += f.mpi_ns;
  total_sends_ += f.sends;
  total_send_bytes_ += f.send_bytes;
  total_recvs_ += f.recvs;
  total_collectives_ += f.collectives;
  if (f.aggregated) ++aggregated_intervals_;
  add_traffic(f);
  add_states(f);
  f.events.clear();
  f.events.shrink_to_fit();
  latest_[rank] = std::move(f);
  trim();
}

void JobView::add_traffic(const RankFrame& f) {
  const auto from = static_cast<int32_t>(f.rank);
  std::map<int32_t, PairTraffic> pairs;
  auto count = [&](int32_t to, uint64_t n, uint64_t bytes) {
    for (PairTraffic* p : {&pairs[to], &cumulative_[{from, to}]}) {
      p->from = from;
      p->to = to;
      p->count += n;
      p->bytes += bytes;
    }
  };
  for (const PeerTotal& p : f.per_peer) count(p.peer, p.count, p.bytes);
  for (const PeerTotal& p : f.received_per_peer) {
    PairTraffic& r = cumulative_received_[{p.peer, from}];
    r.from = p.peer, r.to = from, r.count += p.count, r.bytes += p.bytes;
  }
  for (const TrafficEvent& e : f.events) {
    // The one matcher's rule (mpe/message_matcher.h), keyed as the logfile's messages are. A
    // waiting send is its arrow's index (offset by arrows_base_), a waiting receive its time.
    if (e.kind == EventKind::kSend) {
      count(e.peer, 1, e.bytes);
      Arrow a{from, e.peer, e.tag, e.t_ns, 0, e.bytes};
      const uint64_t index = arrows_base_ + arrows_.size();
      if (auto recv_ns = matcher_.add_send(format::MessageKey{e.comm, from, e.peer, e.tag}, index))
        a.recv_ns = *recv_ns;
      arrows_.push_back(a);
    } else if (e.kind == EventKind::kRecv) {
      PairTraffic& r = cumulative_received_[{e.peer, from}];
      r.from = e.peer, r.to = from, ++r.count, r.bytes += e.bytes;
      const auto trimmed = [&](uint64_t send) { return send >= arrows_base_; };
      if (auto send = matcher_.add_recv(format::MessageKey{e.comm, e.peer, from, e.tag}, e.t_ns, trimmed))
        arrows_[*send - arrows_base_].recv_ns = e.t_ns;
    }
  }
  IntervalTraffic interval{f.interval_end_ns, {}};
  for (auto& [to, p] : pairs) interval.pairs.push_back(p);
  traffic_.push_back(std::move(interval));
}

// The interval as states: the time in each MPI routine, then the application, in proportion
// (the frame says how long, not in which order), with a call still in progress last. A rank
// that stays in one state extends it rather than adding one state per interval.
void JobView::add_states(const RankFrame& f) {
  const uint64_t start = f.interval_start_ns, end = f.interval_end_ns;
  if (end <= start) return;
  const double span =
      static_cast<double>(end - start) * static_cast<double>(std::max<size_t>(1, f.threads.size()));
  std::vector<std::pair<std::string, double>> parts;
  double mpi = 0;
  const ThreadNow* current = f.threads.empty() ? nullptr : &f.threads.front();
  for (const RoutineTime& r : f.routines) {
    if (current && current->in_mpi && r.routine == current->routine) continue;  // placed last
    parts.emplace_back(r.routine, static_cast<double>(r.ns) / span);
    mpi += parts.back().second;
  }
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  double tail = 0;
  if (current && current->in_mpi) {
    for (const RoutineTime& r : f.routines)
      if (r.routine == current->routine) tail = static_cast<double>(r.ns) / span;
    if (current->since_ns <= start) tail = 1.0 - mpi;  // the whole interval, after the others
  }
  const double app = std::max(0.0, 1.0 - mpi - tail);
  parts.insert(parts.begin(), {std::string(), app});
  if (tail > 0) parts.emplace_back(current->routine, tail);
  uint64_t at = start;
  for (const auto& [routine, share] : parts) {
    const auto len = static_cast<uint64_t>(std::clamp(share, 0.0, 1.0) * static_cast<double>(end - start));
    if (len == 0) continue;
    const uint64_t stop = std::min(end, at + len);
    LiveState* last = nullptr;
    if (auto it = last_state_.find(f.rank); it != last_state_.end() && it->second >= states_base_)
      last = &states_[it->second - states_base_];
    if (last && last->routine == routine && last->end_ns + 1000000 >= at) {
      last->end_ns = stop;
    } else {
      last_state_[f.rank] = states_base_ + states_.size();
      states_.push_back(LiveState{static_cast<int32_t>(f.rank), at, stop, routine});
    }
    at = stop;
  }
}

void JobView::trim() {
  const uint64_t keep_from = now_ns_ > keep_ns_ ? now_ns_ - keep_ns_ : 0;
  while (!arrows_.empty() && arrows_.front().send_ns < keep_from) {
    arrows_.pop_front();
    ++arrows_base_;
  }
  while (!states_.empty() && states_.front().end_ns < keep_from) {
    states_.pop_front();
    ++states_base_;
  }
  const uint64_t traffic_from = now_ns_ > traffic_ns_ ? now_ns_ - traffic_ns_ : 0;
  while (!traffic_.empty() && traffic_.front().end_ns < traffic_from) traffic_.pop_front();
}

size_t JobView::ranks_finalized() const {
  return static_cast<size_t>(
      std::count_if(latest_.begin(), latest_.end(), [](const auto& kv) { return kv.second.finalized; }));
}

uint64_t JobView::frames_dropped_by_ranks() const {
  uint64_t n = 0;
  for (const auto& [rank, f] : latest_) n += f.frames_dropped;
  return n;
}

uint64_t JobView::events_dropped() const {
  uint64_t n = 0;
  for (const auto& [rank, f] : latest_) n += f.events_dropped;
  return n;
}

namespace {

// The pairs, most bytes first (ties in (from, to) order).
std::vector<PairTraffic> most_bytes_first(const std::map<std::pair<int32_t, int32_t>, PairTraffic>& pairs) {
  std::vector<PairTraffic> out;
  for (const auto& [key, p] : pairs) out.push_back(p);
  std::stable_sort(out.begin(), out.end(),
                   [](const PairTraffic& a, const PairTraffic& b) { return a.bytes > b.bytes; });
  return out;
}

}  // namespace

std::vector<PairTraffic> JobView::received_pairs() const { return most_bytes_first(cumulative_received_); }

std::vector<PairTraffic> JobView::traffic_pairs(bool cumulative) const {
  std::map<std::pair<int32_t, int32_t>, PairTraffic> sum;
  if (cumulative) return most_bytes_first(cumulative_);
  for (const IntervalTraffic& t : traffic_)
    for (const PairTraffic& p : t.pairs) {
      PairTraffic& s = sum[{p.from, p.to}];
      s.from = p.from;
      s.to = p.to;
      s.count += p.count;
      s.bytes += p.bytes;
    }
  return most_bytes_first(sum);
}

std::map<uint32_t, double> JobView::mpi_share() const {
  std::map<uint32_t, double> share;
  for (const auto& [rank, t] : totals_) {
    const auto it = latest_.find(rank);
    const double threads =
        it == latest_.end() ? 1.0 : static_cast<double>(std::max<size_t>(1, it->second.threads.size()));
    const double wall = static_cast<double>(t.last_ns - t.first_ns) * threads;
    share[rank] = wall > 0 ? std::min(1.0, static_cast<double>(t.mpi_ns) / wall) : 0.0;
  }
  return share;
}

namespace {

NowRow row_of(const RankFrame& f, const ThreadNow& t, double stuck_seconds) {
  NowRow r;
  r.rank = static_cast<int32_t>(f.rank);
  r.thread = t.thread;
  r.host = f.host;
  r.in_mpi = t.in_mpi;
  r.seconds = seconds_between(t.since_ns, f.interval_end_ns);
  r.routine = t.in_mpi ? t.routine : std::string();
  r.callsite = t.callsite;
  if (t.comm >= 0) r.comm = f.comms[static_cast<size_t>(t.comm)].label;
  r.peer = t.peer;
  r.tag = t.tag;
  r.root = t.root;
  r.stuck = blocking(t) && r.seconds >= stuck_seconds;
  return r;
}

}  // namespace

std::vector<NowRow> JobView::now_table(double stuck_seconds) const {
  std::vector<NowRow> rows;
  for (const auto& [rank, f] : latest_)
    for (const ThreadNow& t : f.threads) rows.push_back(row_of(f, t, stuck_seconds));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const NowRow& a, const NowRow& b) { return a.seconds > b.seconds; });
  return rows;
}

// The wait-for graph (MUST's AND/OR model). A rank is blocked when every thread of it is in a
// blocking call for at least the threshold; its representative is the longest such call. Each
// blocked rank waits for ALL of a set (a named source, a Send's destination, the requests of a
// Wait/Waitall, the members missing from its collective) or for ANY of one (MPI_ANY_SOURCE,
// Waitany/Waitsome). A rank can still be released when it is not blocked, or when ALL (resp.
// ANY) of what it waits for can; the fixed point of that rule leaves exactly the deadlocked
// ranks (cost: O(ranks x edges) at worst, milliseconds for thousands of ranks). Cycles are found
// by following, from each deadlocked rank, a target that is deadlocked too: every such walk ends
// in a cycle. Ranks never seen, finalized ranks and calls whose peers are unknown are treated as
// able to proceed, so a missing frame can hide a deadlock but never invent one.
namespace {

// A rank in the wait-for graph.
struct Node {
  const RankFrame* frame = nullptr;
  const ThreadNow* call = nullptr;  // set when blocked
  bool any = false;                 // OR (else AND)
  std::vector<int32_t> targets;
};

// Every rank's node, with its call set when all its threads are blocked for at least
// stuck_seconds in calls whose peers are known (the longest-blocked thread's call).
std::map<int32_t, Node> blocked_nodes(const std::map<uint32_t, RankFrame>& latest, double stuck_seconds) {
  std::map<int32_t, Node> nodes;
  for (const auto& [rank, f] : latest) {
    Node& n = nodes[static_cast<int32_t>(rank)];
    n.frame = &f;
    if (f.finalized || f.threads.empty()) continue;
    const ThreadNow* longest = nullptr;
    bool all_blocked = true;
    for (const ThreadNow& t : f.threads) {
      if (!blocking(t) || t.wait == WaitKind::kUnknown ||
          seconds_between(t.since_ns, f.interval_end_ns) < stuck_seconds) {
        all_blocked = false;
        break;
      }
      if (!longest || t.since_ns < longest->since_ns) longest = &t;
    }
    if (all_blocked && longest) n.call = longest;
  }
  return nodes;
}

// The ranks that are not blocked or can be released: the fixed point of "every target (AND) or
// one target (OR) can be released".
std::set<int32_t> releasable_ranks(const std::map<int32_t, Node>& nodes) {
  std::set<int32_t> releasable;
  for (const auto& [rank, n] : nodes)
    if (!n.call) releasable.insert(rank);
  auto can_release = [&](int32_t r) { return !nodes.count(r) || releasable.count(r); };
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [rank, n] : nodes) {
      if (!n.call || releasable.count(rank)) continue;
      const bool ok = n.any ? std::any_of(n.targets.begin(), n.targets.end(), can_release)
                            : std::all_of(n.targets.begin(), n.targets.end(), can_release);
      if (ok) {
        releasable.insert(rank);
        changed = true;
      }
    }
  }
  return releasable;
}

}  // namespace

Diagnosis JobView::diagnose(double stuck_seconds) const {
  std::map<int32_t, Node> nodes = blocked_nodes(latest_, stuck_seconds);
  // Whether rank m's current calls include collective `routine` on the communicator `key`.
  auto in_collective = [&](int32_t m, uint64_t key, const std::string& routine) {
    const auto it = latest_.find(static_cast<uint32_t>(m));
    if (it == latest_.end()) return false;
    for (const ThreadNow& t : it->second.threads)
      if (t.in_mpi && t.wait == WaitKind::kCollective && t.comm >= 0 &&
          it->second.comms[static_cast<size_t>(t.comm)].key == key && t.routine == routine)
        return true;
    return false;
  };
  for (auto& [rank, n] : nodes) {
    if (!n.call) continue;
    const ThreadNow& t = *n.call;
    const CommDef* comm = t.comm >= 0 ? &n.frame->comms[static_cast<size_t>(t.comm)] : nullptr;
    switch (t.wait) {
      case WaitKind::kAllOf:
      case WaitKind::kAnyOf:
        n.any = t.wait == WaitKind::kAnyOf;
        n.targets = t.peers;
        break;
      case WaitKind::kAnyInComm:
        n.any = true;
        if (comm) n.targets = comm->members();
        break;
      case WaitKind::kCollective:
        if (comm)
          for (int32_t m : comm->members())
            if (!in_collective(m, comm->key, t.routine)) n.targets.push_back(m);
        break;
      default:
        break;
    }
    std::erase(n.targets, rank);
    std::sort(n.targets.begin(), n.targets.end());
    n.targets.erase(std::unique(n.targets.begin(), n.targets.end()), n.targets.end());
    if (n.targets.empty()) n.call = nullptr;  // waits for nobody we know of: not a hang we can explain
  }
  auto blocked = [&](int32_t r) {
    const auto it = nodes.find(r);
    return it != nodes.end() && it->second.call != nullptr;
  };
  const std::set<int32_t> releasable = releasable_ranks(nodes);
  Diagnosis d;
  auto row = [&](int32_t r) {
    const Node& n = nodes.at(r);
    if (n.call) return row_of(*n.frame, *n.call, stuck_seconds);
    NowRow best;
    best.rank = r;
    best.seconds = -1;
    for (const ThreadNow& t : n.frame->threads) {
      NowRow candidate = row_of(*n.frame, t, stuck_seconds);
      if (candidate.seconds > best.seconds) best = candidate;
    }
    if (n.frame->finalized) best.routine = "MPI_Finalize", best.in_mpi = true;
    return best;
  };
  // Deadlocks: walk deadlocked targets until a rank repeats.
  std::set<std::vector<int32_t>> seen_cycles;
  for (const auto& [start, n] : nodes) {
    if (!n.call || releasable.count(start)) continue;
    std::vector<int32_t> path;
    std::map<int32_t, size_t> at;
    int32_t r = start;
    while (!at.count(r)) {
      at[r] = path.size();
      path.push_back(r);
      const Node& cur = nodes.at(r);
      const auto next = std::find_if(cur.targets.begin(), cur.targets.end(),
                                     [&](int32_t m) { return blocked(m) && !releasable.count(m); });
      if (next == cur.targets.end()) break;  // cannot happen for a deadlocked rank; be safe
      r = *next;
    }
    if (!at.count(r) || at[r] >= path.size()) continue;
    std::vector<int32_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(at[r]), path.end());
    if (cycle.size() < 2 && nodes.at(cycle[0]).targets.size() != 1) continue;
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    if (!seen_cycles.insert(cycle).second) continue;
    Deadlock dl;
    for (int32_t m : cycle) dl.cycle.push_back(row(m));
    d.deadlocks.push_back(std::move(dl));
  }
  // Stuck: blocked ranks that can be released, by the unblocked ranks they wait for.
  std::map<int32_t, std::set<int32_t>> held;
  for (const auto& [start, n] : nodes) {
    if (!n.call || !releasable.count(start)) continue;
    std::set<int32_t> visited{start};
    std::vector<int32_t> stack(n.targets.begin(), n.targets.end());
    while (!stack.empty()) {
      const int32_t m = stack.back();
      stack.pop_back();
      if (!visited.insert(m).second || !nodes.count(m)) continue;
      if (!blocked(m)) {
        held[m].insert(start);
        continue;
      }
      const Node& next = nodes.at(m);
      stack.insert(stack.end(), next.targets.begin(), next.targets.end());
    }
  }
  for (auto& [holder, waiting] : held)
    d.stuck.push_back(Stuck{row(holder), {waiting.begin(), waiting.end()}});
  std::stable_sort(d.stuck.begin(), d.stuck.end(),
                   [](const Stuck& a, const Stuck& b) { return a.waiting.size() > b.waiting.size(); });
  return d;
}

}  // namespace mpe::live_stream
