// Positioned whole-buffer I/O with the retry rules every caller needs.
#include "mpe/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace mpe::io {

Status pread_all(int fd, void* buf, size_t n, uint64_t off) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(off));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kIoError, std::string("read failed: ") + std::strerror(errno));
    }
    if (got == 0) return Status(StatusCode::kTruncated, "unexpected end of file");
    p += got;
    n -= static_cast<size_t>(got);
    off += static_cast<uint64_t>(got);
  }
  return Status();
}

bool pwrite_all_raw(int fd, const void* buf, size_t n, uint64_t off) noexcept {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

Status pwrite_all(int fd, const void* buf, size_t n, uint64_t off) {
  if (pwrite_all_raw(fd, buf, n, off)) return Status();
  return Status(StatusCode::kIoError, std::string("write failed: ") + std::strerror(errno));
}

Status copy_range(int from_fd, uint64_t from_off, int to_fd, uint64_t to_off, size_t n, std::string* buffer) {
  if (buffer->size() < n) buffer->resize(n);
  MPE_RETURN_IF_ERROR(pread_all(from_fd, buffer->data(), n, from_off));
  return pwrite_all(to_fd, buffer->data(), n, to_off);
}

StatusOr<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, path + ": cannot open: " + std::strerror(errno));
  std::string all;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return Status(StatusCode::kIoError, path + ": read failed: " + std::strerror(e));
    }
    if (n == 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return all;
}

Status write_file(const std::string& path, std::string_view text, Sync sync, Access access) {
  auto failed = [&](const char* step, int err) {
    return Status(StatusCode::kIoError, path + ": " + step + " failed: " + std::strerror(err));
  };
  // Unique per process, and in the target's directory so that the rename cannot cross file systems.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const bool secret = access == Access::kPrivate;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, secret ? 0600 : 0644);
  if (fd < 0) return failed("create", errno);
  const char* step = nullptr;
  int err = 0;
  // Created 0600 so no other user could open it in between; fchmod makes it exactly that
  // whatever the umask (a left-over temporary of the same name kept its old mode).
  if (secret && ::fchmod(fd, 0600) != 0) {
    step = "chmod";
    err = errno;
  } else if (!pwrite_all_raw(fd, text.data(), text.size(), 0)) {
    step = "write";
    err = errno;
  } else if (sync == Sync::kYes && ::fsync(fd) != 0) {
    step = "fsync";
    err = errno;
  }
  // close() reports the errors of writes that were deferred (NFS, quotas): checked even after a
  // failure above, which it must not hide.
  if (::close(fd) != 0 && !step) {
    step = "close";
    err = errno;
  }
  if (!step && ::rename(tmp.c_str(), path.c_str()) != 0) {
    step = "rename";
    err = errno;
  }
  if (!step) return Status();
  ::unlink(tmp.c_str());
  return failed(step, err);
}

}  // namespace mpe::io

namespace mpe::io {

namespace {

// A local file, read with pread: safe from many threads at once.
class FileSource : public ByteSource {
 public:
  FileSource(int fd, uint64_t size, std::string name) : fd_(fd), size_(size), name_(std::move(name)) {}
  ~FileSource() override { ::close(fd_); }
  uint64_t size() const override { return size_; }
  Status read(void* buf, size_t n, uint64_t off) const override { return pread_all(fd_, buf, n, off); }
  const std::string& name() const override { return name_; }

 private:
  int fd_;
  uint64_t size_;
  std::string name_;
};

}  // namespace

StatusOr<std::shared_ptr<const ByteSource>> open_file_source(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const Status s(StatusCode::kIoError, "cannot stat " + path + ": " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  return std::shared_ptr<const ByteSource>(
      std::make_shared<FileSource>(fd, static_cast<uint64_t>(st.st_size), path));
}

}  // namespace mpe::io
