// The pieces of a wait-state report that the spread replay (waits_replay.cpp) sends to process 0
// and adds up there, and the clock shifts decided from the backward messages' constraints.
#include "waits_report_parts.h"

#include <algorithm>
#include <iterator>
#include <map>

#include "mpe/byte_codec.h"
#include "mpe/log_reader.h"
#include "waits_tally.h"

namespace mpe::analysis::waits {

Report empty_report(const format::LogFile& file) {
  Report report;
  report.ranks = file.definitions().world_size;
  for (PatternTotal& p : report.patterns) p.per_rank.assign(report.ranks, 0);
  return report;
}

// A report as bytes, for process 0.
std::string pack(const Report& r, const Constraints& need) {
  ByteWriter w;
  w.pod(r.records), w.pod(r.unmatched), w.pod(r.mpi_ns);
  for (int64_t ns : r.mpi_per_rank) w.pod(ns);
  for (const PatternTotal& p : r.patterns) {
    w.pod(p.ns), w.pod(p.instances);
    for (int64_t ns : p.per_rank) w.pod(ns);
    w.pod(p.per_site.size());
    for (const auto& [site, total] : p.per_site) w.pod(site.first), w.pod(site.second), w.pod(total);
  }
  w.pod(r.blame.size());
  for (const Blame& b : r.blame) w.pod(b);
  w.pod(r.instances.size());
  for (const Instance& in : r.instances) w.pod(in);
  w.pod(need.size());
  for (const auto& [ranks, weight] : need) w.pod(ranks), w.pod(weight);
  return std::move(w.data());
}

// Adds a packed report into `into`.
void unpack_into(const std::string& bytes, Report* into, Constraints* need) {
  ByteReader r(bytes.data(), bytes.size());
  into->records += r.pod<uint64_t>();
  into->unmatched += r.pod<uint64_t>();
  into->mpi_ns += r.pod<int64_t>();
  into->mpi_per_rank.resize(into->ranks, 0);
  for (int64_t& ns : into->mpi_per_rank) ns += r.pod<int64_t>();
  for (PatternTotal& p : into->patterns) {
    p.ns += r.pod<int64_t>();
    p.instances += r.pod<uint64_t>();
    for (int64_t& ns : p.per_rank) ns += r.pod<int64_t>();
    for (size_t n = r.pod<size_t>(); n-- > 0;) {
      const uint32_t site = r.pod<uint32_t>();
      const uint32_t cat = r.pod<uint32_t>();
      const auto total = r.pod<SiteTotal>();
      SiteTotal& t = p.per_site[{site, cat}];
      t.ns += total.ns;
      t.instances += total.instances;
    }
  }
  std::vector<Blame> blame(r.pod<size_t>());
  for (Blame& b : blame) b = r.pod<Blame>();
  std::vector<Blame> merged;
  merged.reserve(into->blame.size() + blame.size());
  std::merge(into->blame.begin(), into->blame.end(), blame.begin(), blame.end(), std::back_inserter(merged),
             by_pair);
  into->blame.clear();
  for (const Blame& b : merged)  // a pair measured on two processes: its two sums added
    if (!into->blame.empty() && into->blame.back().culprit == b.culprit &&
        into->blame.back().waiter == b.waiter)
      into->blame.back().ns += b.ns;
    else
      into->blame.push_back(b);
  for (size_t n = r.pod<size_t>(); n-- > 0;) into->instances.push_back(r.pod<Instance>());
  for (size_t n = r.pod<size_t>(); n-- > 0;) {
    const auto ranks = r.pod<uint64_t>();
    const auto weight = r.pod<int64_t>();
    auto [it, fresh] = need->try_emplace(ranks, weight);
    if (!fresh) it->second = std::max(it->second, weight);
  }
}

// The reader's per-rank causality shifts from the backward messages' constraints (endpoints.h's
// causality_shifts): all 0 without any.
std::vector<int64_t> shifts_for(const Constraints& need, uint32_t nranks) {
  std::map<std::pair<int32_t, int32_t>, int64_t> ordered;
  for (const auto& [ranks, w] : need)
    ordered.emplace(
        std::pair<int32_t, int32_t>{static_cast<int32_t>(ranks >> 32), static_cast<int32_t>(ranks)}, w);
  std::vector<int64_t> shift =
      ordered.empty() ? std::vector<int64_t>(nranks, 0) : format::causality_shifts(ordered, nranks);
  shift.resize(nranks, 0);
  return shift;
}

}  // namespace mpe::analysis::waits
