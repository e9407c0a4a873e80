// An events chunk header's time range and summary (summarize_events): the AVX2 scan of uniform
// blocks and the record-at-a-time scan both give what a plain count of the records gives, on
// random mixes of runs of one routine, nested and other records, and times past 2^63.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/records.h"

using namespace mpe::format;

namespace {

// Runs of depth-0 states of one category (the AVX2 path's blocks), broken by messages, nested
// states, user events and jumps of the clock, some past 2^63 where a signed compare would err.
std::vector<Record> random_records(uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Record> out;
  uint64_t t = (seed % 3 == 0) ? (uint64_t{1} << 63) - 5000 : 1000;
  while (out.size() < n) {
    const uint16_t cat = static_cast<uint16_t>(rng() % 5);
    for (uint64_t run = 1 + rng() % 60; run > 0 && out.size() < n; --run) {
      const uint64_t duration = 10 + rng() % 300;
      out.push_back(make_record(RecordKind::kState, t, cat, 0, 9, 0, duration));
      t += duration + rng() % 50;
    }
    if (out.size() >= n) break;
    switch (rng() % 5) {
      case 0:
        out.push_back(make_record(RecordKind::kSend, t, cat, 1, 2, 0, 1u << 20));
        break;
      case 1:  // a nested state, logged after its parent began: its time runs backwards
        out.push_back(make_record(RecordKind::kState, t - 400, 7, 1, 3, 0, 100));
        break;
      case 2:
        out.push_back(make_record(RecordKind::kUserEvent, t, 3, 0, 0, 0, ~uint64_t{0}));
        break;
      case 3:
        t += uint64_t{1} << (rng() % 40);
        break;
      default:
        break;
    }
  }
  return out;
}

// The header a plain count makes.
ChunkHeader expected_header(const std::vector<Record>& in) {
  ChunkHeader h{};
  h.t_first = in.empty() ? 0 : UINT64_MAX;
  std::map<uint32_t, CategoryTime> by_cat;
  for (const Record& r : in) {
    h.t_first = std::min(h.t_first, r.time);
    const bool state = kind_of(r) == RecordKind::kState;
    h.t_last = std::max(h.t_last, r.time + (state ? r.c : 0));
    if (state && r.a == 0) {
      CategoryTime& ct = by_cat[r.cat];
      ct.cat = r.cat;
      ++ct.count;
      ct.ticks += r.c;
    }
  }
  std::vector<CategoryTime> v;
  for (const auto& [cat, ct] : by_cat) v.push_back(ct);
  std::sort(v.begin(), v.end(), [](const CategoryTime& a, const CategoryTime& b) {
    return a.ticks != b.ticks ? a.ticks > b.ticks : a.cat < b.cat;
  });
  for (int k = 0; k < kSummarySlots; ++k)
    h.summary[k] = k < static_cast<int>(v.size()) ? v[k] : CategoryTime{0xFFFFFFFFu, 0, 0};
  return h;
}

void expect_same(const ChunkHeader& want, const ChunkHeader& got, const char* how) {
  EXPECT_EQ(want.t_first, got.t_first) << how;
  EXPECT_EQ(want.t_last, got.t_last) << how;
  for (int k = 0; k < kSummarySlots; ++k) {
    EXPECT_EQ(want.summary[k].cat, got.summary[k].cat) << how << " slot " << k;
    EXPECT_EQ(want.summary[k].count, got.summary[k].count) << how << " slot " << k;
    EXPECT_EQ(want.summary[k].ticks, got.summary[k].ticks) << how << " slot " << k;
  }
}

}  // namespace

TEST(ChunkSummary, BothScansEqualAPlainCount) {
  for (uint32_t n : {0u, 1u, 15u, 16u, 17u, 100u, 1000u, 20000u}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const std::vector<Record> in = random_records(n, seed * 1000 + n);
      const ChunkHeader want = expected_header(in);
      for (bool widest : {true, false}) {
        ChunkHeader got{};
        summarize_events(in.data(), n, &got, widest);
        expect_same(want, got, widest ? "widest" : "one at a time");
      }
    }
  }
}

// A loop of one routine is whole blocks of the fast path: its count and time are exact.
TEST(ChunkSummary, OneRoutinesLoopIsCountedExactly) {
  std::vector<Record> in;
  uint64_t t = 5, ticks = 0;
  for (uint32_t i = 0; i < 4099; ++i) {
    const uint64_t d = 20 + i % 7;
    in.push_back(make_record(RecordKind::kState, t, 42, 0, 11, 0, d));
    ticks += d;
    t += d + 3;
  }
  ChunkHeader h{};
  summarize_events(in.data(), static_cast<uint32_t>(in.size()), &h);
  EXPECT_EQ(h.t_first, 5u);
  EXPECT_EQ(h.t_last, in.back().time + in.back().c);
  EXPECT_EQ(h.summary[0].cat, 42u);
  EXPECT_EQ(h.summary[0].count, 4099u);
  EXPECT_EQ(h.summary[0].ticks, ticks);
  EXPECT_EQ(h.summary[1].cat, 0xFFFFFFFFu);
}
