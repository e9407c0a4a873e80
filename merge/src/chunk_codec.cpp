// The chunk codec: records delta-encoded, byte-shuffled and zstd-compressed, blobs, checksums.
#include "mpe/chunk_codec.h"

#include <immintrin.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

namespace {

// Transposes a 16x16 byte matrix in place: afterwards x[j] byte i is the former x[i] byte j.
// Interleaving row i with row i+8 byte by byte, four times over, rotates the four row-index
// bits into the column index: 64 SSE2 unpacks in all (SSE2 is part of x86-64, so no dispatch).
inline void interleave_halves(const __m128i in[16], __m128i out[16]) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = _mm_unpacklo_epi8(in[i], in[i + 8]);
    out[2 * i + 1] = _mm_unpackhi_epi8(in[i], in[i + 8]);
  }
}
inline void transpose16(__m128i x[16]) {
  __m128i y[16];  // the rounds alternate between x and y rather than copying back
  interleave_halves(x, y);
  interleave_halves(y, x);
  interleave_halves(x, y);
  interleave_halves(y, x);
}

// The records past the last full 16 of a shuffle, one byte at a time; `prev` is the time before.
void shuffle_tail(const Record* in, uint32_t i0, uint32_t n, uint64_t prev, char* out) {
  for (; i0 < n; ++i0) {
    Record r = in[i0];
    const uint64_t t = r.time;
    r.time = t - prev;
    prev = t;
    unsigned char b[sizeof(Record)];
    std::memcpy(b, &r, sizeof r);
    for (size_t j = 0; j < sizeof(Record); ++j) out[j * n + i0] = static_cast<char>(b[j]);
  }
}

// Byte-shuffles records (byte j of every record together, streams n bytes apart) with
// delta-encoded times, 16 records at a time: each half of the 32-byte records is one 16x16
// byte transpose. ~33 instructions per record: SSE2's unpacks overwrite an operand, so each
// comes with a copy, and 32 vectors do not fit in 16 registers (the scalar version took 179).
void shuffle_sse2(const Record* in, uint32_t n, char* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m128i lo[16], hi[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      const auto* p = reinterpret_cast<const __m128i*>(&in[i0 + k]);
      // The time is the low 8 bytes; subtracting in the low lane only delta-encodes it. Wraps for
      // negative deltas (nested states), undone by the same wrap on decode.
      lo[k] = _mm_sub_epi64(_mm_loadu_si128(p), _mm_cvtsi64_si128(static_cast<long long>(prev)));
      hi[k] = _mm_loadu_si128(p + 1);
      prev = in[i0 + k].time;
    }
    transpose16(lo);
    transpose16(hi);
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j) * n + i0), lo[j]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j + 16) * n + i0), hi[j]);
    }
  }
  shuffle_tail(in, i0, n, prev, out);
}

// The same with AVX2, where a whole record is one register: its unpacks work on each 128-bit lane
// apart, so one transpose network does both halves at once, and they take three operands (no
// copies). ~17 instructions per record (callgrind, bench/encode_cost.sh).
__attribute__((target("avx2"), always_inline)) inline void interleave_halves(const __m256i in[16],
                                                                             __m256i out[16]) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    out[2 * i] = _mm256_unpacklo_epi8(in[i], in[i + 8]);
    out[2 * i + 1] = _mm256_unpackhi_epi8(in[i], in[i + 8]);
  }
}
__attribute__((target("avx2"))) void shuffle_avx2(const Record* in, uint32_t n, char* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m256i x[16], y[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      x[k] = _mm256_sub_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&in[i0 + k])),
                              _mm256_set_epi64x(0, 0, 0, static_cast<long long>(prev)));
      prev = in[i0 + k].time;
    }
    interleave_halves(x, y);
    interleave_halves(y, x);
    interleave_halves(x, y);
    interleave_halves(y, x);
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j) * n + i0),
                       _mm256_castsi256_si128(x[j]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j + 16) * n + i0),
                       _mm256_extracti128_si256(x[j], 1));
    }
  }
  shuffle_tail(in, i0, n, prev, out);
}

