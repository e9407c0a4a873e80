// Wait-state analysis: pass 1 collects communication endpoints timeline by timeline
// (endpoints.h), pass 2 matches them and measures the patterns. The design comment is in
// mpe/waits.h.
#include "mpe/waits.h"

#include <algorithm>
#include <new>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "endpoints.h"

namespace mpe::analysis::waits {

namespace {

using analysis::Call;
using analysis::CollEnd;
using analysis::CollKind;
using analysis::Endpoints;
using analysis::kNoSend;
using analysis::kUnknown;
using analysis::RecvEnd;
using analysis::SendEnd;
using analysis::shifted;

// Report::blame's order.
bool by_pair(const Blame& a, const Blame& b) {
  return a.culprit != b.culprit ? a.culprit < b.culprit : a.waiter < b.waiter;
}

// Adds one instance to the totals (and to the list when kept).
class Tally {
 public:
  Tally(Report* report, const Options& options) : report_(report), options_(options) {}

  // Moves who made whom wait into the report, sorted by (culprit, waiter).
  void finish() {
    report_->blame.reserve(blame_.size());
    for (const auto& [pair, ns] : blame_)
      report_->blame.push_back(Blame{static_cast<uint32_t>(pair >> 32), static_cast<uint32_t>(pair), ns});
    decltype(blame_)().swap(blame_);
    std::sort(report_->blame.begin(), report_->blame.end(), by_pair);
  }

  // `waiting` waited on rank `rank` from `from` (the moment the culprit entered) to the end of
  // the call at most; nothing when from <= the call's start.
  void add(Pattern p, uint32_t rank, const Call& waiting, int64_t from, int32_t culprit,
           const Call& culprit_call, int64_t send_time = 0, int64_t recv_time = 0) {
    const int64_t start = waiting.start;
    const int64_t end = std::min(from, waiting.end);
    if (end <= start) return;
    PatternTotal& total = report_->patterns[static_cast<int>(p)];
    const int64_t ns = end - start;
    total.ns += ns;
    ++total.instances;
    total.per_rank[rank] += ns;
    SiteTotal& site = total.per_site[{waiting.site, waiting.cat}];
    site.ns += ns;
    ++site.instances;
    if (options_.keep_blame && culprit >= 0 && static_cast<uint32_t>(culprit) < report_->ranks)
      blame_[uint64_t{static_cast<uint32_t>(culprit)} << 32 | rank] += ns;
    if (!options_.keep_instances) return;
    Instance in{.pattern = p,
                .rank = rank,
                .thread = waiting.thread,
                .cat = waiting.cat,
                .start = start,
                .end = end,
                .state_start = waiting.start,
                .state_end = waiting.end,
                .site = waiting.site};
    in.culprit = culprit;
    in.culprit_thread = culprit_call.thread;
    in.culprit_time = from;
    in.culprit_state_start = culprit_call.start;
    in.culprit_state_end = culprit_call.end;
    in.culprit_cat = culprit_call.cat;
    in.send_time = send_time;
    in.recv_time = recv_time;
    report_->instances.push_back(in);
  }

