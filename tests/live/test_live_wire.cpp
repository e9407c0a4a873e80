// The live stream's encoding: a frame survives the round trip, and damaged or foreign bytes are
// rejected with an error, never read past their end.
#include <gtest/gtest.h>

#include <random>

#include "mpe/live_wire.h"

namespace mpe::live_stream {
namespace {

RankFrame sample_frame() {
  RankFrame f;
  f.rank = 2;
  f.world_size = 4;
  f.pid = 1234;
  f.host = "nodeA";
  f.seq = 17;
  f.interval_start_ns = 1000;
  f.interval_end_ns = 2000;
  f.aggregated = true;
  f.frames_dropped = 3;
  f.sends = 5;
  f.send_bytes = 640;
  f.mpi_ns = 800;
  f.routines = {{"MPI_Recv", 700, 2}, {"MPI_Send", 100, 5}};
  ThreadNow t;
  t.in_mpi = true;
  t.since_ns = 1500;
  t.routine = "MPI_Recv";
  t.callsite = "ring.c:20 (main)";
  t.comm = 0;
  t.peer = 1;
  t.tag = 7;
  t.wait = WaitKind::kAllOf;
  t.peers = {1};
  f.threads = {t};
  f.comms = {CommDef{42, "MPI_COMM_WORLD", to_ranges({0, 1, 2, 3})}};
  f.events = {{EventKind::kSend, 1600, 3, 7, 42, 128, ""},
              {EventKind::kCollective, 1700, -1, 0, 0, 8, "MPI_Allreduce"}};
  f.per_peer = {{3, 5, 640}};
  f.received_per_peer = {{2, 4, 512}, {3, 1, 128}};
  return f;
}

TEST(LiveWire, FrameRoundTrips) {
  const RankFrame f = sample_frame();
  const std::string bytes = encode(f);
  auto kind = peek_kind(bytes.data(), bytes.size());
  ASSERT_TRUE(kind.ok());
  EXPECT_EQ(*kind, MessageKind::kRankFrame);
  auto back = decode_frame(bytes.data(), bytes.size());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->host, "nodeA");
  EXPECT_EQ(back->seq, 17u);
  EXPECT_TRUE(back->aggregated);
  EXPECT_FALSE(back->finalized);
  ASSERT_EQ(back->threads.size(), 1u);
  EXPECT_EQ(back->threads[0].callsite, "ring.c:20 (main)");
  EXPECT_EQ(back->threads[0].wait, WaitKind::kAllOf);
  EXPECT_EQ(back->threads[0].peers, std::vector<int32_t>{1});
  ASSERT_EQ(back->comms.size(), 1u);
  EXPECT_EQ(back->comms[0].members(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(back->comms[0].ranges.size(), 1u);  // run-length encoded
  ASSERT_EQ(back->events.size(), 2u);
  EXPECT_EQ(back->events[0].comm, 42u);
  EXPECT_EQ(back->events[1].routine, "MPI_Allreduce");
  EXPECT_EQ(back->per_peer[0].bytes, 640u);
  ASSERT_EQ(back->received_per_peer.size(), 2u);
  EXPECT_EQ(back->received_per_peer[1].peer, 3);
  EXPECT_EQ(back->received_per_peer[0].count, 4u);
  EXPECT_EQ(encode(*back), bytes);
}

TEST(LiveWire, JobEndRoundTrips) {
  const std::string bytes = encode(JobEnd{3, "/tmp/x.mpelog"});
  auto e = decode_job_end(bytes.data(), bytes.size());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->exit_status, 3);
  EXPECT_EQ(e->mpelog, "/tmp/x.mpelog");
  EXPECT_FALSE(decode_frame(bytes.data(), bytes.size()).ok());
}

TEST(LiveWire, RejectsEveryTruncation) {
  const std::string bytes = encode(sample_frame());
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(decode_frame(bytes.data(), n).ok()) << n;
}

TEST(LiveWire, RejectsForeignAndNewerMessages) {
  const std::string garbage = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(peek_kind(garbage.data(), garbage.size()).status().code(), StatusCode::kCorrupt);
  std::string newer = encode(sample_frame());
  newer[4] = static_cast<char>(kWireVersion + 1);  // a version this reader does not know
  EXPECT_EQ(peek_kind(newer.data(), newer.size()).status().code(), StatusCode::kUnsupportedVersion);
}

TEST(LiveWire, RejectsRanksAndPeersOutsideTheJob) {
  RankFrame f = sample_frame();
  f.threads[0].peers = {9};
  std::string bytes = encode(f);
  EXPECT_FALSE(decode_frame(bytes.data(), bytes.size()).ok());
  f = sample_frame();
  f.comms[0].ranges = {{2, 5}};
  bytes = encode(f);
  EXPECT_FALSE(decode_frame(bytes.data(), bytes.size()).ok());
  f = sample_frame();
  f.rank = 4;
  bytes = encode(f);
  EXPECT_FALSE(decode_frame(bytes.data(), bytes.size()).ok());
}

// Random damage to a valid frame: decoding returns (ok or not) without reading out of bounds;
// run under the sanitized build this is a small fuzz test.
TEST(LiveWire, SurvivesRandomDamage) {
  const std::string good = encode(sample_frame());
  std::mt19937 rng(12345);
  for (int round = 0; round < 20000; ++round) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    auto f = decode_frame(bad.data(), bad.size());
    if (f.ok()) {
      for (const ThreadNow& t : f->threads) EXPECT_LT(t.comm, static_cast<int32_t>(f->comms.size()));
    }
  }
}

}  // namespace
}  // namespace mpe::live_stream
