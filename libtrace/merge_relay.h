// The finalize merge's fallback for ranks that cannot see the logfile rank 0 created (a node-local
// working directory or MPE_LOG_DIR): they stream their chunks to a rank that can, which writes them
// at their planned offsets. Only those ranks pay for it; the others write their own part as usual.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "mpe/log_layout.h"
#include "mpe/status.h"
#include "mpe/tool.h"

namespace mpe::tools::log {

// Bytes of one relayed message (MPE_LOG_RELAY_PIECE, rank 0's value), and how many are in flight
// per stream: a relaying rank holds at most kRelayWindow pieces (1 MiB by default) whatever its
// chunks' sizes.
inline constexpr uint64_t kRelayPieceBytes = uint64_t{256}
                                             << 10;  // faster than 1 MiB (bench/merge_fallback.sh)
inline constexpr int kRelayWindow = 4;

// Which rank writes each rank's chunks: itself when it sees the file, else one of the ranks that
// do, the blind ranks spread over them in turn. `sees` has one flag per rank; rank 0 must see.
std::vector<int> relay_writers(const std::vector<char>& sees) MPE_HIDDEN;

// The window's buffers, allocated before the exchange so that a failed allocation is agreed on
// (collective::all_ok) instead of leaving a peer waiting.
struct RelayBuffers {
  char* data = nullptr;
  uint64_t piece_bytes = kRelayPieceBytes;
  RelayBuffers() = default;
  RelayBuffers(const RelayBuffers&) = delete;
  RelayBuffers& operator=(const RelayBuffers&) = delete;
  ~RelayBuffers();
  // False when memory ran out.
  bool allocate() noexcept;
  char* piece(int slot) const { return data + static_cast<uint64_t>(slot) * piece_bytes; }
};

// Streams a placed rank's chunks (one contiguous range of the logfile) from its spill file to
// `writer`, in pieces of buffers.piece_bytes. Sends every piece even when a read fails (the piece
// then carries zeros and the error is returned), so the writer is never left waiting.
Status relay_send(int spill_fd, const format::RankPlacement& placed, int writer, MPI_Comm comm,
                  const RelayBuffers& buffers) noexcept MPE_HIDDEN;
// Receives `bytes` relayed by rank `from` and writes them at `file_offset` of out_fd. Receives
// every piece even when a write fails, and returns the first error.
Status relay_receive(int from, uint64_t file_offset, uint64_t bytes, int out_fd, MPI_Comm comm,
                     const RelayBuffers& buffers) noexcept MPE_HIDDEN;

}  // namespace mpe::tools::log
