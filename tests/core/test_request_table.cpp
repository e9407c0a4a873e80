// Unit tests of mpe::RequestTable (core/include/mpe/request_table.h), the one table of outstanding
// requests: checked against std::unordered_map as the known truth. Needs mpi.h only: request
// handles are made up, so MPI is never initialized.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

#include "mpe/request_table.h"

namespace {

struct Value {
  int kind;
  uint64_t bytes;
};

// A request handle with the bits of n (MPICH's are ints, Open MPI's pointers): never
// MPI_REQUEST_NULL, and distinct for distinct n.
MPI_Request handle(uint64_t n) {
  MPI_Request r;
  std::memset(&r, 0, sizeof r);
  uint64_t bits = n + 1;
  uint64_t null_bits = 0;
  const MPI_Request null = MPI_REQUEST_NULL;
  std::memcpy(&null_bits, &null, sizeof null < sizeof null_bits ? sizeof null : sizeof null_bits);
  if (bits >= null_bits) ++bits;  // step over the null handle's bits
  std::memcpy(&r, &bits, sizeof r < sizeof bits ? sizeof r : sizeof bits);
  return r;
}

TEST(RequestTable, EmptyFindsNothing) {
  mpe::RequestTable<Value> t;
  EXPECT_EQ(t.find(handle(1)), nullptr);
  EXPECT_EQ(t.size(), 0u);
  t.erase(handle(1));  // no-op on an empty table
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, InsertLookupFree) {
  mpe::RequestTable<Value> t;
  ASSERT_TRUE(t.put(handle(1), {1, 100}));
  ASSERT_TRUE(t.put(handle(2), {2, 200}));
  ASSERT_NE(t.find(handle(1)), nullptr);
  EXPECT_EQ(t.find(handle(1))->bytes, 100u);
  EXPECT_EQ(t.find(handle(2))->kind, 2);
  EXPECT_EQ(t.find(handle(3)), nullptr);
  EXPECT_EQ(t.size(), 2u);
  t.erase(handle(1));
  EXPECT_EQ(t.find(handle(1)), nullptr);
  EXPECT_NE(t.find(handle(2)), nullptr);
  EXPECT_EQ(t.size(), 1u);
  t.erase(handle(1));  // erasing twice is harmless
  EXPECT_EQ(t.size(), 1u);
}

TEST(RequestTable, NullRequestIsIgnored) {
  mpe::RequestTable<Value> t;
  EXPECT_TRUE(t.put(MPI_REQUEST_NULL, {9, 9}));
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.find(MPI_REQUEST_NULL), nullptr);
}

TEST(RequestTable, PutOnAPresentHandleReplacesAndReportsTheOldValue) {
  mpe::RequestTable<Value> t;
  ASSERT_TRUE(t.put(handle(5), {1, 10}));
  Value old{};
  bool had = false;
  ASSERT_TRUE(t.put(handle(5), {2, 20}, &old, &had));
  EXPECT_TRUE(had);
  EXPECT_EQ(old.kind, 1);
  EXPECT_EQ(old.bytes, 10u);
  EXPECT_EQ(t.find(handle(5))->bytes, 20u);
  EXPECT_EQ(t.size(), 1u);
  had = false;
  ASSERT_TRUE(t.put(handle(6), {3, 30}, &old, &had));
  EXPECT_FALSE(had);  // a new handle replaces nothing
}

TEST(RequestTable, HandleReusedByMpiAfterItsRequestCompleted) {
  // MPI hands out the handle of a completed request again: the new request must not see the old
  // request's value.
  mpe::RequestTable<Value> t;
  ASSERT_TRUE(t.put(handle(7), {1, 64}));
  t.erase(handle(7));
  EXPECT_EQ(t.find(handle(7)), nullptr);
  ASSERT_TRUE(t.put(handle(7), {2, 128}));
  EXPECT_EQ(t.find(handle(7))->kind, 2);
  EXPECT_EQ(t.find(handle(7))->bytes, 128u);
}

TEST(RequestTable, PersistentRequestStaysUntilFreedWhileOthersComeAndGo) {
  mpe::RequestTable<Value> t;
  ASSERT_TRUE(t.put(handle(1000), {3, 4096}));  // MPI_Send_init: bytes per MPI_Start
  for (uint64_t round = 0; round < 50; ++round) {
    for (uint64_t i = 0; i < 100; ++i) ASSERT_TRUE(t.put(handle(round * 100 + i + 2000), {1, i}));
    ASSERT_NE(t.find(handle(1000)), nullptr) << "round " << round;  // each MPI_Start finds it
    EXPECT_EQ(t.find(handle(1000))->bytes, 4096u);
    for (uint64_t i = 0; i < 100; ++i) t.erase(handle(round * 100 + i + 2000));
  }
  EXPECT_EQ(t.size(), 1u);
  t.erase(handle(1000));  // MPI_Request_free
  EXPECT_EQ(t.find(handle(1000)), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ManyRequestsGrowTheTable) {
  mpe::RequestTable<Value> t;
  constexpr uint64_t kMany = 200000;  // many times the initial capacity of 4096
  for (uint64_t i = 0; i < kMany; ++i) ASSERT_TRUE(t.put(handle(i * 7919), {static_cast<int>(i % 3), i}));
  EXPECT_EQ(t.size(), kMany);
  for (uint64_t i = 0; i < kMany; ++i) {
    const Value* v = t.find(handle(i * 7919));
    ASSERT_NE(v, nullptr) << i;
    ASSERT_EQ(v->bytes, i);
  }
  for (uint64_t i = 0; i < kMany; i += 2) t.erase(handle(i * 7919));
  EXPECT_EQ(t.size(), kMany / 2);
  for (uint64_t i = 0; i < kMany; ++i) ASSERT_EQ(t.find(handle(i * 7919)) != nullptr, i % 2 == 1) << i;
}

TEST(RequestTable, RandomOperationsAgreeWithAReferenceMap) {
  // Handles drawn from a small range collide in their home slots, which exercises the
  // backward-shift deletion that keeps probe runs intact without tombstones.
  mpe::RequestTable<Value> t;
  std::unordered_map<uint64_t, uint64_t> truth;
  std::mt19937_64 rng(12345);
  for (int step = 0; step < 300000; ++step) {
    const uint64_t h = rng() % 6000;
    switch (rng() % 3) {
      case 0:
        ASSERT_TRUE(t.put(handle(h), {0, static_cast<uint64_t>(step)}));
        truth[h] = static_cast<uint64_t>(step);
        break;
      case 1:
        t.erase(handle(h));
        truth.erase(h);
        break;
      default: {
        const Value* v = t.find(handle(h));
        const auto it = truth.find(h);
        ASSERT_EQ(v != nullptr, it != truth.end()) << "step " << step;
        if (v) ASSERT_EQ(v->bytes, it->second) << "step " << step;
      }
    }
    ASSERT_EQ(t.size(), truth.size()) << "step " << step;
  }
  for (const auto& [h, bytes] : truth) ASSERT_EQ(t.find(handle(h))->bytes, bytes);
}

}  // namespace
