// Whole-buffer positioned reads and writes: the one retry loop over pread/pwrite (short
// transfers, EINTR) that the logger, the merge and the reader share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

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
// Writes a whole file (created or truncated, mode 0644 less the umask); kIoError naming the path
// and errno's text when it cannot be opened, written in full, or closed.
Status write_file(const std::string& path, const std::string& text);

}  // namespace mpe::io