// The inverse of shuffle_records(): the same transposes (a transpose is its own inverse), then the
// running sum of the time deltas.
void unshuffle(const char* in, uint32_t n, Record* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m128i lo[16], hi[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      lo[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j) * n + i0));
      hi[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j + 16) * n + i0));
    }
    transpose16(lo);
    transpose16(hi);
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      auto* p = reinterpret_cast<__m128i*>(&out[i0 + k]);
      _mm_storeu_si128(p, lo[k]);
      _mm_storeu_si128(p + 1, hi[k]);
      out[i0 + k].time += prev;
      prev = out[i0 + k].time;
    }
  }
  for (; i0 < n; ++i0) {
    unsigned char b[sizeof(Record)];
    for (size_t j = 0; j < sizeof(Record); ++j) b[j] = static_cast<unsigned char>(in[j * n + i0]);
    std::memcpy(&out[i0], b, sizeof(Record));
    out[i0].time += prev;
    prev = out[i0].time;
  }
}

// Adds a run of `count` depth-0 states of category `cat` to the chunk's sums by category; `v`
// lists the categories touched.
__attribute__((noinline)) void add_run(CategoryTime* acc, std::vector<CategoryTime>* v, uint32_t cat,
                                       uint32_t count, uint64_t ticks) {
  if (count == 0) return;
  CategoryTime& ct = acc[cat];
  if (ct.count == 0) v->push_back(CategoryTime{cat, 0, 0});
  ct.count += count;
  ct.ticks += ticks;
}

void fill_range_and_summary(const Record* r, uint32_t n, ChunkHeader* h) {
  // By category, reused across chunks: only the touched entries are read back and cleared, so a
  // small chunk does not pay for zeroing all 64 Ki entries.
  static thread_local std::vector<CategoryTime> acc_of_thread(0x10000, CategoryTime{0, 0, 0});
  // Its data pointer, loaded once per chunk: in a shared library each use of a thread_local is a
  // call to __tls_get_addr, and GCC recomputes a thread_local's address (even one bound to a
  // reference) inside the loop rather than keep it: 11 instructions a record.
  CategoryTime* const acc = acc_of_thread.data();
  std::vector<CategoryTime> v;
  // Depth-0 states summed by runs of one category first, then into acc: a loop of one routine
  // then costs a compare per record rather than a table update. The run's sums are plain locals
  // (a lambda capturing them would keep them in memory), added by a call.
  uint32_t run_cat = UINT32_MAX, run_count = 0;
  uint64_t run_ticks = 0;
  // The range in locals: kept in h, it would be stored and loaded again on every record, since
  // the stores to acc might alias it.
  uint64_t first = n ? UINT64_MAX : 0, last = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const Record& x = r[i];
    first = std::min(first, x.time);
    uint64_t end = x.time;
    if (kind_of(x) == RecordKind::kState) {
      const StateRecord s = as<StateRecord>(x);
      end += s.duration;
      if (s.depth == 0) {
        if (s.cat != run_cat) {
          add_run(acc, &v, run_cat, run_count, run_ticks);
          run_cat = s.cat;
          run_count = 0;
          run_ticks = 0;
        }
        ++run_count;
        run_ticks += s.duration;
      }
    }
    last = std::max(last, end);
  }
  add_run(acc, &v, run_cat, run_count, run_ticks);
  h->t_first = first;
  h->t_last = last;
  for (auto& ct : v) {
    ct.count = acc[ct.cat].count;
    ct.ticks = acc[ct.cat].ticks;
    acc[ct.cat] = CategoryTime{0, 0, 0};
  }
  std::sort(v.begin(), v.end(), [](const CategoryTime& a, const CategoryTime& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.cat < b.cat;
  });
  for (int s = 0; s < kSummarySlots; ++s) {
    if (s < static_cast<int>(v.size()))
      h->summary[s] = v[s];
    else
      h->summary[s] = CategoryTime{0xFFFFFFFFu, 0, 0};
  }
}

}  // namespace

void shuffle_records(const Record* in, uint32_t n, char* out, bool widest) {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (widest && has_avx2)
    shuffle_avx2(in, n, out);
  else
    shuffle_sse2(in, n, out);
}

void seal(ChunkHeader* h) { h->header_hash = hash64(h, offsetof(ChunkHeader, header_hash)); }
void seal(FileHeader* h) { h->header_hash = hash64(h, offsetof(FileHeader, header_hash)); }
void seal(Footer* f) { f->footer_hash = hash64(f, offsetof(Footer, footer_hash)); }
void seal(PartHeader* h) { h->header_hash = hash64(h, offsetof(PartHeader, header_hash)); }

