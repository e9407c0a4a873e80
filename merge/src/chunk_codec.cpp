// The chunk codec: records delta-encoded, byte-shuffled and zstd-compressed, blobs, checksums.
#include "mpe/chunk_codec.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "byte_planes.h"
#include "mpe/byte_codec.h"
#include "mpe/records.h"

namespace mpe::format {

uint64_t hash64(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xC2B2AE3D27D4EB4Full);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t k;
    std::memcpy(&k, p + i, 8);
    k *= 0x87C37B91114253D5ull;
    k = (k << 31) | (k >> 33);
    h ^= k * 0x4CF5AD432745937Full;
    h = ((h << 27) | (h >> 37)) * 5 + 0x52DCE729;
  }
  uint64_t tail = 0;
  if (n > i) std::memcpy(&tail, p + i, n - i);  // not with a null p and n == 0
  h ^= tail * 0x87C37B91114253D5ull;
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

void seal(ChunkHeader* h) { h->header_hash = hash64(h, offsetof(ChunkHeader, header_hash)); }
void seal(FileHeader* h) { h->header_hash = hash64(h, offsetof(FileHeader, header_hash)); }
void seal(Footer* f) { f->footer_hash = hash64(f, offsetof(Footer, footer_hash)); }
void seal(PartHeader* h) { h->header_hash = hash64(h, offsetof(PartHeader, header_hash)); }

