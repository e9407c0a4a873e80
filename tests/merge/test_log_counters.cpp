// The counter records (v4): definitions round-trip and older versions read without them; the
// reader unifies counters by name, streams samples, and builds tracks with running levels.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "mpe/log_counters.h"
#include "mpe/log_writer.h"

using namespace mpe::format;
using mpe::PvarClass;
using mpe::PvarSemantics;
using mpe::PvarValueKind;

namespace {

CounterDef def(uint32_t id, const std::string& name, PvarClass cls, bool per_comm) {
  return CounterDef{
      id,      name, "test variable", "MPI_UNSIGNED", cls, mpe::pvar_semantics(cls), PvarValueKind::kUnsigned,
      per_comm};
}

// Two ranks; rank 0 samples a queue length (level, per communicator) on comm 0 and a counter
// (deltas, process-wide), rank 1 the counter only, under another local id.
Definitions defs() {
  Definitions d;
  d.world_size = 2;
  d.program = "counters";
  d.clock = "monotonic";
  d.categories = mpi_categories({"MPI_Recv"});
  for (uint32_t r = 0; r < 2; ++r) {
    RankMeta m;
    m.rank = r;
    m.world_size = 2;
    m.threads = {ThreadDef{0, 1}};
    m.comms = {CommDef{0, 0, false, {0, 1}}};
    if (r == 0)
      m.counters = {def(0, "queue", PvarClass::kSize, true), def(1, "matches", PvarClass::kCounter, false)};
    else
      m.counters = {def(0, "matches", PvarClass::kCounter, false)};
    d.ranks.push_back(m);
  }
  return d;
}

Record sample(uint64_t t, uint16_t id, uint64_t value, int32_t peer = -1, uint32_t comm = kUnknownComm) {
  return make_record(RecordKind::kCounter, t, id, peer, 0, comm, value);
}

}  // namespace

TEST(Counters, DefinitionsRoundTripAndBadIdsAreCorrupt) {
  const RankMeta m = defs().ranks[0];
  RankMeta back;
  const std::string blob = serialize_rank_meta(m);
  ASSERT_TRUE(parse_rank_meta(blob.data(), blob.size(), &back).ok());
  ASSERT_EQ(back.counters.size(), 2u);
  EXPECT_EQ(back.counters[0].name, "queue");
  EXPECT_EQ(back.counters[0].cls, PvarClass::kSize);
  EXPECT_EQ(back.counters[0].semantics, PvarSemantics::kValue);
  EXPECT_TRUE(back.counters[0].per_comm);
  EXPECT_EQ(back.counters[1].semantics, PvarSemantics::kDelta);
  // Ids out of order are corrupt (a record's cat indexes the list).
  RankMeta bad = m;
  bad.counters[1].id = 5;
  const std::string b = serialize_rank_meta(bad);
  EXPECT_FALSE(parse_rank_meta(b.data(), b.size(), &back).ok());
}

TEST(Counters, ReaderUnifiesByNameStreamsSamplesAndBuildsTracks) {
  const std::string path = ::testing::TempDir() + "counters_" + std::to_string(getpid()) + ".mpelog";
  LogWriter w;
  ASSERT_TRUE(w.open(path).ok());
  // Rank 0: the queue grows to 3 and drains (values), 'matches' counts 2 then 5 (deltas).
  const std::vector<Record> r0 = {sample(100, 0, 3, 1, 0), sample(150, 1, 2), sample(200, 0, 2, 1, 0),
                                  sample(300, 0, 0, -1, 0), sample(350, 1, 3)};
  const std::vector<Record> r1 = {sample(120, 0, 7)};
  std::string c0, c1;
  encode_events(r0.data(), static_cast<uint32_t>(r0.size()), 0, 0, 1, &c0);
  encode_events(r1.data(), static_cast<uint32_t>(r1.size()), 1, 0, 1, &c1);
  ASSERT_TRUE(w.add_events_chunk(c0).ok());
  ASSERT_TRUE(w.add_events_chunk(c1).ok());
  ASSERT_TRUE(w.finish(defs()).ok());
  auto f = LogFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  const Counters counters(*f);
  ASSERT_EQ(counters.all().size(), 2u);
  const uint32_t queue = counters.find("queue"), matches = counters.find("matches");
  EXPECT_EQ(counters.id(1, 0), matches);  // rank 1's local 0 is rank 0's local 1
  int n = 0;
  ASSERT_TRUE(for_each_counter_sample(*f, counters, 1, [&](const CounterSample& s) {
                EXPECT_EQ(s.counter, matches);
                EXPECT_EQ(s.value, 7);
                ++n;
              }).ok());
  EXPECT_EQ(n, 1);
  auto tracks = counter_tracks(*f, counters, 0);
  ASSERT_TRUE(tracks.ok());
  ASSERT_EQ(tracks->size(), 2u);
  const CounterTrack& q = (*tracks)[0].counter == queue ? (*tracks)[0] : (*tracks)[1];
  const CounterTrack& m = (*tracks)[0].counter == queue ? (*tracks)[1] : (*tracks)[0];
  EXPECT_EQ(q.comm, 0u);
  EXPECT_EQ(q.max_level, 3);
  ASSERT_EQ(q.samples.size(), 3u);
  EXPECT_EQ(q.samples[0].max_peer, 1);  // rank 1 of comm 0 is world rank 1
  EXPECT_EQ(q.samples[2].level, 0);
  EXPECT_EQ(m.comm, kUnknownComm);
  ASSERT_EQ(m.samples.size(), 2u);
  EXPECT_EQ(m.samples[1].value, 3);  // the delta as recorded
  EXPECT_EQ(m.samples[1].level, 5);  // the running sum
  // Counter records are not events of the model.
  auto tr = load_trace(*f);
  ASSERT_TRUE(tr.ok());
  for (const auto& t : tr->timelines) EXPECT_TRUE(t.events.empty());
  std::remove(path.c_str());
}
