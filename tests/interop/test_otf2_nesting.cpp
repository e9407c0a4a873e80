// Edge cases of the OTF2 writer's event order, checked by a round trip through OTF2: calls that
// start where the previous one ends, zero-length calls, a child with its parent's exact span, a
// send at its call's entry and a receive at its call's exit, a collective inside its call, and
// marker-borne events. Every state and message must come back with the same times and nesting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "../../interop/src/otf2_common.h"
#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "otf2_test_support.h"

namespace {

using namespace mpe::format;

std::string temp_path(const std::string& name) { return otf2_test::temp_path("interop_test", name); }

Record rec(RecordKind k, uint64_t t, uint16_t cat, int32_t a = 0, int32_t b = 0, uint32_t comm = 0,
           uint64_t c = 0) {
  return make_record(k, t, cat, a, b, comm, c);
}

constexpr uint16_t kSend = 0, kRecv = 1, kBarrier = 2, kPcontrol = 3;

Definitions defs() {
  Definitions d =
      otf2_test::two_rank_definitions("nesting", {"MPI_Send", "MPI_Recv", "MPI_Barrier", "MPI_Pcontrol"});
  for (RankMeta& m : d.ranks)
    m.user_categories = {Category{kUserCategoryBase + 5, CategoryKind::kEvent, 0, 0x00FF00, "tick"}};
  merge_user_categories(&d);
  return d;
}

std::string write_log() {
  // Records as liblog stores them: a state at its call's end (so out of start order), a send at
  // the call's entry, a receive at the completing call's exit.
  std::vector<Record> r0 = {
      rec(RecordKind::kCollective, 100, kBarrier, -1, 0, 0, 0),
      rec(RecordKind::kState, 100, kBarrier, 0, 0, 0, 200),  // [100, 300]
      rec(RecordKind::kSend, 300, kSend, 1, 7, 0, 4),
      rec(RecordKind::kState, 300, kSend, 0, 0, 0, 0),  // [300, 300], starts where the barrier ends
      rec(RecordKind::kRecv, 500, kRecv, 1, 8, 0, 16),
      rec(RecordKind::kState, 400, kRecv, 0, 0, 0, 100),  // [400, 500], receive at its exit
      rec(RecordKind::kState, 600, kRecv, 1, 0, 0, 100),  // [600, 700] depth 1: its parent's span
      rec(RecordKind::kState, 700, kRecv, 1, 0, 0, 0),    // [700, 700] depth 1, at its parent's end
      rec(RecordKind::kState, 600, kSend, 0, 0, 0, 100),  // [600, 700] depth 0
      rec(RecordKind::kMarker, 800, kPcontrol, 0, 0),
      rec(RecordKind::kUserEvent, 850, kUserCategoryBase + 5, 0, 0, 0, 42),
  };
  std::vector<Record> r1 = {
      rec(RecordKind::kRecv, 350, kRecv, 0, 7, 0, 4),
      rec(RecordKind::kState, 320, kRecv, 0, 0, 0, 30),  // [320, 350]
      rec(RecordKind::kSend, 450, kSend, 0, 8, 0, 16),
      rec(RecordKind::kState, 450, kSend, 0, 0, 0, 10),  // [450, 460]
      rec(RecordKind::kCollective, 100, kBarrier, -1, 0, 0, 0),
      rec(RecordKind::kState, 100, kBarrier, 0, 0, 0, 190),
  };
  const std::string path = temp_path("in.mpelog");
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  uint32_t rank = 0;
  for (const auto* records : {&r0, &r1}) {  // one chunk per rank, thread 0
    std::string chunk;
    encode_events(records->data(), static_cast<uint32_t>(records->size()), rank++, 0, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
  }
  EXPECT_TRUE(w.finish(defs()).ok());
  return path;
}

using StateKey =
    std::tuple<uint32_t, int64_t, int64_t, std::string, uint32_t>;  // rank, start, end, name, depth

std::vector<StateKey> states(const LogFile& f, const Trace& t) {
  std::vector<StateKey> out;
  for (const auto& tl : t.timelines)
    for (const auto& s : tl.states)
      out.emplace_back(tl.rank, s.start, s.end, f.category_name(s.cat), s.depth);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Otf2RoundTrip, KeepsTimesNestingMessagesAndEvents) {
  const std::string in = write_log(), archive = temp_path("archive"), back = temp_path("back.mpelog");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, archive).ok());
  ASSERT_TRUE(mpe::interop::is_otf2(archive));
  const auto r = mpe::interop::otf2_to_mpelog(archive, back);
  ASSERT_TRUE(r.ok()) << r.to_string();
  auto a = LogFile::open(in), b = LogFile::open(back);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ta = load_trace(*a), tb = load_trace(*b);
  ASSERT_TRUE(ta.ok() && tb.ok());
  EXPECT_EQ(states(*b, *tb), states(*a, *ta));
  ASSERT_EQ(tb->messages.size(), 2u);
  ASSERT_EQ(ta->messages.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(tb->messages[i].send_time, ta->messages[i].send_time);
    EXPECT_EQ(tb->messages[i].recv_time, ta->messages[i].recv_time);
    EXPECT_EQ(tb->messages[i].src, ta->messages[i].src);
    EXPECT_EQ(tb->messages[i].tag, ta->messages[i].tag);
    EXPECT_EQ(tb->messages[i].bytes, ta->messages[i].bytes);
  }
  auto kinds = [](const Trace& t) {
    std::vector<std::tuple<uint32_t, int64_t, int>> k;
    for (const auto& tl : t.timelines)
      for (const auto& e : tl.events) k.emplace_back(tl.rank, e.time, static_cast<int>(e.kind));
    std::sort(k.begin(), k.end());
    return k;
  };
  EXPECT_EQ(kinds(*tb), kinds(*ta));  // collectives, the Pcontrol marker, the user event
  for (const auto& p : {in, back}) std::filesystem::remove(p);
  std::filesystem::remove_all(archive);
}

