// Nonblocking requests through OTF2 and back. A log as liblog writes it (request records, kinds 9
// and 10 of docs/FORMAT.md) with nonblocking collectives completed by MPI_Wait, MPI_Waitall
// (together with a nonblocking send and receive) and MPI_Test must become OTF2's request events
// where Score-P writes them: NonBlockingCollectiveRequest inside the collective's call, at its
// Enter, NonBlockingCollectiveComplete (operation, communicator, root, sizes, request id) inside
// the completing call, at its Leave, and no MpiCollectiveBegin/End for them; MpiIsend,
// MpiIsendComplete, MpiIrecvRequest and MpiIrecv for the messages. Read back, every record must
// return: the collective record followed by its request post, the request done in the
// completing call, with the same times, sizes, communicators and request pairing.
#include <gtest/gtest.h>
#include <otf2/otf2.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_layout.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "otf2_test_support.h"

namespace {

using namespace mpe::format;

std::string temp_path(const std::string& name) { return otf2_test::temp_path("interop_requests", name); }

enum : uint16_t { kInit, kIallreduce, kIbcast, kIsend, kIrecv, kWaitall, kWait, kIbarrier, kTest, kBarrier };

Definitions defs() {
  return otf2_test::two_rank_definitions(
      "requests", {"MPI_Init", "MPI_Iallreduce", "MPI_Ibcast", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
                   "MPI_Wait", "MPI_Ibarrier", "MPI_Test", "MPI_Barrier"});
}

Record state(uint64_t start, uint64_t end, uint16_t cat) {
  return make_record(RecordKind::kState, start, cat, 0, 0, 0, end - start);
}
Record post(uint64_t t, uint16_t cat, int32_t serial, RequestWhat what) {
  return make_record(RecordKind::kRequestPost, t, cat, serial, static_cast<int32_t>(what));
}
Record done(uint64_t t, uint16_t cat, int32_t serial, RequestWhat what) {
  return make_record(RecordKind::kRequestDone, t, cat, serial, static_cast<int32_t>(what));
}

// Rank r's records in liblog's order: each call's state at its end, then what the call wrote.
// `between` MPI_Test calls (incomplete) separate the Iallreduce from its Wait.
std::vector<Record> rank_records(uint32_t r, uint32_t between) {
  const int32_t peer = 1 - static_cast<int32_t>(r);
  std::vector<Record> v = {
      state(0, 10, kInit),
      state(100, 110, kIallreduce),
      make_record(RecordKind::kCollective, 100, kIallreduce, -1, 4, 0, 4),
      post(100, kIallreduce, 1, RequestWhat::kCollective),
      state(200, 205, kIbcast),
      make_record(RecordKind::kCollective, 200, kIbcast, 1, r == 1 ? 0 : 8, 0, r == 1 ? 8 : 0),
      post(200, kIbcast, 2, RequestWhat::kCollective),
      state(210, 215, kIsend),
      make_record(RecordKind::kSend, 210, kIsend, peer, 5, 0, 16),
      post(210, kIsend, 3, RequestWhat::kSend),
      state(220, 222, kIrecv),
      post(220, kIrecv, 4, RequestWhat::kRecv),
      state(300, 400 + 10 * r, kWaitall),
      done(400 + 10 * r, kWaitall, 2, RequestWhat::kCollective),
      done(400 + 10 * r, kWaitall, 3, RequestWhat::kSend),
      done(400 + 10 * r, kWaitall, 4, RequestWhat::kRecv),
      make_record(RecordKind::kRecv, 400 + 10 * r, kWaitall, peer, 5, 0, 16),
  };
  uint64_t t = 500;
  for (uint32_t i = 0; i < between; ++i, t += 10) v.push_back(state(t, t + 5, kTest));
  v.push_back(state(t, t + 100, kWait));
  v.push_back(done(t + 100, kWait, 1, RequestWhat::kCollective));
  t += 200;
  v.push_back(state(t, t + 5, kIbarrier));
  v.push_back(make_record(RecordKind::kCollective, t, kIbarrier, -1, 0, 0, 0));
  v.push_back(post(t, kIbarrier, 5, RequestWhat::kCollective));
  v.push_back(state(t + 10, t + 12, kTest));  // not yet complete
  v.push_back(state(t + 20, t + 30, kTest));
  v.push_back(done(t + 30, kTest, 5, RequestWhat::kCollective));
  v.push_back(state(t + 40, t + 50, kBarrier));  // blocking: MpiCollectiveBegin/End
  v.push_back(make_record(RecordKind::kCollective, t + 40, kBarrier, -1, 0, 0, 0));
  return v;
}

std::string write_log(const std::string& name, uint32_t between) {
  const std::string path = temp_path(name);
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  for (uint32_t r = 0; r < 2; ++r) {
    const auto recs = rank_records(r, between);
    // In chunks of 32768 records, as liblog spills them: a request's post and done in different chunks.
    for (size_t at = 0; at < recs.size(); at += 32768) {
      std::string chunk;
      const auto n = static_cast<uint32_t>(std::min<size_t>(32768, recs.size() - at));
      encode_events(recs.data() + at, n, r, 0, 1, &chunk);
      EXPECT_TRUE(w.add_events_chunk(chunk).ok());
    }
  }
  EXPECT_TRUE(w.finish(defs()).ok());
  return path;
}

// The archive's events per location as text (MPI_Test calls left out), with region names.
struct Seen {
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, std::string> regions;
  std::vector<uint64_t> locations;
  std::map<uint64_t, std::vector<std::string>> events;
  uint64_t tests = 0;  // Enter/Leave of MPI_Test
};

std::string root_text(uint32_t root) { return root == OTF2_UNDEFINED_UINT32 ? "none" : std::to_string(root); }

Seen read_archive(const std::string& dir) {
  Seen seen;
  OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      dc, [](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
             OTF2_RegionRole, OTF2_Paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
        auto* s = static_cast<Seen*>(u);
        s->regions[self] = s->strings[name];
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks* ec = OTF2_EvtReaderCallbacks_New();
  static auto add = [](OTF2_LocationRef l, void* u, uint64_t t, const std::string& text) {
    static_cast<Seen*>(u)->events[l].push_back(std::to_string(t) + " " + text);
  };
  OTF2_EvtReaderCallbacks_SetEnterCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef g) {
        auto* s = static_cast<Seen*>(u);
        if (s->regions[g] == "MPI_Test")
          ++s->tests;
        else
          add(l, u, t, "enter " + s->regions[g]);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef g) {
        auto* s = static_cast<Seen*>(u);
        if (s->regions[g] == "MPI_Test")
          ++s->tests;
        else
          add(l, u, t, "leave " + s->regions[g]);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*) {
        add(l, u, t, "collective_begin");
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*,
             OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received) {
        add(l, u, t,
            "collective_end op=" + std::to_string(op) + " comm=" + std::to_string(c) + " root=" +
                root_text(root) + " sent=" + std::to_string(sent) + " received=" + std::to_string(received));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint64_t id) {
        add(l, u, t, "nbc_request " + std::to_string(id));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(
      ec,
      [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, OTF2_CollectiveOp op,
         OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received, uint64_t id) {
        add(l, u, t,
            "nbc_complete " + std::to_string(id) + " op=" + std::to_string(op) +
                " comm=" + std::to_string(c) + " root=" + root_text(root) + " sent=" + std::to_string(sent) +
                " received=" + std::to_string(received));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t to,
             OTF2_CommRef, uint32_t tag, uint64_t len, uint64_t id) {
        add(l, u, t,
            "isend " + std::to_string(id) + " to=" + std::to_string(to) + " tag=" + std::to_string(tag) +
                " bytes=" + std::to_string(len));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint64_t id) {
        add(l, u, t, "isend_complete " + std::to_string(id));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint64_t id) {
        add(l, u, t, "irecv_request " + std::to_string(id));
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(
      ec, [](OTF2_LocationRef l, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t from,
             OTF2_CommRef, uint32_t tag, uint64_t len, uint64_t id) {
        add(l, u, t,
            "irecv " + std::to_string(id) + " from=" + std::to_string(from) + " tag=" + std::to_string(tag) +
                " bytes=" + std::to_string(len));
        return OTF2_CALLBACK_SUCCESS;
      });
  otf2_test::read_archive(dir, dc, ec, &seen);
  return seen;
}

std::string op(OTF2_CollectiveOp o) { return "op=" + std::to_string(o); }

// What rank r's location must hold, MPI_Test calls aside (between = 0).
std::vector<std::string> expected_events(uint32_t r) {
  const std::string peer = std::to_string(1 - r), wait_end = std::to_string(400 + 10 * r);
  const std::string bcast_sizes = r == 1 ? "sent=8 received=0" : "sent=0 received=8";
  return {
      "0 enter MPI_Init",
      "10 leave MPI_Init",
      "100 enter MPI_Iallreduce",
      "100 nbc_request 1",
      "110 leave MPI_Iallreduce",
      "200 enter MPI_Ibcast",
      "200 nbc_request 2",
      "205 leave MPI_Ibcast",
      "210 enter MPI_Isend",
      "210 isend 3 to=" + peer + " tag=5 bytes=16",
      "215 leave MPI_Isend",
      "220 enter MPI_Irecv",
      "220 irecv_request 4",
      "222 leave MPI_Irecv",
      "300 enter MPI_Waitall",
      wait_end + " nbc_complete 2 " + op(OTF2_COLLECTIVE_OP_BCAST) + " comm=0 root=1 " + bcast_sizes,
      wait_end + " isend_complete 3",
      wait_end + " irecv 4 from=" + peer + " tag=5 bytes=16",
      wait_end + " leave MPI_Waitall",
      "500 enter MPI_Wait",
      "600 nbc_complete 1 " + op(OTF2_COLLECTIVE_OP_ALLREDUCE) + " comm=0 root=none sent=4 received=4",
      "600 leave MPI_Wait",
      "700 enter MPI_Ibarrier",
      "700 nbc_request 5",
      "705 leave MPI_Ibarrier",
      "730 nbc_complete 5 " + op(OTF2_COLLECTIVE_OP_BARRIER) + " comm=0 root=none sent=0 received=0",
      "740 enter MPI_Barrier",
      "740 collective_begin",
      "750 collective_end " + op(OTF2_COLLECTIVE_OP_BARRIER) + " comm=0 root=none sent=0 received=0",
      "750 leave MPI_Barrier",
  };
}

TEST(Otf2Requests, NonblockingCollectivesAsScorePWritesThem) {
  const std::string in = write_log("in.mpelog", 0), archive = temp_path("archive");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, archive).ok());
  const Seen seen = read_archive(archive);
  ASSERT_EQ(seen.locations.size(), 2u);
  for (uint32_t r = 0; r < 2; ++r) {
    auto it = seen.events.find(uint64_t{r});  // Score-P's numbering: rank r's master thread is location r
    ASSERT_NE(it, seen.events.end());
    EXPECT_EQ(it->second, expected_events(r)) << "rank " << r;
  }
  EXPECT_EQ(seen.tests, 2u * 2 * 2);  // two MPI_Test calls per rank, Enter and Leave each
  std::filesystem::remove(in);
  std::filesystem::remove_all(archive);
}

// A log's records in a form that survives the round trip: per location, every record but the
// states in stored order stably sorted by time, category by name, communicator by its members, and
// request serials renumbered in order of first use (the reader numbers them itself).
using RecordKey = std::tuple<uint32_t, int, int64_t, std::string, int32_t, int32_t, std::string, uint64_t>;

std::vector<RecordKey> records(const LogFile& f) {
  std::vector<RecordKey> out;
  std::map<uint32_t, std::vector<std::pair<int64_t, Record>>> by_rank;
  for (size_t i = 0; i < f.index().size(); ++i) {
    auto recs = f.read_chunk(i);
    EXPECT_TRUE(recs.ok());
    if (!recs.ok()) continue;
    const uint32_t rank = f.index()[i].rank;
    for (const Record& r : *recs)
      if (r.kind != static_cast<uint8_t>(RecordKind::kState))
        by_rank[rank].emplace_back(f.to_ns(rank, r.time), r);
  }
  for (auto& [rank, recs] : by_rank) {
    std::stable_sort(recs.begin(), recs.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::map<int32_t, int32_t> serial;
    for (const auto& [t, r] : recs) {
      const auto kind = static_cast<RecordKind>(r.kind);
      const bool request = kind == RecordKind::kRequestPost || kind == RecordKind::kRequestDone;
      int32_t a = r.a;
      if (request) a = serial.try_emplace(r.a, static_cast<int32_t>(serial.size() + 1)).first->second;
      std::string comm = "-";
      for (const auto& c : f.definitions().ranks[rank].comms)
        if (c.index == r.comm && !request) {
          comm.clear();
          for (int32_t m : c.members) comm += std::to_string(m) + ",";
        }
      out.emplace_back(rank, r.kind, t, f.category_name(r.cat), a, r.b, comm, r.c);
    }
  }
  return out;
}

void expect_round_trip(uint32_t between, bool complete_collectives) {
  const std::string in = write_log("rt-in.mpelog", between), archive = temp_path("rt-archive"),
                    back = temp_path("rt-back.mpelog");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, archive).ok());
  const auto s = mpe::interop::otf2_to_mpelog(archive, back);
  ASSERT_TRUE(s.ok()) << s.to_string();
  auto a = LogFile::open(in), b = LogFile::open(back);
  ASSERT_TRUE(a.ok() && b.ok());
  auto want = records(*a);
  const auto got = records(*b);
  if (!complete_collectives)  // the Iallreduce (the first collective) could not be held back
    for (auto& k : want)
      if (std::get<1>(k) == static_cast<int>(RecordKind::kCollective) && std::get<3>(k) == "MPI_Iallreduce") {
        std::get<4>(k) = -1, std::get<5>(k) = 0, std::get<6>(k) = "-", std::get<7>(k) = 0;
      }
  EXPECT_EQ(got, want);
  // The stored order that liblog's readers rely on: a collective's request post right after its
  // record, a receive's request done right before its receive.
  for (size_t i = 0; i < b->index().size(); ++i) {
    auto recs = b->read_chunk(i);
    ASSERT_TRUE(recs.ok());
    for (size_t k = 0; k < recs->size(); ++k) {
      const Record& r = (*recs)[k];
      if (r.kind == static_cast<uint8_t>(RecordKind::kRequestPost) &&
          r.b == static_cast<int32_t>(RequestWhat::kCollective)) {
        ASSERT_GT(k, 0u);
        EXPECT_EQ((*recs)[k - 1].kind, static_cast<uint8_t>(RecordKind::kCollective));
        EXPECT_EQ((*recs)[k - 1].time, r.time);
      }
      if (r.kind == static_cast<uint8_t>(RecordKind::kRequestDone) &&
          r.b == static_cast<int32_t>(RequestWhat::kRecv)) {
        ASSERT_LT(k + 1, recs->size());
        EXPECT_EQ((*recs)[k + 1].kind, static_cast<uint8_t>(RecordKind::kRecv));
      }
    }
  }
  // Through OTF2 again: the same archive events. Communicator refs aside: the reader defines
  // the communicators anew, so they are numbered differently (their members were compared above).
  const std::string again = temp_path("rt-again");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(back, again).ok());
  const Seen first = read_archive(archive), second = read_archive(again);
  EXPECT_EQ(second.tests, first.tests);
  auto without_comms = [](std::vector<std::string> events) {
    for (auto& e : events) {
      const auto at = e.find(" comm=");
      if (at != std::string::npos) e.erase(at, e.find(' ', at + 1) - at);
    }
    return events;
  };
  for (const auto& [loc, events] : first.events) {
    auto it = second.events.find(loc);
    ASSERT_NE(it, second.events.end());
    if (complete_collectives)
      EXPECT_EQ(without_comms(it->second), without_comms(events)) << "location " << loc;
  }
  for (const auto& p : {in, back}) std::filesystem::remove(p);
  for (const auto& p : {archive, again}) std::filesystem::remove_all(p);
}

TEST(Otf2Requests, RoundTripKeepsRequestRecords) { expect_round_trip(0, true); }

// 40000 MPI_Test calls between the Iallreduce and its Wait: the reader holds the collective's
// record (and what follows it) across chunk boundaries until the completion names it.
TEST(Otf2Requests, RoundTripHoldsAnOpenCollectiveAcrossChunks) { expect_round_trip(40000, true); }

// 300000 calls: more than the reader holds back (8 chunks); the collective's record is written
// without what only its completion says, and its request still pairs.
TEST(Otf2Requests, RoundTripBeyondTheHeldRecords) { expect_round_trip(300000, false); }

}  // namespace
