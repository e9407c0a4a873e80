// Clock correction of one rank against the reference rank: offset and drift (mpe/log_defs.h).
#include "mpe/log_defs.h"

namespace mpe::format {

double ClockSync::correct(uint64_t t) const {
  const bool a = valid & 1, b = valid & 2;
  if (a && b && t_final > t_init) {
    const double slope =
        static_cast<double>(offset_final - offset_init) / static_cast<double>(t_final - t_init);
    return static_cast<double>(t) + static_cast<double>(offset_init) +
           slope * (static_cast<double>(t) - static_cast<double>(t_init));
  }
  if (a) return static_cast<double>(t) + static_cast<double>(offset_init);
  if (b) return static_cast<double>(t) + static_cast<double>(offset_final);
  return static_cast<double>(t);
}

}  // namespace mpe::format
