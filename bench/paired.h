// Paired timing for the benchmarks: baseline and candidate alternate within one run, so machine
// noise hits both alike, and the figures are medians over the rounds.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace mpe::bench {

// A count from the command line (rounds, repetitions): argv[i] when given, else `fallback`. A
// value that is not a positive number stops the benchmark with one line, before it times nothing
// and takes the median of no rounds.
inline int count_arg(int argc, char** argv, int i, int fallback) {
  if (argc <= i) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  if (end == argv[i] || *end != '\0' || v < 1 || v > 1000000) {
    std::fprintf(stderr, "%s: argument %d, '%s', is not a count from 1 to 1000000\n", argv[0], i, argv[i]);
    std::exit(2);
  }
  return static_cast<int>(v);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// This thread's CPU time in ns: time spent descheduled on a busy machine does not count.
inline double cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Wall-clock time in ns, for waits that involve another process.
inline double wall_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ns per call of f over `iterations` calls, timed with `clock`.
template <typename F, typename C>
double ns_per_call(F f, int iterations, C clock) {
  const double t0 = clock();
  for (int i = 0; i < iterations; ++i) f();
  return (clock() - t0) / iterations;
}

struct Paired {
  double baseline;   // median of the baseline's per-round figures
  double candidate;  // median of the candidate's
  double added;      // median of the per-round differences
};

// Runs `rounds` rounds of baseline() and candidate(), each returning a figure, swapping their
// order every round; returns the medians.
template <typename A, typename B>
Paired paired(int rounds, A baseline, B candidate) {
  std::vector<double> base, cand, diff;
  for (int r = 0; r < rounds; ++r) {
    double b, c;
    if (r % 2 == 0) {
      b = baseline();
      c = candidate();
    } else {
      c = candidate();
      b = baseline();
    }
    base.push_back(b);
    cand.push_back(c);
    diff.push_back(c - b);
  }
  return {median(base), median(cand), median(diff)};
}

// The median of `rounds` calls of f.
template <typename F>
double median_of(int rounds, F f) {
  std::vector<double> v;
  for (int r = 0; r < rounds; ++r) v.push_back(f());
  return median(v);
}

}  // namespace mpe::bench
