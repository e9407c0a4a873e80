// The spread of a measure over ranks and its load imbalance (mpe/spread.h).
#include "mpe/spread.h"

namespace mpe {

double imbalance_pct(double max, double mean) { return max > 0 ? 100.0 * (max - mean) / max : 0.0; }

Spread spread(const std::vector<double>& v) {
  Spread s;
  for (uint32_t r = 0; r < v.size(); ++r) s.add(v[r], r);
  return s;
}

}  // namespace mpe
