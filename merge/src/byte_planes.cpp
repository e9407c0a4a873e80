// The byte planes of an events chunk (docs/FORMAT.md, "Events payload"): the shuffle that makes
// them and its inverse, and the split of the planes into constant, sparse and varying ones. The
// chunk codec (chunk_codec.cpp) compresses and checks what these make.
#include "byte_planes.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "mpe/chunk_codec.h"

namespace mpe::format {

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
void shuffle_tail(const Record* in, uint32_t i0, uint32_t n, uint64_t prev, char* out, size_t stride) {
  for (; i0 < n; ++i0) {
    Record r = in[i0];
    const uint64_t t = r.time;
    r.time = t - prev;
    prev = t;
    unsigned char b[sizeof(Record)];
    std::memcpy(b, &r, sizeof r);
    for (size_t j = 0; j < sizeof(Record); ++j) out[j * stride + i0] = static_cast<char>(b[j]);
  }
}

// Byte-shuffles records (byte j of every record together, streams n bytes apart) with
// delta-encoded times, 16 records at a time: each half of the 32-byte records is one 16x16
// byte transpose. ~33 instructions per record: SSE2's unpacks overwrite an operand, so each
// comes with a copy, and 32 vectors do not fit in 16 registers (the scalar version took 179).
void shuffle_sse2(const Record* in, uint32_t n, char* out, size_t stride) {
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
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j) * stride + i0), lo[j]);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j + 16) * stride + i0), hi[j]);
    }
  }
  shuffle_tail(in, i0, n, prev, out, stride);
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
__attribute__((target("avx2"))) void shuffle_avx2(const Record* in, uint32_t n, char* out, size_t stride) {
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
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j) * stride + i0),
                       _mm256_castsi256_si128(x[j]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + static_cast<size_t>(j + 16) * stride + i0),
                       _mm256_extracti128_si256(x[j], 1));
    }
  }
  shuffle_tail(in, i0, n, prev, out, stride);
}

}  // namespace

void unshuffle_records(const char* in, uint32_t n, size_t stride, Record* out) {
  uint64_t prev = 0;
  uint32_t i0 = 0;
  for (; i0 + 16 <= n; i0 += 16) {
    __m128i lo[16], hi[16];
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) {
      lo[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j) * stride + i0));
      hi[j] =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + static_cast<size_t>(j + 16) * stride + i0));
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
    for (size_t j = 0; j < sizeof(Record); ++j) b[j] = static_cast<unsigned char>(in[j * stride + i0]);
    std::memcpy(&out[i0], b, sizeof(Record));
    out[i0].time += prev;
    prev = out[i0].time;
  }
}

void shuffle_records(const Record* in, uint32_t n, char* out, size_t stride, bool widest) {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (widest && has_avx2)
    shuffle_avx2(in, n, out, stride);
  else
    shuffle_sse2(in, n, out, stride);
}

namespace {

// How many of the n bytes at p differ from `mode`, stopping soon after the count passes `limit`:
// a varying plane costs 4 KiB, not a pass. Each byte lane of a vector counts the equal bytes that
// fall in it (a compare and a subtract per 16 bytes, ~0.17 instructions per byte), summed every
// 63 blocks of 64 bytes, before a lane can pass 255. Counting bits of compare masks instead took
// a popcount per 16 bytes, a libgcc call without -mpopcnt (20 instructions a record in all).
uint32_t count_other(const char* p, uint32_t n, char mode, uint32_t limit) {
  const __m128i m = _mm_set1_epi8(mode);
  uint32_t same = 0, i = 0;
  while (n - i >= 64) {
    const uint32_t blocks = std::min<uint32_t>((n - i) / 64, 63);
    __m128i lanes = _mm_setzero_si128();
    for (uint32_t b = 0; b < blocks; ++b, i += 64)
#pragma GCC unroll 4
      for (uint32_t k = 0; k < 64; k += 16)
        lanes = _mm_sub_epi8(lanes,
                             _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + k)), m));
    const __m128i sums = _mm_sad_epu8(lanes, _mm_setzero_si128());
    same += static_cast<uint32_t>(_mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4));
    if (i - same > limit) return i - same;
  }
  for (; i < n; ++i) same += p[i] == mode;
  return n - same;
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
  // 64 bytes at a time, one test for the common case of none (~0.16 instructions per byte):
  // most blocks of a sparse plane hold no exception.
  const __m128i m = _mm_set1_epi8(mode);
  auto same16 = [&](uint32_t i) {
    return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), m);
  };
  uint32_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i s0 = same16(i), s1 = same16(i + 16), s2 = same16(i + 32), s3 = same16(i + 48);
    if (_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(s0, s1), _mm_and_si128(s2, s3))) == 0xFFFF) continue;
    auto bits = [](__m128i v) { return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(v))); };
    uint64_t other = ~(bits(s0) | bits(s1) << 16 | bits(s2) << 32 | bits(s3) << 48);
    for (; other; other &= other - 1) put(i + static_cast<uint32_t>(__builtin_ctzll(other)));
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

}  // namespace

// Splits the 32 byte planes of a shuffled buffer three ways (docs/FORMAT.md, "Events payload"):
// - constant (all n bytes equal: most planes of a run of similar records): one byte in `head`;
// - sparse (all but a few bytes equal): that byte and the count in `head`, the exceptions after
//   the varying planes in `body`;
// - varying: copied whole to `body`, back to back.
// Why: zstd then sees only the bytes that carry information, typically 2 planes of 32 for a loop
// of cheap calls. Before sparse planes, one preemption in a chunk made a whole high-byte plane of
// times "varying", and the first record's absolute time four of them, all given to zstd.
// Returns the body's size; `body` holds raw_size bytes, which the exceptions never exceed.
size_t split_planes(const char* shuffled, uint32_t n, size_t stride, std::string* head, char* body) {
  uint32_t constant_mask = 0, sparse_mask = 0;
  std::string constants, sparse;  // the plane header's parts: values; for sparse ones, value and count
  char sparse_value[kRecordPlanes];
  size_t size = 0;
  for (uint32_t j = 0; j < kRecordPlanes; ++j) {
    const char* plane = shuffled + static_cast<size_t>(j) * stride;
    const char value = common_value(plane, n);
    const uint32_t other = count_other(plane, n, value, sparse_limit(n));
    if (other == 0) {
      constant_mask |= 1u << j;
      constants.push_back(value);
    } else if (other <= sparse_limit(n)) {
      sparse_mask |= 1u << j;
      sparse_value[j] = value;
      sparse.push_back(value);
      sparse.append(reinterpret_cast<const char*>(&other), sizeof other);
    } else {
      std::memcpy(body + size, plane, n);
      size += n;
    }
  }
  const size_t varying = size;
  for (uint32_t j = 0; j < kRecordPlanes; ++j)
    if (sparse_mask & (1u << j)) {
      const char* plane = shuffled + static_cast<size_t>(j) * stride;
      size = static_cast<size_t>(write_exceptions(plane, n, sparse_value[j], body + size) - body);
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

}  // namespace mpe::format