namespace {

// A thread's scratch buffer, grown without filling: std::string::resize writes every new byte,
// which for a 4 MiB chunk's three buffers is 12 MiB of memset on each thread's first chunk.
class Scratch {
 public:
  char* get(size_t n) {
    if (n > size_) {
      data_.reset(new char[n]);
      size_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

}  // namespace

void encode_events(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, int zstd_level,
                   std::string* out) {
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(ChunkKind::kEvents);
  h.flags = kChunkZstd | kChunkShuffled | (n ? kChunkPlanes | kChunkSparse : 0);
  h.rank = rank;
  h.thread = thread;
  h.nrecords = n;
  h.raw_size = n * static_cast<uint32_t>(sizeof(Record));
  summarize_events(records, n, &h);
  // Reused per thread: fresh multi-MiB buffers per chunk cost page faults.
  static thread_local Scratch raw, varying, packed;
  static thread_local std::string head;
  const size_t stride = plane_stride(n);
  char* const shuffled = raw.get(kRecordPlanes * stride);
  shuffle_records(records, n, shuffled, stride);
  // Without records there are no planes: the body is empty.
  const char* body = shuffled;
  size_t body_size = 0;
  head.clear();
  if (h.flags & kChunkPlanes) {
    char* const planes = varying.get(h.raw_size);
    body_size = split_planes(shuffled, n, stride, &head, planes);
    body = planes;
  }
  const size_t bound = ZSTD_compressBound(body_size);
  char* const compressed = packed.get(bound);
  static thread_local ZSTD_CCtx* cctx = ZSTD_createCCtx();
  size_t csize = cctx ? ZSTD_compressCCtx(cctx, compressed, bound, body, body_size, zstd_level)
                      : ZSTD_compress(compressed, bound, body, body_size, zstd_level);
  const bool stored = ZSTD_isError(csize);  // cannot happen with a bound-sized buffer
  if (stored) {
    h.flags &= static_cast<uint16_t>(~kChunkZstd);
    csize = body_size;
  }
  const size_t base = out->size();
  out->reserve(base + sizeof(ChunkHeader) + head.size() + csize);  // one allocation, no copy
  out->resize(base + sizeof(ChunkHeader));
  out->append(head);
  out->append(stored ? body : compressed, csize);
  h.payload_size = static_cast<uint32_t>(out->size() - base - sizeof(ChunkHeader));
  h.payload_hash = hash64(out->data() + base + sizeof(ChunkHeader), h.payload_size);
  seal(&h);
  std::memcpy(out->data() + base, &h, sizeof h);
}

size_t encode_events_raw(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, char* out,
                         size_t cap) {
  const size_t need = sizeof(ChunkHeader) + static_cast<size_t>(n) * sizeof(Record);
  if (need > cap) return 0;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(ChunkKind::kEvents);
  h.flags = 0;
  h.rank = rank;
  h.thread = thread;
  h.nrecords = n;
  h.raw_size = h.payload_size = n * static_cast<uint32_t>(sizeof(Record));
  h.t_first = n ? UINT64_MAX : 0;
  for (uint32_t i = 0; i < n; ++i) {
    h.t_first = std::min(h.t_first, records[i].time);
    const uint64_t end =
        records[i].time +
        (kind_of(records[i]) == RecordKind::kState ? as<StateRecord>(records[i]).duration : 0);
    h.t_last = std::max(h.t_last, end);
  }
  for (auto& s : h.summary) s = CategoryTime{0xFFFFFFFFu, 0, 0};
  std::memcpy(out + sizeof h, records, h.payload_size);
  h.payload_hash = hash64(out + sizeof h, h.payload_size);
  seal(&h);
  std::memcpy(out, &h, sizeof h);
  return need;
}

bool encode_blob(ChunkKind kind, uint32_t rank, const std::string& blob, std::string* out) {
  if (blob.size() > kMaxBlobChunkBytes) return false;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(kind);
  h.flags = kChunkZstd;
  h.rank = rank;
  h.raw_size = static_cast<uint32_t>(blob.size());
  for (auto& s : h.summary) s = CategoryTime{0xFFFFFFFFu, 0, 0};
  std::string c(ZSTD_compressBound(blob.size()), '\0');
  const size_t csize = ZSTD_compress(c.data(), c.size(), blob.data(), blob.size(), 3);
  if (ZSTD_isError(csize)) {
    h.flags = 0;
    c = blob;
  } else {
    c.resize(csize);
  }
  h.payload_size = static_cast<uint32_t>(c.size());
  h.payload_hash = hash64(c.data(), c.size());
  seal(&h);
  out->append(reinterpret_cast<const char*>(&h), sizeof h);
  out->append(c);
  return true;
}

Status check_chunk_header(const ChunkHeader& h, uint64_t avail, uint64_t offset) {
  const std::string at = " at offset " + std::to_string(offset);
  if (avail < sizeof(ChunkHeader)) return Status(StatusCode::kTruncated, "chunk header cut short" + at);
  if (h.magic != kChunkMagic) return Status::corrupt("no chunk" + at);
  if (h.header_hash != hash64(&h, offsetof(ChunkHeader, header_hash)))
    return Status::corrupt("chunk header checksum mismatch" + at);
  if (h.kind < 1 || h.kind > 3) return Status::corrupt("unknown chunk kind" + at);
  if (h.kind == static_cast<uint16_t>(ChunkKind::kEvents) &&
      static_cast<uint64_t>(h.nrecords) * sizeof(Record) != h.raw_size)
    return Status::corrupt("chunk record count and size disagree" + at);
  if (!(h.flags & (kChunkZstd | kChunkPlanes)) && h.payload_size != h.raw_size)
    return Status::corrupt("stored chunk has a bad size" + at);
  if ((h.flags & kChunkPlanes) &&
      (h.kind != static_cast<uint16_t>(ChunkKind::kEvents) || !(h.flags & kChunkShuffled) || h.nrecords == 0))
    return Status::corrupt("chunk flags disagree" + at);
  if ((h.flags & ~kChunkKnownFlags) || ((h.flags & kChunkSparse) && !(h.flags & kChunkPlanes)))
    return Status::corrupt("chunk flags disagree" + at);
  if (h.raw_size > (1u << 30)) return Status::corrupt("chunk larger than 1 GiB" + at);
  if (avail - sizeof(ChunkHeader) < h.payload_size)
    return Status(StatusCode::kTruncated, "chunk payload cut short" + at);
  return Status();
}

namespace {
// Decompresses `size` bytes at `payload` into exactly `expect` bytes at `out`.
Status inflate(const ChunkHeader& h, const char* payload, size_t size, size_t expect, std::string* out) {
  if (h.flags & kChunkZstd) {
    out->resize(expect);
    // One context per thread, kept: ZSTD_decompress would allocate and free one per chunk.
    struct Context {  // freed when its thread ends
      ZSTD_DCtx* dctx = ZSTD_createDCtx();
      ~Context() { ZSTD_freeDCtx(dctx); }
    };
    static thread_local Context context;
    if (!context.dctx) return Status::out_of_memory();
    const size_t got = ZSTD_decompressDCtx(context.dctx, out->data(), out->size(), payload, size);
    // A context that cannot get its window is out of memory, not a damaged log.
    if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
      return Status::out_of_memory();
    if (ZSTD_isError(got) || got != expect) return Status::corrupt("chunk payload does not decompress");
  } else {
    if (size != expect) return Status::corrupt("stored chunk has a bad size");
    out->assign(payload, size);
  }
  return Status();
}

// The inverse of split_planes(): the full shuffled buffer, its planes `stride` bytes apart.
// Constant planes are filled in; with kChunkSparse, sparse ones are filled with their value and
// then their exceptions.
Status join_planes(const ChunkHeader& h, const char* payload, size_t stride, std::string* out) {
  const uint32_t n = h.nrecords;
  auto cut = [] { return Status::corrupt("chunk plane header cut short"); };
  ByteReader head(payload, h.payload_size);
  uint32_t constant_mask = 0, sparse_mask = 0, exception_bytes = 0;
  const char* constants = nullptr;
  struct {
    uint8_t value;
    uint32_t count;
  } sparse[kRecordPlanes];
  if (!head.u32(&constant_mask) ||
      !head.view(static_cast<size_t>(__builtin_popcount(constant_mask)), &constants))
    return cut();
  if (h.flags & kChunkSparse) {
    if (!head.u32(&sparse_mask)) return cut();
    for (int k = 0; k < __builtin_popcount(sparse_mask); ++k)
      if (!head.u8(&sparse[k].value) || !head.u32(&sparse[k].count)) return cut();
    if (!head.u32(&exception_bytes)) return cut();
    if (sparse_mask & constant_mask)
      return Status::corrupt("chunk plane header says a plane is constant and sparse");
  }
  const size_t used = h.payload_size - head.left();
  const auto nvarying =
      kRecordPlanes - static_cast<uint32_t>(__builtin_popcount(constant_mask | sparse_mask));
  std::string body;
  MPE_RETURN_IF_ERROR(inflate(h, payload + used, h.payload_size - used,
                              static_cast<size_t>(nvarying) * n + exception_bytes, &body));
  out->resize(kRecordPlanes * stride);
  const char* next = body.data();
  const char* exceptions = body.data() + static_cast<size_t>(nvarying) * n;
  const char* const end = body.data() + body.size();
  int nsparse_seen = 0;
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    char* plane = out->data() + static_cast<size_t>(j) * stride;
    if (constant_mask & (1u << j)) {
      std::memset(plane, *constants++, n);
    } else if (sparse_mask & (1u << j)) {
      const auto& s = sparse[nsparse_seen++];
      std::memset(plane, static_cast<char>(s.value), n);
      MPE_RETURN_IF_ERROR(apply_exceptions(&exceptions, end, s.count, n, plane));
    } else {
      std::memcpy(plane, next, n);
      next += n;
    }
  }
  if (exceptions != end) return Status::corrupt("chunk plane exceptions do not fit their plane");
  return Status();
}

// The payload's bytes; an events chunk's planes `stride` bytes apart (a payload without planes
// has them n apart, as the format lays them out).
Status payload_bytes(const ChunkHeader& h, const char* payload, size_t stride, std::string* out) {
  if (hash64(payload, h.payload_size) != h.payload_hash)
    return Status::corrupt("chunk payload checksum mismatch");
  if (h.flags & kChunkPlanes) return join_planes(h, payload, stride, out);
  return inflate(h, payload, h.payload_size, h.raw_size, out);
}
}  // namespace

Status decode_events(const ChunkHeader& h, const char* payload, std::vector<Record>* out,
                     std::string* scratch) {
  std::string local;
  std::string& raw = scratch ? *scratch : local;
  // Planes joined at the codec's stride: the unshuffle's 32 streams of loads then fall in
  // different cache sets (plane_stride). Unshuffled bytes are copied as they are, n apart
  // (check_chunk_header rejects planes without the shuffle; this does not rely on it).
  const bool padded = (h.flags & kChunkPlanes) && (h.flags & kChunkShuffled);
  const size_t stride = padded ? plane_stride(h.nrecords) : h.nrecords;
  MPE_RETURN_IF_ERROR(payload_bytes(h, payload, stride, &raw));
  out->resize(h.nrecords);
  if (h.flags & kChunkShuffled)
    unshuffle_records(raw.data(), h.nrecords, stride, out->data());
  else if (h.nrecords)
    std::memcpy(out->data(), raw.data(), raw.size());
  return Status();
}

Status decode_blob(const ChunkHeader& h, const char* payload, std::string* out) {
  return payload_bytes(h, payload, h.nrecords, out);
}

}  // namespace mpe::format
