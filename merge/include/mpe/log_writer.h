// Writes a logfile sequentially, one events chunk after another (the synthesizer, OTF2 input and
// the tests), laid out by the merge planner (log_layout.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/log_layout.h"
#include "mpe/status.h"

namespace mpe::format {

// A writer that fails, or is destroyed before finish() succeeded, removes its file: no file without
// its header is left behind. Chunks must be added rank by rank (and each rank's by thread, then time), as the
// index promises.
class LogWriter {
 public:
  ~LogWriter();
  Status open(const std::string& path);
  // Appends one encoded chunk (ChunkHeader + payload) of events.
  Status add_events_chunk(const std::string& chunk);
  // Writes the tail and then the header; the file is complete once this returns ok.
  Status finish(const Definitions& defs);

 private:
  void remove_output();

  int fd_ = -1;
  bool regular_ = false;
  uint64_t events_bytes_ = 0;
  std::string path_;
  std::vector<IndexEntry> index_;
};

}  // namespace mpe::format
