// The chunk codec shared by liblog, the merge and the reader: records delta-encoded,
// byte-shuffled and zstd-compressed into chunks, opaque blobs, and the headers' checksums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::format {

// Encodes records into one chunk (header + payload) appended to out. Costs ~2-4 ns per record
// (delta, shuffle, zstd level 1). Also fills the header's time range and summary.
void encode_events(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, int zstd_level,
                   std::string* out);
// How far apart in memory the codec keeps the 32 byte planes of n records while it shuffles them:
// n rounded up to an odd number of 64-byte cache lines. Why: at a stride of n = 131072 (a 4 MiB
// buffer) every plane's bytes for the same records fall in the same cache set, and the shuffle's
// 32 interleaved streams of stores then thrashed L1 and L2 (8 ways each): the shuffle took more
// time than zstd, about 6% of a logged ping-pong's run. An odd number of lines puts the 32 planes
// in 32 different sets of both.
constexpr size_t plane_stride(uint32_t n) { return ((static_cast<size_t>(n) + 63) / 64 | 1) * 64; }
// The byte shuffle of an events payload (docs/FORMAT.md): n records to 32 streams of n bytes at
// out, `stride` bytes apart (n for the format's layout, plane_stride(n) in the codec), times
// delta-encoded. With the widest vectors this CPU has (AVX2, else SSE2); `widest` false takes SSE2
// anyway, so that tests compare the two.
void shuffle_records(const Record* in, uint32_t n, char* out, size_t stride, bool widest = true);
// Fills an events chunk header's time range and summary from its n records. With AVX2 when this
// CPU has it; `widest` false scans one record at a time anyway, so that tests compare the two.
void summarize_events(const Record* records, uint32_t n, ChunkHeader* h, bool widest = true);
// A blob chunk's payload limit: the run's definitions are split into chunks of at most this many
// bytes (v5), so that no size field (32 bits in a chunk header) limits the number of ranks.
inline constexpr size_t kMaxBlobChunkBytes = size_t{1} << 30;
// Encodes a chunk holding an opaque blob (rank meta, definitions), zstd-compressed. The blob must
// be at most kMaxBlobChunkBytes; false (and nothing appended) otherwise.
bool encode_blob(ChunkKind kind, uint32_t rank, const std::string& blob, std::string* out);
// Encodes records without compression; async-signal-safe: writes into out (capacity cap bytes),
// returns the bytes used or 0 when it does not fit.
size_t encode_events_raw(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, char* out,
                         size_t cap);

// Checks a chunk header (magic, header hash, sizes). `avail` is the bytes present from the
// header on, for a truncation error.
Status check_chunk_header(const ChunkHeader& h, uint64_t avail, uint64_t offset);
// Verifies a payload and decodes it: records for events chunks, bytes for blob chunks.
// `scratch`, when given, holds the decompressed bytes: a caller decoding many chunks passes the
// same string each time and allocates once.
Status decode_events(const ChunkHeader& h, const char* payload, std::vector<Record>* out,
                     std::string* scratch = nullptr);
Status decode_blob(const ChunkHeader& h, const char* payload, std::string* out);

// Seals a header: computes header_hash.
void seal(ChunkHeader* h);
void seal(FileHeader* h);
void seal(Footer* f);
void seal(PartHeader* h);

}  // namespace mpe::format
