// Reads the MPI_T counter samples of a logfile (v4, liblog's MPE_LOG_PVARS): the run's counters
// unified across ranks by name, each rank's samples streamed chunk by chunk, and the tracks (one
// counter on one rank and communicator, time-sorted, with its running level) that `mpe print`,
// `mpe stat`, upshot's counter tracks and the OTF2 metrics all take.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpe/log_reader.h"

namespace mpe::format {

// A counter of the run: the ranks' definitions of the same name are one.
struct Counter {
  uint32_t id = 0;  // 1, 2, ...: index + 1 in Counters::all()
  CounterDef def;   // as the first rank that defined it describes it (def.id is that rank's id)
};

// One sample, as a kCounter record says it, in run terms.
struct CounterSample {
  int64_t time = 0;      // ns since the start of the run (corrected), the entry of the call it was read at
  uint32_t counter = 0;  // run-wide id (Counters::all()), 0 when the rank's definitions lack it
  uint32_t rank = 0;
  uint32_t thread = 0;
  uint32_t comm = kUnknownComm;  // the rank's communicator index; kUnknownComm: process-wide variable
  uint64_t comm_id = 0;          // the communicator's global id (0 when process-wide or unknown)
  int32_t max_peer = -1;         // world rank of the element (peer) with the largest value, -1 when none
  double value = 0;              // as recorded: the delta (counters, timers, aggregates) or the value
  double level = 0;              // the series' value at this time: deltas summed from 0, else value
  uint64_t changes = 0;          // watermarks: the number of changes so far on this handle
};

// The run's counters, unified across ranks by name, and each rank's local ids mapped to them.
class Counters {
 public:
  explicit Counters(const LogFile& file);
  const std::vector<Counter>& all() const { return all_; }
  // The run-wide id of `rank`'s counter `local` (a kCounter record's cat); 0 when unknown.
  uint32_t id(uint32_t rank, uint32_t local) const {
    return rank < id_of_.size() && local < id_of_[rank].size() ? id_of_[rank][local] : 0;
  }
  // The counter with run-wide id `id`, or null.
  const Counter* counter(uint32_t id) const { return id >= 1 && id <= all_.size() ? &all_[id - 1] : nullptr; }
  // The run-wide id of the counter called `name`, 0 when no rank sampled it.
  uint32_t find(const std::string& name) const;

 private:
  std::vector<Counter> all_;
  std::vector<std::vector<uint32_t>> id_of_;  // [rank][local id] -> run-wide id
};

// Converts one kCounter record of `rank`'s thread into a sample (level = value for values; the
// running sum of deltas is the caller's, as counter_tracks() keeps it).
CounterSample counter_sample(const LogFile& file, const Counters& counters, uint32_t rank, uint32_t thread,
                             const Record& r);

// Calls fn(const CounterSample&) for every counter sample of `rank`, thread by thread, in logged
// order, decoding one chunk at a time (memory: one chunk). Errors: a chunk's read or decode.
template <class Fn>
Status for_each_counter_sample(const LogFile& file, const Counters& counters, uint32_t rank, Fn&& fn) {
  if (file.version() < kFirstCounterVersion) return Status();
  LogFile::ChunkScratch scratch;
  std::vector<Record> recs;
  for (size_t i = 0; i < file.index().size(); ++i) {
    const IndexEntry& e = file.index()[i];
    if (e.rank != rank) continue;
    if (Status s = file.read_chunk(i, &scratch, &recs); !s.ok()) return s;
    for (const Record& r : recs)
      if (r.kind == static_cast<uint8_t>(RecordKind::kCounter))
        fn(counter_sample(file, counters, rank, e.thread, r));
  }
  return Status();
}

// One series: a counter on one rank, on one communicator for a variable bound to communicators
// (all threads together: the variable is the process's). Samples sorted by time, each with its
// level; a series starts at 0 before its first sample.
struct CounterTrack {
  uint32_t counter = 0;  // run-wide id
  uint32_t rank = 0;
  uint32_t comm = kUnknownComm;
  uint64_t comm_id = 0;
  std::vector<CounterSample> samples;
  double max_level = 0;  // the largest level (0 when every level is below 0)
  double min_level = 0;
};

// The tracks of `rank`, ordered by counter id, then communicator index.
StatusOr<std::vector<CounterTrack>> counter_tracks(const LogFile& file, const Counters& counters,
                                                   uint32_t rank);
// The same from `rank`'s samples already read (from a pass that decoded the chunks for other
// consumers too), in logged order, thread by thread.
std::vector<CounterTrack> counter_tracks(const Counters& counters, uint32_t rank,
                                         const std::vector<CounterSample>& samples);

}  // namespace mpe::format
