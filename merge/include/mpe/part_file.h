// liblog's per-rank spill files ("<prefix>.mpelog.<rank>.part"): the header liblog writes first,
// and the reader that `mpe merge --recover` uses on what a run left behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/log_layout.h"
#include "mpe/status.h"

namespace mpe::format {

// The PartHeader bytes that open rank `rank`'s spill file.
std::string build_part_header(uint32_t rank, uint32_t world_size, double ticks_per_second);

// What a spill file holds: its header, where its intact events chunks are, and its last rank meta.
struct PartFile {
  PartHeader header{};
  std::string path;
  std::vector<ChunkSource> chunks;  // intact events chunks, source_offset in this file
  RankMeta meta;
  bool has_meta = false;
  Definitions base;  // from the part's definitions chunk
  bool has_base = false;
  Status tail;  // why reading stopped early (truncated/corrupt tail), or ok
};

// Reads a spill file, keeping every intact chunk before the first damaged one. Reads one chunk at
// a time, so memory stays at one chunk whatever the file's size.
// `interner`, when given, shares the groups of the parts read with it (a recovery reads every rank's).
StatusOr<PartFile> read_part(const std::string& path, MemberInterner* interner = nullptr);

}  // namespace mpe::format
