// What libmpetime's text report (profile.cpp) and its JSON form (profile_json.cpp) share inside
// the library: the routines aggregated over ranks and the numbers' rounding. Not installed.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mpe/spread.h"
#include "profile.h"

namespace mpe::tools::time::detail {

// One routine across the ranks.
struct Aggregate {
  std::string name;
  uint64_t calls = 0, incl = 0, sent = 0, recv = 0;
  Spread excl;   // exclusive time per rank (ranks that never called count as 0)
  Spread bytes;  // bytes sent + received per rank
};
// Every routine of the run, in name order.
std::vector<Aggregate> aggregate(const std::vector<RankProfile>& ps);

// The run's hosts, each once, in order.
std::vector<std::string> hosts_of(const std::vector<RankProfile>& ps);

// The line that called MPI: "halo.c:42 (exchange)"; "?" for the unknown call site.
std::string innermost_text(const std::vector<Frame>& frames);

inline double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// x rounded to `decimals` places, as the reports have always printed it.
inline double rounded(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(x * scale) / scale;
}

// A sum of whole nanoseconds or bytes that a Spread holds as a double, back as the integer the
// reports print (exact below 2^53).
inline uint64_t whole(double x) { return static_cast<uint64_t>(std::llround(x)); }

}  // namespace mpe::tools::time::detail
