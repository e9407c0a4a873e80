// The sequential logfile writer, on the merge planner.
#include "mpe/log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mpe/file_io.h"

namespace mpe::format {

// A writer destroyed before finish() succeeded removes its file: a file without its header must
// not stay behind looking like an output (the header is written last, by finish()).
LogWriter::~LogWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    remove_output();
  }
}

// Only a regular file is removed: the output may be a device (/dev/null, /dev/full in a test).
void LogWriter::remove_output() {
  if (regular_) ::unlink(path_.c_str());
}

Status LogWriter::open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status(StatusCode::kIoError, path + ": cannot create: " + std::strerror(errno));
  struct stat st {};
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  return Status();
}

Status LogWriter::add_events_chunk(const std::string& chunk) {
  ChunkHeader h;
  if (fd_ < 0) return Status(StatusCode::kInvalidArgument, "the writer is not open");
  if (chunk.size() < sizeof h) return Status(StatusCode::kInvalidArgument, "chunk too small");
  std::memcpy(&h, chunk.data(), sizeof h);
  MPE_RETURN_IF_ERROR(check_chunk_header(h, chunk.size(), 0));
  const uint64_t at = kEventsStart + events_bytes_;
  const Status s = io::pwrite_all(fd_, chunk.data(), sizeof h + h.payload_size, at);
  if (!s.ok()) return Status(s.code(), path_ + ": " + s.message());
  index_.push_back(index_entry(h, at));
  events_bytes_ += sizeof h + h.payload_size;
  return Status();
}

Status LogWriter::finish(const Definitions& defs) {
  if (fd_ < 0) return Status(StatusCode::kInvalidArgument, "the writer is not open");
  const StatusOr<uint64_t> size = write_tail_and_header(fd_, defs, index_, events_bytes_);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (!size.ok() || rc != 0) remove_output();
  if (!size.ok()) return Status(size.status().code(), path_ + ": " + size.status().message());
  if (rc != 0) return Status(StatusCode::kIoError, path_ + ": close failed: " + std::strerror(errno));
  return Status();
}

}  // namespace mpe::format
