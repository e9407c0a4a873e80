// The iterations of two runs compared k against k (mpe/diff.h): where B - A leaves the noise, and
// on which ranks.
#include <algorithm>
#include <cmath>

#include "mpe/diff.h"

namespace mpe::analysis::diff {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  return v[mid];
}

// The ranks whose |value| exceeds `noise`, largest first.
std::vector<uint32_t> beyond(const std::vector<double>& per_rank, double noise) {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < per_rank.size(); ++r)
    if (std::fabs(per_rank[r]) > noise) out.push_back(r);
  std::stable_sort(out.begin(), out.end(),
                   [&](uint32_t x, uint32_t y) { return std::fabs(per_rank[x]) > std::fabs(per_rank[y]); });
  return out;
}

// 5 x the median absolute deviation (x 1.4826: a standard deviation for normal noise) of B - A,
// robust to the iterations that did change as long as they are fewer than half; at least
// floor_ns.
double noise(const std::vector<double>& deltas, double floor_ns) {
  const double mid = median(deltas);
  std::vector<double> dev;
  for (double d : deltas) dev.push_back(std::fabs(d - mid));
  return std::max(5 * 1.4826 * median(dev), floor_ns);
}

}  // namespace

IterationComparison compare_iterations(const Iterations& a, const Iterations& b) {
  IterationComparison out;
  out.basis_a = a.basis;
  out.basis_b = b.basis;
  out.count_a = a.count();
  out.count_b = b.count();
  out.ranks = a.ranks == b.ranks ? a.ranks : 0;
  const size_t n = std::min(a.count(), b.count());
  // The populations the noise is measured on: every rank's B - A in every iteration (the spans'
  // when the rank counts differ), of its length and of its time outside MPI; and the iterations'
  // own length in A.
  std::vector<double> deltas, app_deltas, lengths;
  for (size_t k = 0; k < n; ++k) {
    IterationRow row;
    row.k = k;
    row.a_ns = static_cast<double>(a.end(k) - a.begin(k));
    row.b_ns = static_cast<double>(b.end(k) - b.begin(k));
    for (uint32_t r = 0; r < out.ranks; ++r) {
      const double da = static_cast<double>(a.duration(k, r)), db = static_cast<double>(b.duration(k, r));
      const double ma = a.mpi_ns.empty() ? 0 : static_cast<double>(a.mpi_ns[k][r]);
      const double mb = b.mpi_ns.empty() ? 0 : static_cast<double>(b.mpi_ns[k][r]);
      row.delta_ns.push_back(db - da);
      row.app_delta_ns.push_back((db - mb) - (da - ma));
      deltas.push_back(db - da);
      app_deltas.push_back((db - mb) - (da - ma));
      lengths.push_back(da);
    }
    if (!out.ranks) deltas.push_back(row.delta()), lengths.push_back(row.a_ns);
    out.rows.push_back(std::move(row));
  }
  // Each measure's own noise: a rank's iteration length jitters with its turns on the cores
  // (tens of ms with more ranks than cores) while its time outside MPI barely does, so a delay
  // far below the first is plain in the second.
  const double floor_ns = 0.02 * median(lengths);
  out.noise_ns = noise(deltas, floor_ns);
  out.app_noise_ns = noise(app_deltas, floor_ns);
  for (IterationRow& row : out.rows) {
    row.ranks = beyond(row.delta_ns, out.noise_ns);
    row.app_ranks = beyond(row.app_delta_ns, out.app_noise_ns);
    row.parts = std::fabs(row.delta()) > out.noise_ns || !row.ranks.empty() || !row.app_ranks.empty();
    if (row.parts) out.parting.push_back(row.k);
  }
  return out;
}

}  // namespace mpe::analysis::diff