namespace {

// How many of the n bytes at p differ from `mode`, stopping once the count passes `limit`: a
// varying plane costs a few blocks, not a pass. 64 bytes at a time, one test for the common
// case of all equal (~0.15 instructions per byte); the bytes that differ counted in 16s.
uint32_t count_other(const char* p, uint32_t n, char mode, uint32_t limit) {
  const __m128i m = _mm_set1_epi8(mode);
  auto same16 = [&](uint32_t i) {
    return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), m);
  };
  uint32_t count = 0, i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i all = _mm_and_si128(_mm_and_si128(same16(i), same16(i + 16)),
                                      _mm_and_si128(same16(i + 32), same16(i + 48)));
    if (_mm_movemask_epi8(all) == 0xFFFF) continue;
    for (uint32_t k = i; k < i + 64; k += 16)  // popcount is a libgcc call without -mpopcnt
      count +=
          16 - static_cast<uint32_t>(__builtin_popcount(static_cast<uint32_t>(_mm_movemask_epi8(same16(k)))));
    if (count > limit) return count;
  }
  for (; i < n; ++i) count += p[i] != mode;
  return count;
}

// The exceptions of a sparse plane: for each byte that is not `mode`, in order, the distance from
// the previous one (the first from index -1; LEB128) and the byte. Returns the end of what it wrote.
char* write_exceptions(const char* p, uint32_t n, char mode, char* out) {
  int64_t prev = -1;
  auto put = [&](uint32_t i) {
    uint64_t gap = static_cast<uint64_t>(static_cast<int64_t>(i) - prev);
    for (; gap >= 0x80; gap >>= 7) *out++ = static_cast<char>(0x80 | (gap & 0x7F));
    *out++ = static_cast<char>(gap);
    *out++ = p[i];
    prev = i;
  };
  const __m128i m = _mm_set1_epi8(mode);
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    auto other = ~static_cast<uint32_t>(_mm_movemask_epi8(
                     _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), m))) &
                 0xFFFFu;
    for (; other; other &= other - 1) put(i + static_cast<uint32_t>(__builtin_ctz(other)));
  }
  for (; i < n; ++i)
    if (p[i] != mode) put(i);
  return out;
}

// A plane's common value, guessed: the most frequent of five bytes spread over it. Not simply the
// first: the first record's often differs (its time is no delta). The positions are not powers of
// two apart: MPI's progress engine makes every 64th call or so slower, and such positions would
// hit those outliers every time.
inline char common_value(const char* plane, uint32_t n) {
  char sample[5];
  for (uint32_t k = 0; k < 5; ++k) sample[k] = plane[(k * (n / 5) + 7 * k + 1) % n];
  char best = sample[0];
  int best_votes = 0;
  for (char candidate : sample) {
    int votes = 0;
    for (char other : sample) votes += other == candidate;
    if (votes > best_votes) best = candidate, best_votes = votes;
  }
  return best;
}

// A plane is sparse when at most 1 byte in 32 differs from its common value: its exceptions then
// take at most 6 bytes each, so the plane shrinks at least 5-fold before the compressor sees it.
constexpr uint32_t sparse_limit(uint32_t n) { return n / 32; }

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

