// The codec's plane stride (plane_stride): the shuffle at a padded stride writes the same planes
// as at the format's stride n. Chunks of whole pages of records, where the padding matters most,
// round-trip in test_log_format.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/records.h"

using namespace mpe::format;

namespace {

std::vector<Record> random_records(uint32_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Record> out;
  uint64_t t = 1000;
  for (uint32_t i = 0; i < n; ++i) {
    t += rng() % 700;
    const auto kind = static_cast<RecordKind>(1 + rng() % 8);
    out.push_back(make_record(kind, t, static_cast<uint16_t>(rng() % 9), static_cast<int32_t>(rng() % 3),
                              static_cast<int32_t>(rng() % 64), static_cast<uint32_t>(rng() % 5),
                              rng() % 4000));
  }
  return out;
}

TEST(PlaneStride, IsAnOddNumberOfCacheLinesNoShorterThanThePlane) {
  for (uint32_t n : {0u, 1u, 63u, 64u, 65u, 128u, 4095u, 4096u, 131072u, 1000000u}) {
    const size_t s = plane_stride(n);
    EXPECT_GE(s, n) << n;
    EXPECT_EQ(s % 64, 0u) << n;
    EXPECT_EQ((s / 64) % 2, 1u) << n;  // so 32 planes fall in 32 different cache sets
    EXPECT_LT(s, static_cast<size_t>(n) + 129) << n;
  }
}

TEST(PlaneStride, ShuffleWritesTheSamePlanesAtEitherStride) {
  for (uint32_t n : {17u, 4096u, 5000u}) {
    const std::vector<Record> in = random_records(n, n);
    const size_t stride = plane_stride(n);
    std::string packed(kRecordPlanes * static_cast<size_t>(n), '\0');
    std::string padded(kRecordPlanes * stride, '\0');
    for (bool widest : {true, false}) {
      shuffle_records(in.data(), n, packed.data(), n, widest);
      shuffle_records(in.data(), n, padded.data(), stride, widest);
      for (uint32_t j = 0; j < kRecordPlanes; ++j)
        ASSERT_EQ(0, std::memcmp(packed.data() + j * static_cast<size_t>(n), padded.data() + j * stride, n))
            << "n=" << n << " plane " << j << " widest=" << widest;
    }
  }
}

}  // namespace
