// Whole-buffer positioned reads and writes: the one retry loop over pread/pwrite (short
// transfers, EINTR) that the logger, the merge and the reader share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "mpe/status.h"

namespace mpe::io {

// Reads exactly n bytes at off; kTruncated at end of file, kIoError on a failed read.
Status pread_all(int fd, void* buf, size_t n, uint64_t off);
// Writes exactly n bytes at off; kIoError (with errno's text) when a write fails.
Status pwrite_all(int fd, const void* buf, size_t n, uint64_t off);
// Async-signal-safe variant of pwrite_all for signal handlers: no allocation; true when written.
bool pwrite_all_raw(int fd, const void* buf, size_t n, uint64_t off) noexcept;
// Copies n bytes from one file offset to another through a caller-owned buffer (grown as needed).
Status copy_range(int from_fd, uint64_t from_off, int to_fd, uint64_t to_off, size_t n, std::string* buffer);
// Reads a whole file.
StatusOr<std::string> read_file(const std::string& path);

// Where a reader's bytes come from: a local file, or one that `mpe serve` holds on another machine
// (upshot --connect). Reads may come from several threads at once.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Reads exactly n bytes at off; kTruncated past the end, kIoError when the read fails.
  virtual Status read(void* buf, size_t n, uint64_t off) const = 0;
  // The file's name for messages.
  virtual const std::string& name() const = 0;
};
// A local file as a ByteSource. Errors: kIoError (cannot open or stat it).
StatusOr<std::shared_ptr<const ByteSource>> open_file_source(const std::string& path);
// How write_file makes a file durable.
enum class Sync : bool { kNo = false, kYes = true };

// Who may read a file write_file makes.
enum class Access : bool {
  kShared = false,  // mode 0644 less the umask: reports, per-process files
  kPrivate = true,  // mode 0600 exactly, from its creation on: files that hold secrets (.live keys)
};

// The one checked writer of whole output files (reports, per-process files, the .live file):
// writes `text` to a temporary name in the same directory ("<path>.tmp.<pid>"), checks every
// write and the close (and fsync()s first when asked), then renames it to `path`. On any failure
// the temporary is removed and `path` is left as it was, so no half file ever carries the final
// name. Errors: kIoError, "<path>: <step> failed: <errno text>".
Status write_file(const std::string& path, std::string_view text, Sync sync = Sync::kNo,
                  Access access = Access::kShared);

}  // namespace mpe::io
