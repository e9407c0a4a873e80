// Text lines written out in the order of their keys, however many: an external merge sort (of
// variable-length lines; mpe/external_sort.h sorts fixed-size records the same way). Lines
// are held up to a memory budget, then sorted and spilled to a run file in a temporary directory
// ($TMPDIR, else /tmp); at the end the runs are merged. So `mpe print` of a billion records needs
// the budget and the merge's buffers, not memory in proportion to the log (as GNU sort -S does).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "mpe/external_sort.h"
#include "mpe/status.h"

namespace mpe::cli {

// Where a line goes: by time, then timeline, then `part` (what kind of line, in the order the
// in-memory print listed them), then a, b and seq (the part's own order), then the text itself,
// so that the order is total and the same however the lines were split into runs.
struct LineKey {
  int64_t t = 0;
  uint32_t timeline = 0;
  uint32_t part = 0;
  int64_t a = 0, b = 0;
  uint64_t seq = 0;
  auto tied() const { return std::tie(t, timeline, part, a, b, seq); }
};

class SortedLines {
 public:
  // memory_bytes: the lines (text and keys) held before a run is spilled.
  explicit SortedLines(size_t memory_bytes);
  SortedLines(const SortedLines&) = delete;
  SortedLines& operator=(const SortedLines&) = delete;

  // Errors: a run cannot be written (io-error, naming the directory and what to do).
  Status add(const LineKey& key, std::string_view text);
  // Writes every line, in key order, each followed by a newline. Errors: io-error.
  Status write_to(std::FILE* out);
  // Runs spilled so far (for tests and the docs' figures).
  size_t runs_spilled() const { return spilled_; }

 private:
  struct Held {
    LineKey key;
    uint32_t offset, length;  // in text_
  };
  Status spill();
  Status merge_runs(std::FILE* out, bool to_run);

  size_t memory_bytes_;
  std::vector<Held> held_;
  std::string text_;
  format::TemporaryDirectory dir_;  // made at the first spill
  std::vector<std::string> runs_;   // run files not merged yet
  size_t spilled_ = 0;
};

}  // namespace mpe::cli
