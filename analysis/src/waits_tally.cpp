// How the wait states are measured; the design comment is in mpe/waits.h.
#include "waits_tally.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace mpe::analysis::waits {

bool in_report_order(const Instance& a, const Instance& b) {
  auto rest = [](const Instance& i) {
    return std::tie(i.pattern, i.end, i.cat, i.site, i.state_start, i.state_end, i.culprit, i.culprit_thread,
                    i.culprit_cat, i.culprit_time, i.culprit_state_start, i.culprit_state_end, i.send_time,
                    i.recv_time);
  };
  if (by_timeline(a, b)) return true;
  if (by_timeline(b, a)) return false;
  return rest(a) < rest(b);
}

void Tally::finish() {
  report_->blame.reserve(report_->blame.size() + blame_.size());
  for (const auto& [pair, ns] : blame_)
    report_->blame.push_back(Blame{static_cast<uint32_t>(pair >> 32), static_cast<uint32_t>(pair), ns});
  decltype(blame_)().swap(blame_);
  std::sort(report_->blame.begin(), report_->blame.end(), by_pair);
}

void Tally::add(Pattern p, uint32_t rank, const Call& waiting, int64_t from, int32_t culprit,
                const Call& culprit_call, int64_t send_time, int64_t recv_time) {
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

void tally_late_receiver(const SendEnd& s, const RecvEnd& r, const Shifts& shift_of, Tally& tally) {
  if (r.post == kUnknown || !s.waits_for_receiver) return;
  const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
  const Call posted{r.post + shift_of(dst), r.post + shift_of(dst), r.call.site, r.call.cat, r.call.thread};
  tally.add(Pattern::kLateReceiver, static_cast<uint32_t>(src), shifted(s.call, shift_of(src)),
            r.post + shift_of(dst), dst, posted, s.time + shift_of(src), r.time + shift_of(dst));
}

void tally_late_sender(const SendEnd& s, const RecvEnd& worst, const Shifts& shift_of, Tally& tally) {
  const int32_t src = std::get<1>(s.key), dst = std::get<2>(s.key);
  tally.add(Pattern::kLateSender, static_cast<uint32_t>(dst), shifted(worst.call, shift_of(dst)),
            s.call.start + shift_of(src), src, shifted(s.call, shift_of(src)), s.time + shift_of(src),
            worst.time + shift_of(dst));
}

void tally_collective(const CollEnd* first, const CollEnd* last, const Shifts& shift_of, Tally& tally,
                      Report& report) {
  bool agree = last - first > 1;
  for (const CollEnd* m = first; m < last && agree; ++m) agree = m->cat == first->cat;
  if (!agree) {
    ++report.unmatched;
    return;
  }
  auto enter = [&](const CollEnd& c) { return c.enter + shift_of(c.member); };
  const CollEnd* latest = first;
  const CollEnd* root = nullptr;
  for (const CollEnd* m = first; m < last; ++m) {
    if (enter(*m) > enter(*latest)) latest = m;
    if (m->member == first->root) root = m;
  }
  for (const CollEnd* m = first; m < last; ++m) {
    const CollEnd& c = *m;
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
          for (const CollEnd* o = first; o < last; ++o)
            if (o != &c && (!earliest || enter(*o) < enter(*earliest))) earliest = o;
          if (earliest)
            tally.add(Pattern::kEarlyReduce, me, waiting, enter(*earliest), earliest->member,
                      shifted(earliest->waiting, shift_of(earliest->member)));
        }
        break;
      case CollKind::kNone:
        break;
    }
  }
}

}  // namespace mpe::analysis::waits
