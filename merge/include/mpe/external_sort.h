// Fixed-size records handed back in sorted order however many there are: an external merge sort.
// Records are held up to a memory budget, then sorted and spilled to a run file in a temporary
// directory ($TMPDIR, else /tmp, removed at the end); the runs are merged at most kFanIn at a time.
// For analyses whose answer needs their items in an order the log does not give them in (`mpe
// umq`'s queue sweep), without memory in proportion to the log. T must be trivially copyable.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <queue>
#include <string>
#include <type_traits>
#include <vector>

#include "mpe/status.h"

namespace mpe::format {

// A temporary directory made on first use and removed with everything in it by the destructor.
class TemporaryDirectory {
 public:
  explicit TemporaryDirectory(std::string what) : what_(std::move(what)) {}
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  // A new file name in it. Errors: the directory cannot be made (io-error, saying what to do).
  StatusOr<std::string> new_file() {
    if (path_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/mpe-" + what_ + "-XXXXXX";
      if (!mkdtemp(pattern.data()))
        return Status(StatusCode::kIoError,
                      "cannot make a directory for the " + what_ + " temporary files (" + pattern +
                          "): " + std::strerror(errno) + "; set TMPDIR to a writable directory with room");
      path_ = pattern;
    }
    return path_ + "/run" + std::to_string(files_++);
  }
  // The line for a temporary file that cannot be written.
  static Status write_failed(const std::string& path) {
    return Status(StatusCode::kIoError, "cannot write the temporary file " + path + ": " +
                                            std::strerror(errno) + "; set TMPDIR to a directory with room");
  }

 private:
  std::string what_, path_;
  size_t files_ = 0;
};

template <class T, class Less>
class ExternalSort {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr size_t kFanIn = 64;
  ExternalSort(size_t memory_bytes, std::string what, Less less = Less())
      : capacity_(std::max<size_t>(memory_bytes / sizeof(T), 1)), dir_(std::move(what)), less_(less) {}

  // Errors: a run cannot be written (io-error).
  Status add(const T& item) {
    held_.push_back(item);
    return held_.size() >= capacity_ ? spill() : Status();
  }
  // Calls f(const T&) for every record in order, then forgets them all. Errors: io-error.
  template <class F>
  Status for_each_sorted(F&& f) {
    if (runs_.empty()) {
      std::sort(held_.begin(), held_.end(), less_);
      for (const T& item : held_) f(item);
      held_.clear();
      return Status();
    }
    if (!held_.empty()) MPE_RETURN_IF_ERROR(spill());
    std::vector<T>().swap(held_);  // the budget goes to the runs' read-ahead buffers now
    return merge(f);
  }
  // Forgets every record (a replay that starts again).
  void clear() {
    held_.clear();
    for (const std::string& path : runs_) std::remove(path.c_str());
    runs_.clear();
  }
  size_t runs_spilled() const { return spilled_; }

 private:
  // Records read ahead per run when merging: the budget shared among the runs, so that merging
  // holds no more than sorting did (64 runs of 64 Ki 40-byte records were 168 MB whatever the
  // budget), within [kMinBuffer, kMaxBuffer] records.
  static constexpr size_t kMinBuffer = size_t{1} << 10, kMaxBuffer = size_t{1} << 16;

  Status spill() {
    if (runs_.size() >= kFanIn) MPE_RETURN_IF_ERROR(merge_into_one_run());
    std::sort(held_.begin(), held_.end(), less_);
    auto path = dir_.new_file();
    if (!path.ok()) return path.status();
    std::FILE* f = std::fopen(path->c_str(), "wb");
    if (!f) return TemporaryDirectory::write_failed(*path);
    const bool ok = std::fwrite(held_.data(), sizeof(T), held_.size(), f) == held_.size();
    if (std::fclose(f) != 0 || !ok) return TemporaryDirectory::write_failed(*path);
    runs_.push_back(*path);
    ++spilled_;
    held_.clear();
    return Status();
  }
  Status merge_into_one_run() {
    auto path = dir_.new_file();
    if (!path.ok()) return path.status();
    std::FILE* out = std::fopen(path->c_str(), "wb");
    if (!out) return TemporaryDirectory::write_failed(*path);
    bool ok = true;
    Status s = merge([&](const T& item) { ok = ok && std::fwrite(&item, sizeof item, 1, out) == 1; });
    ok = std::fclose(out) == 0 && ok;
    if (s.ok() && !ok) s = TemporaryDirectory::write_failed(*path);
    if (s.ok()) runs_.push_back(*path);
    return s;
  }
  // Merges every run, handing each record to f; the runs are removed.
  template <class F>
  Status merge(F&& f) {
    struct Run {
      std::FILE* file = nullptr;
      std::vector<T> buffer;
      size_t at = 0;
      size_t ahead = kMaxBuffer;
      bool refill() {
        buffer.resize(ahead);
        buffer.resize(std::fread(buffer.data(), sizeof(T), ahead, file));
        at = 0;
        return !buffer.empty();
      }
    };
    std::vector<Run> runs(runs_.size());
    const size_t ahead = std::clamp(capacity_ / std::max<size_t>(1, runs.size()), kMinBuffer, kMaxBuffer);
    for (Run& run : runs) run.ahead = ahead;
    Status status;
    for (size_t i = 0; i < runs.size(); ++i) {
      runs[i].file = std::fopen(runs_[i].c_str(), "rb");
      if (!runs[i].file) status = Status(StatusCode::kIoError, "cannot read the temporary file " + runs_[i]);
    }
    auto later = [&](size_t x, size_t y) {
      return less_(runs[y].buffer[runs[y].at], runs[x].buffer[runs[x].at]);
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
    for (size_t i = 0; status.ok() && i < runs.size(); ++i)
      if (runs[i].refill()) heap.push(i);
    while (status.ok() && !heap.empty()) {
      const size_t i = heap.top();
      heap.pop();
      f(runs[i].buffer[runs[i].at]);
      if (++runs[i].at < runs[i].buffer.size() || runs[i].refill()) heap.push(i);
    }
    for (Run& r : runs)
      if (r.file) std::fclose(r.file);
    for (const std::string& path : runs_) std::remove(path.c_str());
    runs_.clear();
    return status;
  }

  size_t capacity_;
  TemporaryDirectory dir_;
  Less less_;
  std::vector<T> held_;
  std::vector<std::string> runs_;
  size_t spilled_ = 0;
};

}  // namespace mpe::format
