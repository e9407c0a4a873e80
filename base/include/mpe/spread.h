// How a measure spreads over ranks: min (its rank), mean, max (its rank), and the load imbalance.
// The one such type and the one imbalance of the code base, so that libmpetime's report, `mpe
// report`, `mpe diff` and the per-rank tables of the other commands cannot disagree on them.
#pragma once

#include <cstdint>
#include <vector>

namespace mpe {

// Load imbalance in percent: how far the slowest rank (max) is above the mean, as a share of the
// max; 0 when balanced, and 0 when max is not above 0 (nothing measured).
double imbalance_pct(double max, double mean);

// Values added one rank at a time. Ties keep the rank added first, for the min and the max alike.
struct Spread {
  double min = 0, max = 0, sum = 0;
  uint32_t min_rank = 0, max_rank = 0;
  uint32_t n = 0;  // values added

  void add(double v, uint32_t rank) {
    if (n == 0 || v < min) min = v, min_rank = rank;
    if (n == 0 || v > max) max = v, max_rank = rank;
    sum += v;
    ++n;
  }
  double mean() const { return n ? sum / n : 0.0; }
  double imbalance() const { return imbalance_pct(max, mean()); }
};

// The spread of per-rank values: v[r] is rank r's.
Spread spread(const std::vector<double>& v);

}  // namespace mpe
