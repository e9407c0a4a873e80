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
#include "waits_tally.h"

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

// Measures Late Receiver and Late Sender over the matched messages.
void tally_point_to_point(const Endpoints& e, const Shifts& shift_of, Tally& tally) {
  for (const RecvEnd& r : e.recvs)
    if (r.send != kNoSend) tally_late_receiver(e.sends[r.send], r, shift_of, tally);
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
    if (worst) tally_late_sender(e.sends[worst->send], *worst, shift_of, tally);
    i = j;
  }
}

// Measures the collective patterns, instance by instance.
void tally_collectives(Endpoints& e, const Shifts& shift_of, Tally& tally, Report& report) {
  std::sort(e.colls.begin(), e.colls.end(), [](const CollEnd& a, const CollEnd& b) {
    return a.gid != b.gid ? a.gid < b.gid : a.k != b.k ? a.k < b.k : a.member < b.member;
  });
  std::vector<CollEnd> instance;
  for (size_t i = 0; i < e.colls.size();) {
    size_t j = i;
    while (j < e.colls.size() && e.colls[j].gid == e.colls[i].gid && e.colls[j].k == e.colls[i].k) ++j;
    instance.assign(e.colls.begin() + static_cast<std::ptrdiff_t>(i),
                    e.colls.begin() + static_cast<std::ptrdiff_t>(j));
    tally_collective(instance.data(), instance.data() + instance.size(), shift_of, tally, report);
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
  std::sort(report.instances.begin(), report.instances.end(), in_report_order);
  return report;
}

}  // namespace mpe::analysis::waits
