// Writes logfiles: the header and tail (definitions, index, footer) that liblog's parallel
// finalize and `mpe merge --recover` both use, and liblog's per-rank spill files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::log {

// The FileHeader bytes.
std::string build_file_header();
// The bytes that end a logfile starting at tail_offset: definitions chunk, index, footer.
std::string build_tail(const Definitions& defs, const std::vector<IndexEntry>& index, uint64_t tail_offset);
// An index entry for a chunk placed at `offset` in the logfile.
IndexEntry index_entry(const ChunkHeader& h, uint64_t offset);
// The categories of the MPI functions, from their names (id = position).
std::vector<Category> mpi_categories(const std::vector<std::string>& names);
// Merges the ranks' user categories into defs->categories (first description of an id wins).
void merge_user_categories(Definitions* defs);

// Writes a logfile sequentially: header, then chunks, then finish() writes the tail.
class LogWriter {
 public:
  ~LogWriter();
  Status open(const std::string& path);
  // Appends one encoded chunk (ChunkHeader + payload) of events.
  Status add_events_chunk(const std::string& chunk);
  Status finish(const Definitions& defs);

 private:
  Status write(const void* p, size_t n);
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string path_;
  std::vector<IndexEntry> index_;
};

// What a per-rank spill file holds: its header, its events chunks, and its last rank meta.
struct PartFile {
  PartHeader header{};
  std::string path;
  std::vector<std::string> chunks;  // encoded events chunks, verbatim
  RankMeta meta;
  bool has_meta = false;
  Definitions base;  // from the part's definitions chunk
  bool has_base = false;
  Status tail;  // why reading stopped early (truncated/corrupt tail), or ok
};

// Reads a spill file, keeping every intact chunk before the first damaged one.
StatusOr<PartFile> read_part(const std::string& path);

struct RecoverReport {
  int ranks = 0;
  int ranks_missing = 0;
  uint64_t chunks = 0;
  uint64_t records = 0;
  std::vector<std::string> notes;  // one line per damaged or missing part
};

// Builds a logfile from spill files (one per rank, `<prefix>.mpelog.<rank>.part`). Each part
// starts with a definitions chunk (program, clock, MPI categories) that the merge reuses.
Status recover(const std::vector<std::string>& parts, const std::string& out, RecoverReport* report);

}  // namespace mpe::log