TEST(Otf2RoundTrip, ChromeCountsMatchTheLog) {
  const std::string in = write_log(), json = temp_path("out.json");
  mpe::interop::ChromeCounts n;
  ASSERT_TRUE(mpe::interop::mpelog_to_chrome(in, json, &n).ok());
  EXPECT_EQ(n.slices, 9u);
  EXPECT_EQ(n.flow_starts, 2u);
  EXPECT_EQ(n.flow_ends, 2u);
  EXPECT_EQ(n.instants, 4u);  // two collectives, the Pcontrol marker, the user event
  for (const auto& p : {in, json}) std::filesystem::remove(p);
}

TEST(Otf2Names, CollectiveOperationsAndRoles) {
  using mpe::interop::detail::collective_op;
  using mpe::interop::detail::region_role;
  EXPECT_EQ(collective_op("MPI_Allreduce"), OTF2_COLLECTIVE_OP_ALLREDUCE);
  EXPECT_EQ(collective_op("MPI_Ibcast"), OTF2_COLLECTIVE_OP_BCAST);
  EXPECT_EQ(collective_op("MPI_Reduce_scatter_block_c"), OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK);
  EXPECT_EQ(collective_op("MPI_Allgather_init"), OTF2_COLLECTIVE_OP_ALLGATHER);
  EXPECT_FALSE(collective_op("MPI_Isend").has_value());
  EXPECT_FALSE(collective_op("MPI_Init").has_value());  // "I" + "nit" is no collective
  EXPECT_EQ(region_role("MPI_Barrier", true), OTF2_REGION_ROLE_BARRIER);
  EXPECT_EQ(region_role("MPI_Scatterv", true), OTF2_REGION_ROLE_COLL_ONE2ALL);
  EXPECT_EQ(region_role("MPI_Reduce", true), OTF2_REGION_ROLE_COLL_ALL2ONE);
  EXPECT_EQ(region_role("MPI_Neighbor_alltoall", true), OTF2_REGION_ROLE_COLL_OTHER);
  EXPECT_EQ(region_role("MPI_Irecv", true), OTF2_REGION_ROLE_POINT2POINT);
  EXPECT_EQ(region_role("compute", false), OTF2_REGION_ROLE_FUNCTION);
}

TEST(Otf2In, RejectsWhatIsNotAnArchive) {
  const std::string junk = temp_path("junk.otf2");
  {
    FILE* f = std::fopen(junk.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("not an anchor file\n", f);
    std::fclose(f);
  }
  const auto s = mpe::interop::otf2_to_mpelog(junk, temp_path("junk.mpelog"));
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(std::filesystem::exists(temp_path("junk.mpelog")));
  EXPECT_FALSE(mpe::interop::otf2_to_mpelog(temp_path("missing"), temp_path("m.mpelog")).ok());
  auto same = mpe::interop::open_as_mpelog(temp_path("some.mpelog"), temp_path("unused.mpelog"));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, temp_path("some.mpelog"));  // not OTF2: returned unchanged
  std::filesystem::remove(junk);
}

}  // namespace