// Splits the 32 byte planes of a shuffled buffer three ways (docs/FORMAT.md, "Events payload"):
// - constant (all n bytes equal: most planes of a run of similar records): one byte in `head`;
// - sparse (all but a few bytes equal): that byte and the count in `head`, the exceptions after
//   the varying planes in `body`;
// - varying: copied whole to `body`, back to back.
// Why: zstd then sees only the bytes that carry information, typically 2 planes of 32 for a loop
// of cheap calls. Before sparse planes, one preemption in a chunk made a whole high-byte plane of
// times "varying", and the first record's absolute time four of them, all given to zstd.
// Returns the body's size; `body` holds raw_size bytes, which the exceptions never exceed.
size_t split_planes(const char* shuffled, uint32_t n, std::string* head, char* body) {
  uint32_t constant_mask = 0, sparse_mask = 0;
  std::string constants, sparse;  // the plane header's values; for sparse ones, and the counts
  size_t size = 0;
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    const char* plane = shuffled + static_cast<size_t>(j) * n;
    const char value = common_value(plane, n);
    const uint32_t other = count_other(plane, n, value, sparse_limit(n));
    if (other == 0) {
      constant_mask |= 1u << j;
      constants.push_back(value);
    } else if (other <= sparse_limit(n)) {
      sparse_mask |= 1u << j;
      sparse.push_back(value);
      sparse.append(reinterpret_cast<const char*>(&other), sizeof other);
    } else {
      std::memcpy(body + size, plane, n);
      size += n;
    }
  }
  const size_t varying = size;
  for (uint32_t j = 0, k = 0; j < kRecordPlanes; ++j)
    if (sparse_mask & (1u << j)) {
      const char* plane = shuffled + static_cast<size_t>(j) * n;
      size = static_cast<size_t>(write_exceptions(plane, n, sparse[5 * k++], body + size) - body);
    }
  const auto exception_bytes = static_cast<uint32_t>(size - varying);
  auto put32 = [&](uint32_t v) { head->append(reinterpret_cast<const char*>(&v), sizeof v); };
  head->clear();
  put32(constant_mask);
  head->append(constants);
  put32(sparse_mask);
  head->append(sparse);
  put32(exception_bytes);
  return size;
}

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
  fill_range_and_summary(records, n, &h);
  // Reused per thread: fresh multi-MiB buffers per chunk cost page faults.
  static thread_local Scratch raw, varying, packed;
  static thread_local std::string head;
  char* const shuffled = raw.get(h.raw_size);
  shuffle_records(records, n, shuffled);
  const char* body = shuffled;
  size_t body_size = h.raw_size;
  head.clear();
  if (h.flags & kChunkPlanes) {
    char* const planes = varying.get(h.raw_size);
    body_size = split_planes(shuffled, n, &head, planes);
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

// Writes a sparse plane's `count` exceptions (write_exceptions) from [*at, end) into `plane`.
Status apply_exceptions(const char** at, const char* end, uint32_t count, uint32_t n, char* plane) {
  auto bad = [] { return Status::corrupt("chunk plane exceptions do not fit their plane"); };
  const char* p = *at;
  int64_t prev = -1;
  for (uint32_t k = 0; k < count; ++k) {
    uint64_t gap = 0;
    for (int shift = 0;; shift += 7) {
      if (p == end || shift > 35) return bad();
      const auto byte = static_cast<unsigned char>(*p++);
      gap |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if (!(byte & 0x80)) break;
    }
    if (gap == 0 || gap > n || prev + static_cast<int64_t>(gap) >= static_cast<int64_t>(n) || p == end)
      return bad();
    prev += static_cast<int64_t>(gap);
    plane[prev] = *p++;
  }
  *at = p;
  return Status();
}

// The inverse of split_planes(): the full shuffled buffer. Constant planes are filled in; with
// kChunkSparse, sparse ones are filled with their value and then their exceptions.
Status join_planes(const ChunkHeader& h, const char* payload, std::string* out) {
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
  out->resize(h.raw_size);
  const char* next = body.data();
  const char* exceptions = body.data() + static_cast<size_t>(nvarying) * n;
  const char* const end = body.data() + body.size();
  int nsparse_seen = 0;
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    char* plane = out->data() + static_cast<size_t>(j) * n;
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

Status payload_bytes(const ChunkHeader& h, const char* payload, std::string* out) {
  if (hash64(payload, h.payload_size) != h.payload_hash)
    return Status::corrupt("chunk payload checksum mismatch");
  if (h.flags & kChunkPlanes) return join_planes(h, payload, out);
  return inflate(h, payload, h.payload_size, h.raw_size, out);
}
}  // namespace

Status decode_events(const ChunkHeader& h, const char* payload, std::vector<Record>* out,
                     std::string* scratch) {
  std::string local;
  std::string& raw = scratch ? *scratch : local;
  MPE_RETURN_IF_ERROR(payload_bytes(h, payload, &raw));
  out->resize(h.nrecords);
  if (h.flags & kChunkShuffled)
    unshuffle(raw.data(), h.nrecords, out->data());
  else if (h.nrecords)
    std::memcpy(out->data(), raw.data(), raw.size());
  return Status();
}

Status decode_blob(const ChunkHeader& h, const char* payload, std::string* out) {
  return payload_bytes(h, payload, out);
}

}  // namespace mpe::format