 private:
  Report* report_;
  const Options& options_;
  // (culprit << 32 | waiter) -> ns: only the pairs that waited, never a ranks × ranks matrix.
  std::unordered_map<uint64_t, int64_t> blame_;
};

// The reader's clock shift of a rank; 0 for a rank outside the world.
struct Shifts {
  const std::vector<int64_t>& shift;
  uint32_t nranks;
  int64_t operator()(int32_t rank) const {
    return rank >= 0 && static_cast<uint32_t>(rank) < nranks ? shift[rank] : 0;
  }
};

// Measures Late Receiver and Late Sender over the matched messages.
void tally_point_to_point(const Endpoints& e, const Shifts& shift_of, Tally& tally) {
  // Late Receiver: a send that must wait for its receive to be posted.
  for (const RecvEnd& r : e.recvs) {
    if (r.send == kNoSend || r.post == kUnknown || !e.sends[r.send].waits_for_receiver) continue;
    const SendEnd& s = e.sends[r.send];
    const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
    const Call posted{r.post + shift_of(dst), r.post + shift_of(dst), r.call.site, r.call.cat, r.call.thread};
    tally.add(Pattern::kLateReceiver, static_cast<uint32_t>(src), shifted(s.call, shift_of(src)),
              r.post + shift_of(dst), dst, posted, s.time + shift_of(src), r.time + shift_of(dst));
  }
  // Late Sender: receives one call completed are adjacent in logged order; in each group, the
  // latest send counts (Waitall, Waitsome).
  auto send_start = [&](const RecvEnd& r) {
    const SendEnd& s = e.sends[r.send];
    return s.call.start + shift_of(std::get<1>(s.key));
  };
  for (size_t i = 0; i < e.recvs.size();) {
    size_t j = i;
    const RecvEnd* worst = nullptr;
    for (; j < e.recvs.size() && std::get<2>(e.recvs[j].key) == std::get<2>(e.recvs[i].key) &&
           e.recvs[j].call.thread == e.recvs[i].call.thread && e.recvs[j].call.start == e.recvs[i].call.start;
         ++j)
      if (e.recvs[j].send != kNoSend && (!worst || send_start(e.recvs[j]) > send_start(*worst)))
        worst = &e.recvs[j];
    if (worst) {
      const SendEnd& s = e.sends[worst->send];
      const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
      tally.add(Pattern::kLateSender, static_cast<uint32_t>(dst), shifted(worst->call, shift_of(dst)),
                s.call.start + shift_of(src), src, shifted(s.call, shift_of(src)), s.time + shift_of(src),
                worst->time + shift_of(dst));
    }
    i = j;
  }
}

// Measures the collective patterns; an instance whose members disagree on the routine is unmatched.
void tally_collectives(Endpoints& e, const Shifts& shift_of, Tally& tally, Report& report) {
  // Collectives: instances are (communicator, k); every member must agree on the routine.
  std::sort(e.colls.begin(), e.colls.end(), [](const CollEnd& a, const CollEnd& b) {
    return a.gid != b.gid ? a.gid < b.gid : a.k != b.k ? a.k < b.k : a.member < b.member;
  });
  for (size_t i = 0; i < e.colls.size();) {
    size_t j = i;
    while (j < e.colls.size() && e.colls[j].gid == e.colls[i].gid && e.colls[j].k == e.colls[i].k) ++j;
    const CollEnd* first = &e.colls[i];
    bool agree = j - i > 1;
    for (size_t m = i; m < j && agree; ++m) agree = e.colls[m].cat == first->cat;
    if (!agree) {
      ++report.unmatched;
      i = j;
      continue;
    }
    auto enter = [&](const CollEnd& c) { return c.enter + shift_of(c.member); };
    const CollEnd* latest = first;
    const CollEnd* root = nullptr;
    for (size_t m = i; m < j; ++m) {
      if (enter(e.colls[m]) > enter(*latest)) latest = &e.colls[m];
      if (e.colls[m].member == first->root) root = &e.colls[m];
    }
    for (size_t m = i; m < j; ++m) {
      const CollEnd& c = e.colls[m];
      if (!c.complete) continue;
      const Call waiting = shifted(c.waiting, shift_of(c.member));
      const uint32_t me = static_cast<uint32_t>(c.member);
      switch (c.kind) {
        case CollKind::kBarrier:
        case CollKind::kNxN:
          if (latest != &c)
            tally.add(c.kind == CollKind::kBarrier ? Pattern::kWaitBarrier : Pattern::kWaitNxN, me, waiting,
                      enter(*latest), latest->member, shifted(latest->waiting, shift_of(latest->member)));
          break;
        case CollKind::kBroadcast:
          if (root && root != &c)
            tally.add(Pattern::kLateBroadcast, me, waiting, enter(*root), root->member,
                      shifted(root->waiting, shift_of(root->member)));
          break;
        case CollKind::kReduce:
          if (root == &c) {
            const CollEnd* earliest = nullptr;
            for (size_t o = i; o < j; ++o)
              if (&e.colls[o] != &c && (!earliest || enter(e.colls[o]) < enter(*earliest)))
                earliest = &e.colls[o];
            if (earliest)
              tally.add(Pattern::kEarlyReduce, me, waiting, enter(*earliest), earliest->member,
                        shifted(earliest->waiting, shift_of(earliest->member)));
          }
          break;
        case CollKind::kNone:
          break;
      }
    }
    i = j;
  }
}

}  // namespace

const char* pattern_key(Pattern p) {
  static const char* const kKeys[] = {"late_sender", "late_receiver",  "wait_barrier",
                                      "wait_nxn",    "late_broadcast", "early_reduce"};
  return kKeys[static_cast<int>(p)];
}

const char* pattern_name(Pattern p) {
  static const char* const kNames[] = {"Late Sender", "Late Receiver",  "Wait at Barrier",
                                       "Wait at N×N", "Late Broadcast", "Early Reduce"};
  return kNames[static_cast<int>(p)];
}

int64_t blame_ns(const Report& report, uint32_t culprit, uint32_t waiter) {
  const auto it =
      std::lower_bound(report.blame.begin(), report.blame.end(), Blame{culprit, waiter, 0}, by_pair);
  return it != report.blame.end() && it->culprit == culprit && it->waiter == waiter ? it->ns : 0;
}

std::vector<int64_t> blame_by_culprit(const Report& report) {
  std::vector<int64_t> out(report.ranks, 0);
  for (const Blame& b : report.blame)
    if (b.culprit < report.ranks) out[b.culprit] += b.ns;
  return out;
}

StatusOr<Report> analyze(const format::LogFile& file, const Options& options) {
  analysis::ScanOptions scan;
  scan.eager_limit = options.eager_limit;
  scan.keep_going = options.keep_going;
  scan.what = "wait-state analysis";
  auto collected = analysis::collect(file, scan);
  if (!collected.ok()) return collected.status();
  return analyze(file, **collected, options);
}

StatusOr<Report> analyze(const format::LogFile& file, analysis::Collected& collected,
                         const Options& options) {
  Report report;
  const uint32_t nranks = file.definitions().world_size;
  report.ranks = nranks;
  for (PatternTotal& p : report.patterns) p.per_rank.assign(nranks, 0);
  if (!collected.collectives)
    return Status(StatusCode::kInvalidArgument, "wait states need the collectives collected");

  // Pass 1 and the matching were the collector's; pass 2: measure, on the reader's shifts.
  Endpoints& e = collected.endpoints;
  report.records = collected.totals.records;
  report.mpi_ns = collected.totals.mpi_ns;
  report.mpi_per_rank = collected.totals.mpi_per_rank;
  report.unmatched = collected.unmatched;
  const Shifts shift_of{collected.shift, nranks};

  Tally tally(&report, options);
  if (options.keep_instances) {
    // An upper bound (a receive makes at most one Late Sender and one Late Receiver instance, a
    // collective member one), reserved: the pages never written take no memory, and the
    // instances are not copied (twice their size at once) as they grow. Too large an address
    // range to reserve only loses that.
    try {
      report.instances.reserve(2 * e.recvs.size() + e.colls.size());
    } catch (const std::bad_alloc&) {
    }
  }
  tally_point_to_point(e, shift_of, tally);
  tally_collectives(e, shift_of, tally, report);
  tally.finish();
  std::sort(report.instances.begin(), report.instances.end(), by_timeline);
  return report;
}

}  // namespace mpe::analysis::waits
