// The layout of a logfile, in one place: liblog's parallel finalize merge, `mpe merge --recover`
// and the sequential LogWriter all place chunks and write the tail with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::format {

// The merge planner.
//
// Invariant: a logfile is  header | every rank's events chunks, rank by rank, each rank's by
// thread then time | definitions | index | footer,  and its header is written last, so a file
// with a valid header is complete (a merge that fails leaves no file that looks like a logfile).
// Each rank's chunks are placed knowing only the bytes of the lower ranks' chunks (an exclusive
// scan in liblog, a running sum in --recover), so ranks can place and write their own chunks in
// parallel; only the tail needs every rank's index entries and definitions.
// Cost: O(chunks log chunks) per rank for the sort; the bytes move once, source to file.
// Failure modes: every write returns a Status; the caller removes the output on failure.

// Where one events chunk's bytes are before the merge: its header and its offset in the source
// (a spill file).
struct ChunkSource {
  ChunkHeader header{};
  uint64_t source_offset = 0;
  uint64_t bytes() const { return sizeof header + header.payload_size; }
};

// One rank's chunks placed in the logfile.
struct RankPlacement {
  std::vector<ChunkSource> chunks;     // in file order
  std::vector<uint64_t> file_offsets;  // where each chunk goes
  std::vector<IndexEntry> index;       // their index entries, same order
  uint64_t bytes = 0;                  // all of them together
};

// The bytes before the first events chunk.
inline constexpr uint64_t kEventsStart = sizeof(FileHeader);

// Bytes of a set of chunks, headers included.
uint64_t chunk_bytes(const std::vector<ChunkSource>& chunks);
// Orders one rank's chunks (by thread, then time) and places them after `events_before` bytes of
// the lower ranks' chunks.
RankPlacement place_rank(std::vector<ChunkSource> chunks, uint64_t events_before);
// An index entry for a chunk placed at `offset` in the logfile.
IndexEntry index_entry(const ChunkHeader& h, uint64_t offset);

// Copies a placed rank's chunks from its source file into the logfile. `buffer` is reused.
Status copy_chunks(int source_fd, const RankPlacement& placed, int out_fd, std::string* buffer);
// Ends a logfile whose events chunks total `events_total` bytes: writes the definitions, index
// and footer, trims the file to its size, and writes the header last. Returns the file size.
StatusOr<uint64_t> write_tail_and_header(int out_fd, const Definitions& defs,
                                         const std::vector<IndexEntry>& index, uint64_t events_total);

// The FileHeader bytes.
std::string build_file_header();
// The bytes that end a logfile starting at tail_offset: definitions chunks (of at most max_piece
// bytes each once decoded; tests split small definitions with a small one), index, footer.
std::string build_tail(const Definitions& defs, const std::vector<IndexEntry>& index, uint64_t tail_offset,
                       size_t max_piece = kMaxBlobChunkBytes);

// The categories of the MPI functions, from their names (id = position), each with its routine's
// class and default colour from the routine table (mpe/routine.h).
std::vector<Category> mpi_categories(const std::vector<std::string>& names);
// Merges the ranks' user categories into defs->categories (first description of an id wins).
void merge_user_categories(Definitions* defs);

}  // namespace mpe::format
