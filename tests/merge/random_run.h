// The frame of the generated runs that the streaming analyses are checked on against the in-memory
// ones (test_log_summary, test_waits_replay): `ranks` ranks, the even ones with two threads; each
// timeline's records, from records_of(rank, thread), cut into chunks of 1 to 12 records (a
// kSendCancel kept in its send's chunk: no current writer logs one, and the replays assume it);
// odd seeds interleave the timelines' chunks in the index (as `mpe synth` writes them), even ones
// keep each timeline's together (as liblog's merge does); communicators 0 (MPI_COMM_WORLD) and 1
// (the world reversed); each rank's clock offset by up to `skew` ticks (1 tick = 1 ns).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "mpe/chunk_codec.h"
#include "mpe/log_writer.h"
#include "mpe/records.h"

namespace mpe::testing {

inline void write_random_run(const std::string& path, const std::string& program, uint32_t seed,
                             uint32_t ranks, int64_t skew, std::mt19937& rng,
                             const std::function<std::vector<format::Record>(uint32_t, uint32_t)>& records_of,
                             std::vector<format::Category> categories) {
  using namespace format;
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  auto threads_of = [](uint32_t rank) { return rank % 2 == 0 ? 2u : 1u; };
  std::vector<std::vector<std::string>> timeline_chunks;
  for (uint32_t r = 0; r < ranks; ++r) {
    for (uint32_t thread = 0; thread < threads_of(r); ++thread) {
      const std::vector<Record> recs = records_of(r, thread);
      timeline_chunks.emplace_back();
      for (size_t at = 0; at < recs.size();) {
        size_t n = std::min<size_t>(1 + rng() % 12, recs.size() - at);
        while (at + n < recs.size() && kind_of(recs[at + n]) == RecordKind::kSendCancel) ++n;
        std::string chunk;
        encode_events(recs.data() + at, static_cast<uint32_t>(n), r, thread, 1, &chunk);
        timeline_chunks.back().push_back(std::move(chunk));
        at += n;
      }
    }
  }
  for (size_t k = 0, written = 1; written > 0; ++k) {
    written = 0;
    for (auto& chunks : timeline_chunks)
      for (size_t c = seed % 2 ? k : 0; c < (seed % 2 ? std::min(k + 1, chunks.size()) : chunks.size()); ++c)
        if (seed % 2 || k == 0) EXPECT_TRUE(w.add_events_chunk(chunks[c]).ok()), ++written;
  }
  Definitions d;
  d.world_size = ranks;
  d.program = program;
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = std::move(categories);
  std::vector<int32_t> world(ranks), reversed(ranks);
  for (uint32_t r = 0; r < ranks; ++r)
    world[r] = static_cast<int32_t>(r), reversed[r] = static_cast<int32_t>(ranks - 1 - r);
  for (uint32_t r = 0; r < ranks; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = ranks;
    m.host = "h";
    m.ticks_per_second = 1e9;
    for (uint32_t thread = 0; thread < threads_of(r); ++thread)
      m.threads.push_back(ThreadDef{thread, 100 + thread});
    m.comms = {CommDef{0, 0, false, world}, CommDef{1, 1, false, reversed}};
    if (skew > 0) {
      m.sync.valid = 1;
      m.sync.offset_init = static_cast<int64_t>(rng() % static_cast<uint64_t>(2 * skew)) - skew;
    }
    d.ranks.push_back(m);
  }
  EXPECT_TRUE(w.finish(d).ok());
}

}  // namespace mpe::testing
