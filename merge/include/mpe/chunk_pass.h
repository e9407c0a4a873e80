// One pass over a logfile's events chunks: each chunk is read and decoded once, and handed, in
// index order, to every consumer that wants the records (the viewer's model, the analyses'
// endpoints, the counter tracks, `mpe stat`'s tallies), instead of each of them decoding the
// whole file again.
//
// Design. Decoding (read, checksum, zstd, unshuffle) is most of the cost of reading a log, and
// chunks are independent, so `decoders` threads decode ahead, into a window of reused buffers (a
// decoder keeps its LogFile::ChunkScratch, a slot keeps its record vector: after the first lap
// nothing is allocated or page-faulted per chunk). The calling thread hands the chunks out in
// index order, which is (rank, thread, time): a timeline's chunks come consecutively, oldest
// first, as interpret_records() and the analyses' pass 1 need them.
//
// A replay that must see the whole run in time order (the streaming summary, mpe/log_summary.h)
// passes its own order (ChunkPassOptions::order); each timeline's chunks are still oldest first.
//
// Cost: the decode of every chunk once (~10-20 ns per record on one core), spread over the
// decoders; memory: `window` chunks of records. Failure modes: a damaged chunk stops the pass
// with the reader's error after the chunks before it were consumed; keep_going() returning false
// stops it with kCancelled.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::format {

class LogFile;

// One decoded events chunk, as a pass hands it out; valid during the consumer's call only.
struct Chunk {
  size_t index;             // its position in LogFile::index()
  const IndexEntry& entry;  // its rank, thread and time range
  const Record* records;    // in logged order
  size_t count;
};

// Takes one chunk; a pass calls it for every chunk, in index order, on the pass's thread.
using ChunkConsumer = std::function<void(const Chunk&)>;

struct ChunkPassOptions {
  // Threads decoding ahead of the consumers; 0: one per core.
  int decoders = 1;
  // Asked after each chunk with the chunks consumed so far: false stops the pass with kCancelled.
  std::function<bool(size_t consumed)> keep_going;
  // Says what stopped in the kCancelled message ("<what> stopped").
  std::string what = "read";
  // The chunks to visit, in this order (indices into LogFile::index(); a subset is allowed); null:
  // every chunk in index order. A time-ordered replay passes chunks_by_start().
  const std::vector<size_t>* order = nullptr;
};

// Every chunk's index, ordered by its start: the corrected time (LogFile::to_ns) of its earliest
// record, or of an earlier chunk of its timeline when that is later (nested calls written after
// their inner calls can make a chunk start before the one logged ahead of it); ties by index. The
// order of a streaming replay: each timeline's chunks come in logged order, interleaved by time.
// A replay that needs "no record still to come is before W" takes W as the least true start of
// the chunks not yet handed out (starts_still_to_come).
std::vector<size_t> chunks_by_start(const LogFile& file);
// For each position k of `order`, the least corrected start of the chunks order[k..]; INT64_MAX at
// order.size() (one more entry than order).
std::vector<int64_t> starts_still_to_come(const LogFile& file, const std::vector<size_t>& order);

// Decodes every events chunk of `file` once and hands each to all `consumers`, in their order.
// Errors: a chunk's (corrupt, truncated, io-error), kCancelled.
Status run_chunk_pass(const LogFile& file, const std::vector<ChunkConsumer>& consumers,
                      const ChunkPassOptions& options = {});

}  // namespace mpe::format
