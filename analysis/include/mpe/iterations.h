// Cuts a run's timeline into iterations (time steps), so that two runs can be compared step by
// step (`mpe diff --iterations`, upshot's compare view) instead of only from their start.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpe/chunk_pass.h"
#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace mpe::analysis {

// A run cut into iterations: iteration k on rank r spans [start_ns[k][r], end_ns[k][r]), ns since
// the start of the run (LogFile::to_ns). Every rank has every iteration.
struct Iterations {
  // How they were cut: "MPI_Pcontrol markers", "user state \"step\"", "MPI_Allreduce on
  // MPI_COMM_WORLD at halo2d.c:150 (main)", ...; "" when no repeating phase was found (count() 0).
  std::string basis;
  uint32_t ranks = 0;
  std::vector<std::vector<int64_t>> start_ns, end_ns;  // [iteration][rank]
  // Time in MPI (outermost calls of the rank's main thread) inside each iteration, [iteration][rank]:
  // what a rank waited or communicated; the rest of the iteration is the application's.
  std::vector<std::vector<int64_t>> mpi_ns;

  size_t count() const { return start_ns.size(); }
  // The earliest start of iteration k over the ranks.
  int64_t begin(size_t k) const;
  // The latest end of iteration k over the ranks.
  int64_t end(size_t k) const;
  // Iteration k's length on rank r.
  int64_t duration(size_t k, uint32_t r) const { return end_ns[k][r] - start_ns[k][r]; }
};

// Finds a run's iterations in two streamed passes over the chunks of each rank's main thread (its
// lowest thread index): memory follows the call sites and one rank's outermost MPI calls (all
// ranks' when the log's chunks interleave ranks), not the log. The cut, by the first of these the
// run has:
//   1. MPI_Pcontrol markers, when every rank has at least 2 of a level other than 0: each opens an
//      iteration, which ends at the rank's next marker (or its last record);
//   2. a user state that every rank has the same number of times (at least 2), the one that covers
//      the most time: each instance is an iteration;
//   3. a collective on a communicator of all ranks, at one call site, called the same number of
//      times (at least 3) on every rank: the most regular period wins (the finest among those whose
//      intervals vary by less than half their mean); without one, any MPI call site that repeats
//      in the same way (a halo exchange's MPI_Waitall).
//      An iteration starts at the first call of the repeating sequence (the earliest call site
//      with the same count and period) and ends where the next one starts; the last one ends at
//      the first call after the loop;
//   4. one Pcontrol region per rank (around the timed part of a run), when nothing repeats inside.
// Errors: the reader's.
StatusOr<Iterations> find_iterations(const format::LogFile& file);

// find_iterations() as a consumer of a chunk pass that the caller runs for other consumers too
// (mpe/chunk_pass.h; upshot's compare view feeds it from the pass that builds its model), so that
// the log is decoded once: feed it every chunk in index order, then finish() it once. The same cut,
// from one pass instead of two: instead of reading each rank again, it keeps the outermost states
// and the markers of every rank's main thread (24 bytes each) until finish(). Errors: corrupt.
class IterationCollector {
 public:
  explicit IterationCollector(const format::LogFile& file);
  ~IterationCollector();  // not copyable: it owns the kept states (impl_)
  // What the pass calls with each chunk; the collector must outlive the pass.
  format::ChunkConsumer consumer();
  // After the pass: the cut.
  StatusOr<Iterations> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mpe::analysis
