// An events chunk's header summary: its time range and its depth-0 states' time by category
// (docs/FORMAT.md, "Chunk header"), which `mpe stat`, cut and the viewer's overview read without
// decoding the chunk. liblog makes one per spilled buffer, so this runs once per logged call.
#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/records.h"

namespace mpe::format {

namespace {

// The range and the current run of one category, as locals: kept in the header, each would be
// stored and loaded again on every record, since the stores to the table might alias it.
struct Scan {
  uint64_t first, last;
  uint32_t run_cat = UINT32_MAX, run_count = 0;
  uint64_t run_ticks = 0;
};

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

// Starts a run of category `cat` unless one is open: a loop of one routine then costs a compare
// per record rather than a table update.
inline void open_run(Scan& s, CategoryTime* acc, std::vector<CategoryTime>* v, uint32_t cat) {
  if (cat == s.run_cat) return;
  add_run(acc, v, s.run_cat, s.run_count, s.run_ticks);
  s.run_cat = cat;
  s.run_count = 0;
  s.run_ticks = 0;
}

// Records [i, end) one at a time.
inline void scan_records(Scan& s, CategoryTime* acc, std::vector<CategoryTime>* v, const Record* r,
                         uint32_t i, uint32_t end) {
  for (; i < end; ++i) {
    const Record& x = r[i];
    s.first = std::min(s.first, x.time);
    uint64_t stop = x.time;
    if (kind_of(x) == RecordKind::kState) {
      const StateRecord st = as<StateRecord>(x);
      stop += st.duration;
      if (st.depth == 0) {
        open_run(s, acc, v, st.cat);
        ++s.run_count;
        s.run_ticks += st.duration;
      }
    }
    s.last = std::max(s.last, stop);
  }
}

// Blocks of 16 records that are depth-0 states of one routine (a loop of one call, the commonest
// block of a large log: its bytes 8-15, the kind, flags, category and depth, all equal) in AVX2
// registers: their duration sum, earliest start and latest end, ~12 instructions a record against
// ~19 one at a time (callgrind, bench/encode_cost.sh). Other blocks are scanned one record at a
// time. Returns where it stopped. Times are compared as signed after flipping the top bit, which
// orders them as unsigned.
__attribute__((target("avx2"))) uint32_t scan_blocks_avx2(Scan& scan, CategoryTime* acc,
                                                          std::vector<CategoryTime>* v, const Record* r,
                                                          uint32_t n) {
  Scan s = scan;  // a local, in registers: add_run's stores through acc might alias the caller's
  const __m256i flip = _mm256_set1_epi64x(LLONG_MIN);
  __m256i lo = _mm256_set1_epi64x(LLONG_MAX), hi = flip;  // UINT64_MAX and 0, flipped
  uint32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const auto* p = reinterpret_cast<const __m256i*>(r + i);
    const StateRecord head = as<StateRecord>(r[i]);
    // The first and last records' bytes 8-15 compared first: a block of mixed records (a message
    // loop's Irecv, Send, Wait, their messages and requests) then costs no vector work.
    if (kind_of(r[i]) != RecordKind::kState || r[i].flags != 0 || head.depth != 0 ||
        std::memcmp(reinterpret_cast<const char*>(&r[i]) + 8, reinterpret_cast<const char*>(&r[i + 15]) + 8,
                    8) != 0) {
      scan_records(s, acc, v, r, i, i + 16);
      continue;
    }
    const __m256i key = _mm256_loadu_si256(p);
    __m256i same = _mm256_set1_epi64x(-1), sum = _mm256_setzero_si256(), block_lo = lo, block_hi = hi;
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) {
      const __m256i x = _mm256_loadu_si256(p + k);
      same = _mm256_and_si256(same, _mm256_cmpeq_epi64(x, key));
      sum = _mm256_add_epi64(sum, x);
      const __m256i start = _mm256_xor_si256(x, flip);
      block_lo = _mm256_blendv_epi8(block_lo, start, _mm256_cmpgt_epi64(block_lo, start));
      // Lane 0: the start plus the duration (lane 3).
      const __m256i end = _mm256_xor_si256(_mm256_add_epi64(x, _mm256_permute4x64_epi64(x, 3)), flip);
      block_hi = _mm256_blendv_epi8(block_hi, end, _mm256_cmpgt_epi64(end, block_hi));
    }
    if ((_mm256_movemask_epi8(same) & 0xFF00) != 0xFF00) {  // lane 1 differs somewhere
      scan_records(s, acc, v, r, i, i + 16);
      continue;
    }
    lo = block_lo;
    hi = block_hi;
    open_run(s, acc, v, head.cat);
    s.run_count += 16;
    s.run_ticks += static_cast<uint64_t>(_mm256_extract_epi64(sum, 3));
  }
  s.first = std::min(s.first, static_cast<uint64_t>(_mm256_extract_epi64(lo, 0)) ^ (uint64_t{1} << 63));
  if (_mm256_extract_epi64(hi, 0) != LLONG_MIN)  // a block was taken whole
    s.last = std::max(s.last, static_cast<uint64_t>(_mm256_extract_epi64(hi, 0)) ^ (uint64_t{1} << 63));
  scan = s;
  return i;
}

}  // namespace

void summarize_events(const Record* r, uint32_t n, ChunkHeader* h, bool widest) {
  // By category, reused across chunks: only the touched entries are read back and cleared, so a
  // small chunk does not pay for zeroing all 64 Ki entries.
  static thread_local std::vector<CategoryTime> acc_of_thread(0x10000, CategoryTime{0, 0, 0});
  // Its data pointer, loaded once per chunk: in a shared library each use of a thread_local is a
  // call to __tls_get_addr, and GCC recomputes a thread_local's address (even one bound to a
  // reference) inside the loop rather than keep it: 11 instructions a record.
  CategoryTime* const acc = acc_of_thread.data();
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  std::vector<CategoryTime> v;
  Scan start{n ? UINT64_MAX : 0, 0};
  const uint32_t done = widest && has_avx2 ? scan_blocks_avx2(start, acc, &v, r, n) : 0;
  Scan s = start;  // not the one whose address scan_blocks_avx2 took, for the same reason
  scan_records(s, acc, &v, r, done, n);
  add_run(acc, &v, s.run_cat, s.run_count, s.run_ticks);
  h->t_first = s.first;
  h->t_last = s.last;
  for (auto& ct : v) {
    ct.count = acc[ct.cat].count;
    ct.ticks = acc[ct.cat].ticks;
    acc[ct.cat] = CategoryTime{0, 0, 0};
  }
  std::sort(v.begin(), v.end(), [](const CategoryTime& a, const CategoryTime& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.cat < b.cat;
  });
  for (int k = 0; k < kSummarySlots; ++k)
    h->summary[k] = k < static_cast<int>(v.size()) ? v[k] : CategoryTime{0xFFFFFFFFu, 0, 0};
}

}  // namespace mpe::format
