// Routine knowledge travels with the log (mpe/routine.h): the table's facts, the definitions'
// round trip, old logs classified by name, and a log whose MPI routines have other names (an MPI
// that spells them differently) classified by the class it carries, the same as under the
// standard names, by the wait states, the rebuilt queue, message and RMA matching, the OTF2
// writer and the colours.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/routine.h"
#include "mpe/umq.h"
#include "mpe/waits.h"
#include "otf2_test_support.h"
#include "synthetic_log.h"

namespace {

using mpe::analysis::waits::Pattern;
using mpe::format::Category;
using mpe::format::CollectiveShape;
using mpe::format::Record;
using mpe::format::RecordKind;
using mpe::format::routine_by_name;
using mpe::format::RoutineFamily;
using mpe::format::RoutineInfo;
using mpe::format::RoutineMode;

TEST(RoutineTable, KnowsEachRoutinesClassFromTheTable) {
  const RoutineInfo ssend = routine_by_name("MPI_Ssend_c");  // a large-count twin as its base
  EXPECT_EQ(ssend.family, RoutineFamily::kSend);
  EXPECT_EQ(ssend.send_mode, mpe::format::SendMode::kSynchronous);
  EXPECT_TRUE(ssend.blocking());
  EXPECT_EQ(ssend.cls, "send:synchronous");
  const RoutineInfo iallreduce = routine_by_name("MPI_Iallreduce");
  EXPECT_EQ(iallreduce.family, RoutineFamily::kCollective);
  EXPECT_EQ(iallreduce.shape, CollectiveShape::kAllToAll);
  EXPECT_TRUE(iallreduce.nonblocking());
  EXPECT_FALSE(iallreduce.rooted());
  EXPECT_EQ(iallreduce.cls, "allreduce");
  EXPECT_TRUE(routine_by_name("MPI_Bcast").rooted());
  EXPECT_TRUE(routine_by_name("MPI_Gatherv").rooted());
  EXPECT_EQ(routine_by_name("MPI_Bcast_init").mode, RoutineMode::kPersistentInit);
  const RoutineInfo rget_acc = routine_by_name("MPI_Rget_accumulate");
  EXPECT_EQ(rget_acc.family, RoutineFamily::kRmaOp);
  EXPECT_EQ(rget_acc.rma, mpe::format::RmaKind::kGetAccumulate);
  EXPECT_TRUE(rget_acc.nonblocking());
  EXPECT_EQ(routine_by_name("MPI_Waitall").family, RoutineFamily::kCompletion);
  EXPECT_EQ(routine_by_name("MPI_Mrecv").family, RoutineFamily::kRecv);
  EXPECT_EQ(routine_by_name("MPI_Win_fence").family, RoutineFamily::kRmaSync);
  EXPECT_EQ(routine_by_name("MPI_Init_thread").family, RoutineFamily::kLifeCycle);
  EXPECT_FALSE(routine_by_name("compute").known());
  EXPECT_FALSE(routine_by_name("MPI_Not_a_routine").known());
  EXPECT_FALSE(routine_by_name("").known());
}

TEST(RoutineTable, ColoursFollowTheClass) {
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Isend")), 0x1E90FFu);
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Recv")), 0x32CD32u);
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Waitany")), 0xD03030u);
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Ibarrier")), 0xFFD700u);
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Neighbor_alltoall")), 0xFF8C00u);
  EXPECT_EQ(mpe::format::default_mpi_color(routine_by_name("MPI_Put")), 0xDA70D6u);
  EXPECT_EQ(mpe::format::default_mpi_color(std::string("a routine no table has")), 0xA0A0A0u);
}

// The standard routines of the scenario below, in category order, and the names another MPI gives
// them: none is in the routine table.
enum Cat : uint16_t {
  kSend,
  kRecv,
  kIrecv,
  kWaitall,
  kSsend,
  kBarrier,
  kBcast,
  kReduce,
  kIallreduce,
  kWait,
  kWinCreate,
  kPut,
  kGet,
  kFence
};
const std::vector<const char*> kStandard = {"MPI_Send",       "MPI_Recv",     "MPI_Irecv",      "MPI_Waitall",
                                            "MPI_Ssend",      "MPI_Barrier",  "MPI_Bcast",      "MPI_Reduce",
                                            "MPI_Iallreduce", "MPI_Wait",     "MPI_Win_create", "MPI_Put",
                                            "MPI_Get",        "MPI_Win_fence"};

std::string other_name(const char* standard) {
  std::string n = "VENDOR_";
  for (const char* p = standard + 4; *p; ++p)
    n += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  return n + "_X";  // "MPI_Ssend" -> "VENDOR_SSEND_X"
}

// The categories under other names; each keeps its routine's class when `keep_class`.
std::vector<Category> renamed_categories(bool keep_class) {
  std::vector<Category> v;
  for (uint16_t id = 0; id < kStandard.size(); ++id) {
    const std::string name = other_name(kStandard[id]);
    EXPECT_FALSE(routine_by_name(name).known()) << name;
    v.push_back(Category{id, mpe::format::CategoryKind::kState, 0, 0, name,
                         keep_class ? routine_by_name(kStandard[id]) : RoutineInfo{}});
  }
  return v;
}

constexpr int32_t kRecvReq = static_cast<int32_t>(mpe::format::RequestWhat::kRecv);
constexpr int32_t kCollReq = static_cast<int32_t>(mpe::format::RequestWhat::kCollective);

Record state(uint64_t start, uint64_t end, Cat cat) {
  return mpe::format::make_record(RecordKind::kState, start, cat, 0, 0, 0, end - start);
}
Record message(RecordKind kind, uint64_t t, Cat cat, int32_t peer, int32_t tag) {
  return mpe::format::make_record(kind, t, cat, peer, tag, 0, 8);
}
void collective(std::vector<Record>* r, uint64_t start, uint64_t end, Cat cat, int32_t root = -1) {
  r->push_back(state(start, end, cat));
  r->push_back(mpe::format::make_record(RecordKind::kCollective, start, cat, root, 0, 0, 0));
}

// Three ranks with one instance of each wait pattern (the scenario of test_waits.cpp, whose
// figures are known exactly), then one-sided traffic: rank 0 puts to rank 1 and gets from rank 2
// on one window, completed by a fence.
std::vector<std::vector<Record>> scenario() {
  std::vector<std::vector<Record>> r(3);
  r[1].push_back(state(100, 300, kRecv));  // Late Sender: 50 (the send comes at 150)
  r[1].push_back(message(RecordKind::kRecv, 300, kRecv, 0, 1));
  r[0].push_back(state(150, 160, kSend));
  r[0].push_back(message(RecordKind::kSend, 150, kSend, 1, 1));
  r[2].push_back(state(400, 405, kIrecv));  // a Waitall of two receives: 180 for the later sender
  r[2].push_back(mpe::format::make_record(RecordKind::kRequestPost, 400, kIrecv, 1, kRecvReq));
  r[2].push_back(state(410, 415, kIrecv));
  r[2].push_back(mpe::format::make_record(RecordKind::kRequestPost, 410, kIrecv, 2, kRecvReq));
  r[2].push_back(state(420, 700, kWaitall));
  r[2].push_back(mpe::format::make_record(RecordKind::kRequestDone, 700, kWaitall, 1, kRecvReq));
  r[2].push_back(message(RecordKind::kRecv, 700, kWaitall, 0, 2));
  r[2].push_back(mpe::format::make_record(RecordKind::kRequestDone, 700, kWaitall, 2, kRecvReq));
  r[2].push_back(message(RecordKind::kRecv, 700, kWaitall, 1, 3));
  r[0].push_back(state(500, 510, kSend));
  r[0].push_back(message(RecordKind::kSend, 500, kSend, 2, 2));
  r[1].push_back(state(600, 610, kSend));
  r[1].push_back(message(RecordKind::kSend, 600, kSend, 2, 3));
  r[0].push_back(state(800, 1000, kSsend));  // Late Receiver: 100, for a synchronous send only
  r[0].push_back(message(RecordKind::kSend, 800, kSsend, 1, 4));
  r[1].push_back(state(900, 1000, kRecv));
  r[1].push_back(message(RecordKind::kRecv, 1000, kRecv, 0, 4));
  collective(&r[0], 2000, 2300, kBarrier);  // Wait at Barrier: 250, 150
  collective(&r[1], 2100, 2300, kBarrier);
  collective(&r[2], 2250, 2300, kBarrier);
  collective(&r[0], 3000, 3200, kBcast, 1);  // Late Broadcast: 100, 50
  collective(&r[1], 3100, 3200, kBcast, 1);
  collective(&r[2], 3050, 3200, kBcast, 1);
  collective(&r[0], 4000, 4300, kReduce, 0);  // Early Reduce: 100
  collective(&r[1], 4200, 4300, kReduce, 0);
  collective(&r[2], 4100, 4300, kReduce, 0);
  const uint64_t post[3] = {5000, 5300, 5100}, wait[3] = {5020, 5320, 5110};  // Wait at N x N: 280, 190
  for (int k = 0; k < 3; ++k) {
    auto& v = r[static_cast<size_t>(k)];
    v.push_back(state(post[k], post[k] + 10, kIallreduce));
    v.push_back(mpe::format::make_record(RecordKind::kCollective, post[k], kIallreduce, -1, 0, 0, 0));
    v.push_back(mpe::format::make_record(RecordKind::kRequestPost, post[k], kIallreduce, 10 + k, kCollReq));
    v.push_back(state(wait[k], 5400, kWait));
    v.push_back(mpe::format::make_record(RecordKind::kRequestDone, 5400, kWait, 10 + k, kCollReq));
  }
  for (int32_t k = 0; k < 3; ++k) {  // window 0 on MPI_COMM_WORLD, 64 bytes on each rank
    auto& v = r[static_cast<size_t>(k)];
    v.push_back(state(6000, 6010, kWinCreate));
    v.push_back(mpe::format::make_record(RecordKind::kWinCreate, 6010, kWinCreate, 0, 0, 0, 64));
  }
  r[0].push_back(state(6100, 6110, kPut));
  r[0].push_back(mpe::format::make_record(RecordKind::kRmaOp, 6100, kPut, 1, 0, 0, 16));
  r[0].push_back(state(6200, 6210, kGet));
  r[0].push_back(mpe::format::make_record(RecordKind::kRmaOp, 6200, kGet, 2, 8, 0, 0));
  r[0].push_back(state(6300, 6400, kFence));
  r[0].push_back(mpe::format::make_record(RecordKind::kRmaComplete, 6400, kFence, -1, 0, 0, 0));
  return r;
}

// What the analyses make of a log: every figure the class of a routine decides.
struct Classified {
  std::vector<std::vector<int64_t>> waits;  // per pattern, per rank
  std::vector<mpe::analysis::waits::Blame> blame;
  uint64_t waits_unmatched = 0;
  std::vector<uint64_t> umq_max;
  uint64_t umq_messages = 0, umq_unexpected = 0, umq_posts = 0, umq_unmatched = 0;
  std::vector<std::tuple<int32_t, int32_t, int32_t, int64_t, int64_t, uint64_t>> messages;
  std::vector<std::tuple<int, int32_t, int32_t, uint64_t, uint64_t, int64_t>> rma;
  std::vector<uint32_t> colours;
};

Classified classify(const std::string& path) {
  Classified out;
  mpe::testing::OpenedTestLog log(path);
  if (!log.file) return out;
  const mpe::format::LogFile& f = *log.file;
  auto waits = mpe::analysis::waits::analyze(f, mpe::analysis::waits::Options{});
  EXPECT_TRUE(waits.ok()) << waits.status().to_string();
  if (waits.ok()) {
    for (const auto& p : waits->patterns) out.waits.push_back(p.per_rank);
    out.blame = waits->blame;
    out.waits_unmatched = waits->unmatched;
  }
  auto umq = mpe::analysis::umq::rebuild(f, mpe::analysis::umq::Options{});
  EXPECT_TRUE(umq.ok()) << umq.status().to_string();
  if (umq.ok()) {
    out.umq_max = umq->max_length;
    out.umq_messages = umq->messages;
    out.umq_unexpected = umq->unexpected;
    out.umq_posts = umq->posts;
    out.umq_unmatched = umq->unmatched;
  }
  auto trace = mpe::format::load_trace(f);
  EXPECT_TRUE(trace.ok()) << trace.status().to_string();
  if (trace.ok()) {
    for (const auto& m : trace->messages)
      out.messages.emplace_back(m.src, m.dst, m.tag, m.send_time, m.recv_time, m.bytes);
    for (const auto& t : trace->rma.transfers)
      out.rma.emplace_back(static_cast<int>(t.kind), t.origin, t.target, t.sent, t.received, t.complete);
  }
  for (const Category& c : f.definitions().categories)
    out.colours.push_back(mpe::format::default_mpi_color(c.routine));
  return out;
}

// The OTF2 writer's view: each region's role, in region order, and the collective operations and
// one-sided puts and gets of every location, in event order.
struct Otf2Seen {
  std::map<OTF2_StringRef, std::string> strings;
  std::vector<OTF2_LocationRef> locations;
  std::vector<OTF2_RegionRole> roles;
  std::vector<OTF2_CollectiveOp> collectives;
  int puts = 0, gets = 0;
};

Otf2Seen export_otf2(const std::string& log_path, const std::string& tag) {
  const std::string dir = otf2_test::temp_path("routine_classes", tag);
  std::filesystem::remove_all(dir);
  Otf2Seen seen;
  const mpe::Status s = mpe::interop::mpelog_to_otf2(log_path, dir);
  EXPECT_TRUE(s.ok()) << s.to_string();
  if (!s.ok()) return seen;
  OTF2_GlobalDefReaderCallbacks* defs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      defs, [](void* u, OTF2_RegionRef, OTF2_StringRef, OTF2_StringRef, OTF2_StringRef, OTF2_RegionRole role,
               OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
        if (paradigm == OTF2_PARADIGM_MPI) static_cast<Otf2Seen*>(u)->roles.push_back(role);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks* events = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      events, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                 OTF2_CollectiveOp op, OTF2_CommRef, uint32_t, uint64_t, uint64_t) {
        static_cast<Otf2Seen*>(u)->collectives.push_back(op);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      events, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
                 OTF2_CollectiveOp op, OTF2_CommRef, uint32_t, uint64_t, uint64_t, uint64_t) {
        static_cast<Otf2Seen*>(u)->collectives.push_back(op);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(
      events, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RmaWinRef,
                 uint32_t, uint64_t, uint64_t) {
        ++static_cast<Otf2Seen*>(u)->puts;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(
      events, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RmaWinRef,
                 uint32_t, uint64_t, uint64_t) {
        ++static_cast<Otf2Seen*>(u)->gets;
        return OTF2_CALLBACK_SUCCESS;
      });
  otf2_test::read_archive(dir, defs, events, &seen);
  std::filesystem::remove_all(dir);
  return seen;
}

class RenamedRoutines : public ::testing::Test {
 protected:
  static std::string write(const std::string& name, std::vector<Category> categories) {
    return mpe::testing::write_synthetic_log_with_categories(name, scenario(), std::move(categories));
  }
  const std::string standard_ = mpe::testing::write_synthetic_log("standard_names", scenario(), kStandard);
  const std::string renamed_ = write("other_names", renamed_categories(true));
  const std::string unclassed_ = write("other_names_no_class", renamed_categories(false));
};

TEST_F(RenamedRoutines, TheAnalysesClassifyByTheRoutineTableNotTheName) {
  const Classified standard = classify(standard_), renamed = classify(renamed_);
  // The known figures (test_waits.cpp), so that neither can be empty or wrong alike.
  ASSERT_EQ(standard.waits.size(), static_cast<size_t>(mpe::analysis::waits::kPatternCount));
  auto per_rank = [&](const Classified& c, Pattern p) { return c.waits[static_cast<size_t>(p)]; };
  EXPECT_EQ(per_rank(standard, Pattern::kLateSender), (std::vector<int64_t>{0, 50, 180}));
  EXPECT_EQ(per_rank(standard, Pattern::kLateReceiver), (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(per_rank(standard, Pattern::kWaitBarrier), (std::vector<int64_t>{250, 150, 0}));
  EXPECT_EQ(per_rank(standard, Pattern::kLateBroadcast), (std::vector<int64_t>{100, 0, 50}));
  EXPECT_EQ(per_rank(standard, Pattern::kEarlyReduce), (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(per_rank(standard, Pattern::kWaitNxN), (std::vector<int64_t>{280, 0, 190}));
  EXPECT_EQ(standard.messages.size(), 4u);
  ASSERT_EQ(standard.rma.size(), 2u);
  EXPECT_EQ(std::get<0>(standard.rma[0]), static_cast<int>(mpe::format::RmaKind::kPut));
  EXPECT_EQ(std::get<0>(standard.rma[1]), static_cast<int>(mpe::format::RmaKind::kGet));
  EXPECT_EQ(standard.colours[kSsend], 0x1E90FFu);
  EXPECT_EQ(standard.colours[kBarrier], 0xFFD700u);
  // Under other names, every figure is the same.
  EXPECT_EQ(renamed.waits, standard.waits);
  EXPECT_EQ(renamed.blame, standard.blame);
  EXPECT_EQ(renamed.waits_unmatched, standard.waits_unmatched);
  EXPECT_EQ(renamed.umq_max, standard.umq_max);
  EXPECT_EQ(renamed.umq_messages, standard.umq_messages);
  EXPECT_EQ(renamed.umq_unexpected, standard.umq_unexpected);
  EXPECT_EQ(renamed.umq_posts, standard.umq_posts);
  EXPECT_EQ(renamed.umq_unmatched, standard.umq_unmatched);
  EXPECT_EQ(renamed.messages, standard.messages);
  EXPECT_EQ(renamed.rma, standard.rma);
  EXPECT_EQ(renamed.colours, standard.colours);
}

TEST_F(RenamedRoutines, WithoutTheClassTheNamesAloneClassifyNothing) {
  // The control: the same names with no class lose what only the class gives (a synchronous send,
  // collective shapes, RMA kinds), so the test above could fail.
  const Classified unclassed = classify(unclassed_);
  ASSERT_EQ(unclassed.waits.size(), static_cast<size_t>(mpe::analysis::waits::kPatternCount));
  EXPECT_EQ(unclassed.waits[static_cast<size_t>(Pattern::kLateReceiver)], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(unclassed.waits[static_cast<size_t>(Pattern::kLateBroadcast)], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(unclassed.waits[static_cast<size_t>(Pattern::kWaitNxN)], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_TRUE(unclassed.rma.empty());
  EXPECT_EQ(unclassed.colours[kSend], 0xA0A0A0u);
}

TEST_F(RenamedRoutines, TheOtf2WriterTakesRolesAndOperationsFromTheClass) {
  const Otf2Seen standard = export_otf2(standard_, "standard"), renamed = export_otf2(renamed_, "renamed");
  const std::vector<OTF2_CollectiveOp> expected_ops = {OTF2_COLLECTIVE_OP_BARRIER, OTF2_COLLECTIVE_OP_BCAST,
                                                       OTF2_COLLECTIVE_OP_REDUCE,
                                                       OTF2_COLLECTIVE_OP_ALLREDUCE};
  std::vector<OTF2_CollectiveOp> ops = standard.collectives;
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  std::vector<OTF2_CollectiveOp> want = expected_ops;
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ops, want);
  EXPECT_EQ(standard.collectives.size(), 12u);  // 4 collectives x 3 ranks
  EXPECT_EQ(standard.puts, 1);
  EXPECT_EQ(standard.gets, 1);
  EXPECT_NE(std::find(standard.roles.begin(), standard.roles.end(), OTF2_REGION_ROLE_COLL_ONE2ALL),
            standard.roles.end());
  EXPECT_NE(std::find(standard.roles.begin(), standard.roles.end(), OTF2_REGION_ROLE_POINT2POINT),
            standard.roles.end());
  EXPECT_EQ(renamed.roles, standard.roles);
  EXPECT_EQ(renamed.collectives, standard.collectives);
  EXPECT_EQ(renamed.puts, standard.puts);
  EXPECT_EQ(renamed.gets, standard.gets);
}

TEST(RoutineDefinitions, TheClassRoundTripsAndOlderVersionsTakeItByName) {
  mpe::format::Definitions d;
  d.world_size = 0;
  d.program = "p";
  d.clock = "monotonic";
  d.categories = renamed_categories(true);
  d.categories.push_back(mpe::format::mpi_categories({"MPI_Ssend"})[0]);
  d.categories.back().id = 100;
  const std::string blob = mpe::format::serialize_definitions(d);
  mpe::format::Definitions back;
  ASSERT_TRUE(mpe::format::parse_definitions(blob.data(), blob.size(), &back).ok());
  ASSERT_EQ(back.categories.size(), d.categories.size());
  for (size_t i = 0; i < d.categories.size(); ++i) {
    EXPECT_EQ(back.categories[i].name, d.categories[i].name);
    EXPECT_EQ(back.categories[i].routine, d.categories[i].routine) << d.categories[i].name;
  }
  EXPECT_EQ(back.categories.back().routine.send_mode, mpe::format::SendMode::kSynchronous);
  // A byte out of range is corrupt, not a class: the family of the first category.
  std::string bad = blob;
  const size_t family_at = 4 + 4 + 1 + 4 + 9 + 8 + 1 + 4 + (4 + 1 + 4 + 4 + 4 + d.categories[0].name.size());
  ASSERT_EQ(static_cast<uint8_t>(bad[family_at]), static_cast<uint8_t>(RoutineFamily::kSend));
  bad[family_at] = static_cast<char>(mpe::format::kRoutineFamilyCount);
  EXPECT_FALSE(mpe::format::parse_definitions(bad.data(), bad.size(), &back).ok());
}

// The checked-in logs of versions 1, 2 and 5 carry names only: each MPI category gets the class
// the table has for its name.
TEST(RoutineDefinitions, OldLogsGetTheClassFromTheCompiledInTable) {
  for (const char* name : {"v1-synth.mpelog", "v2-halo2d.mpelog", "v5-synth.mpelog"}) {
    SCOPED_TRACE(name);
    auto f = mpe::format::LogFile::open(std::string(MPE_GOLDEN_DIR) + "/" + name);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_LT(f->version(), mpe::format::kFirstRoutineVersion);
    int known = 0;
    for (const Category& c : f->definitions().categories) {
      if (c.id >= mpe::format::kUserCategoryBase) {
        EXPECT_FALSE(c.routine.known()) << c.name;
        continue;
      }
      EXPECT_EQ(c.routine, routine_by_name(c.name)) << c.name;
      known += c.routine.known();
    }
    EXPECT_GT(known, 3);
    const Category* send = nullptr;
    for (const Category& c : f->definitions().categories)
      if (c.name == "MPI_Send") send = &c;
    ASSERT_NE(send, nullptr);
    EXPECT_EQ(send->routine.family, RoutineFamily::kSend);
    EXPECT_TRUE(send->routine.blocking());
  }
}

}  // namespace
