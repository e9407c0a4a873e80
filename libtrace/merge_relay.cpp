// The relay of a blind rank's chunks to a rank that sees the logfile (see merge_relay.h).
//
// A rank's placed chunks fill one contiguous range of the logfile, so the writer needs only where
// that range starts and how long it is (both known to every rank after the merge's allgather); the
// sender cuts its chunks, in file order, into pieces of equal size and the writer puts piece k at
// start + k * piece size. Both sides keep kRelayWindow pieces in flight (nonblocking,
// the oldest completed first), so the network, the sender's reads and the writer's writes overlap
// and memory stays at the window. Messages between two ranks are not overtaken (MPI's ordering on
// one communicator and tag), so the pieces need no numbering.
#include "merge_relay.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "mpe/file_io.h"

namespace mpe::tools::log {

namespace {

constexpr int kRelayTag = 29;

uint64_t piece_count(uint64_t bytes, uint64_t piece) { return (bytes + piece - 1) / piece; }
int piece_length(uint64_t bytes, uint64_t piece, uint64_t k) {
  return static_cast<int>(std::min(piece, bytes - k * piece));
}

// Reads the placed chunks in file order as one byte stream, piece after piece.
class ChunkStream {
 public:
  ChunkStream(int fd, const format::RankPlacement& placed) : fd_(fd), placed_(placed) {}
  // Fills out[0, n) with the next n bytes; false (out zeroed from the failure on) when a read fails.
  bool read(char* out, uint64_t n) noexcept {
    while (n > 0 && chunk_ < placed_.chunks.size()) {
      const format::ChunkSource& c = placed_.chunks[chunk_];
      const uint64_t take = std::min(n, c.bytes() - within_);
      const ssize_t got = ok_ ? ::pread(fd_, out, take, static_cast<off_t>(c.source_offset + within_)) : -1;
      if (got <= 0) {
        if (ok_) error_ = got < 0 ? errno : EIO;
        ok_ = false;
        std::memset(out, 0, take);
      }
      const uint64_t done = got > 0 ? static_cast<uint64_t>(got) : take;
      out += done;
      n -= done;
      within_ += done;
      if (within_ == c.bytes()) ++chunk_, within_ = 0;
    }
    if (n > 0) std::memset(out, 0, n);  // never happens with a consistent placement
    return ok_;
  }
  int error() const { return error_; }

 private:
  int fd_;
  const format::RankPlacement& placed_;
  size_t chunk_ = 0;
  uint64_t within_ = 0;
  bool ok_ = true;
  int error_ = 0;
};

Status io_error(const char* what, int err) noexcept {
  try {
    return Status(StatusCode::kIoError, std::string(what) + ": " + std::strerror(err));
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory();
  }
}

}  // namespace

std::vector<int> relay_writers(const std::vector<char>& sees) {
  std::vector<int> seeing, writer(sees.size());
  for (size_t r = 0; r < sees.size(); ++r)
    if (sees[r]) seeing.push_back(static_cast<int>(r));
  size_t next = 0;
  for (size_t r = 0; r < sees.size(); ++r)
    writer[r] = sees[r] ? static_cast<int>(r) : seeing[next++ % seeing.size()];
  return writer;
}

RelayBuffers::~RelayBuffers() { std::free(data); }

bool RelayBuffers::allocate() noexcept {
  if (!data) data = static_cast<char*>(std::malloc(kRelayWindow * piece_bytes));
  return data != nullptr;
}

Status relay_send(int spill_fd, const format::RankPlacement& placed, int writer, MPI_Comm comm,
                  const RelayBuffers& buffers) noexcept {
  MPI_Request reqs[kRelayWindow];
  for (auto& r : reqs) r = MPI_REQUEST_NULL;
  ChunkStream stream(spill_fd, placed);
  const uint64_t n = piece_count(placed.bytes, buffers.piece_bytes);
  for (uint64_t k = 0; k < n; ++k) {
    const int slot = static_cast<int>(k % kRelayWindow);
    PMPI_Wait(&reqs[slot], MPI_STATUS_IGNORE);
    const int len = piece_length(placed.bytes, buffers.piece_bytes, k);
    stream.read(buffers.piece(slot), static_cast<uint64_t>(len));
    PMPI_Isend(buffers.piece(slot), len, MPI_BYTE, writer, kRelayTag, comm, &reqs[slot]);
  }
  PMPI_Waitall(kRelayWindow, reqs, MPI_STATUSES_IGNORE);
  return stream.error() ? io_error("cannot read the spill file", stream.error()) : Status();
}

Status relay_receive(int from, uint64_t file_offset, uint64_t bytes, int out_fd, MPI_Comm comm,
                     const RelayBuffers& buffers) noexcept {
  MPI_Request reqs[kRelayWindow];
  for (auto& r : reqs) r = MPI_REQUEST_NULL;
  const uint64_t n = piece_count(bytes, buffers.piece_bytes);
  auto post = [&](uint64_t k) {
    const int slot = static_cast<int>(k % kRelayWindow);
    PMPI_Irecv(buffers.piece(slot), piece_length(bytes, buffers.piece_bytes, k), MPI_BYTE, from, kRelayTag,
               comm, &reqs[slot]);
  };
  for (uint64_t k = 0; k < n && k < kRelayWindow; ++k) post(k);
  int error = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const int slot = static_cast<int>(k % kRelayWindow);
    PMPI_Wait(&reqs[slot], MPI_STATUS_IGNORE);
    if (!error && !io::pwrite_all_raw(out_fd, buffers.piece(slot),
                                      static_cast<size_t>(piece_length(bytes, buffers.piece_bytes, k)),
                                      file_offset + k * buffers.piece_bytes))
      error = errno ? errno : EIO;
    if (k + kRelayWindow < n) post(k + kRelayWindow);
  }
  return error ? io_error("cannot write the relayed chunks", error) : Status();
}

}  // namespace mpe::tools::log
