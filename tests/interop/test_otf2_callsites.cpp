// Call sites through OTF2 and back: a log whose states carry call sites (one frame, three frames,
// a frame without a source line, a site of a user state, an unknown site; rank-local ids that
// differ between ranks) is written as OTF2 calling contexts and read back. Every state must come
// back with its call site (every frame: function, file, line, module, offset), and the archive
// must follow OTF2's rules for calling contexts: valid for otf2-print, each CallingContextEnter's
// context nested in the enclosing state's, unwind distances as OTF2 defines them, and readers
// that know only Enter/Leave still see every state.
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
using mpe::Frame;

std::string temp_path(const std::string& name) { return otf2_test::temp_path("interop_callsites", name); }

constexpr uint16_t kSend = 0, kRecv = 1, kBarrier = 2;
constexpr uint16_t kPhase = kUserCategoryBase + 1, kPhaseEnd = kUserCategoryBase + 2;

const Frame kSendFrame{"main", "/src/app/a.c", 10, "/bin/app", 0x1100};
const std::vector<Frame> kDeep = {{"layer_two", "/src/app/b.c", 20, "/bin/app", 0x2200},
                                  {"layer_one", "/src/app/b.c", 30, "/bin/app", 0x2300},
                                  {"main", "/src/app/a.c", 40, "/bin/app", 0x1400}};
const Frame kNoLine{"0x1a2b", "", 0, "/usr/lib/libx.so", 0x1a2b};
const Frame kPhaseFrame{"main", "/src/app/a.c", 5, "/bin/app", 0x1050};
const Frame kRecvFrame{"main", "/src/app/c.c", 7, "/bin/app", 0x3070};

Definitions defs() {
  Definitions d = otf2_test::two_rank_definitions("callsites", {"MPI_Send", "MPI_Recv", "MPI_Barrier"});
  for (RankMeta& m : d.ranks)
    m.user_categories = {Category{kPhase, CategoryKind::kState, kPhaseEnd, 0x00FF00, "phase"}};
  // Rank-local ids (1..n on each rank): the same frames have different ids on the two ranks.
  d.ranks[0].callsites = {CallSiteDef{1, {kSendFrame}}, CallSiteDef{2, kDeep}, CallSiteDef{3, {kNoLine}},
                          CallSiteDef{4, {kPhaseFrame}}};
  d.ranks[1].callsites = {CallSiteDef{1, {kNoLine}}, CallSiteDef{2, {kSendFrame}},
                          CallSiteDef{3, {kRecvFrame}}};
  merge_user_categories(&d);
  return d;
}

Record state(uint64_t start, uint64_t end, uint16_t cat, int32_t depth, int32_t site) {
  return make_record(RecordKind::kState, start, cat, depth, site, 0, end - start);
}

std::string write_log() {
  std::vector<Record> r0 = {
      make_record(RecordKind::kUserEvent, 100, kPhase, 0, 4),  // "phase" begins, at site 4
      state(200, 300, kSend, 1, 1),
      state(400, 500, kSend, 1, 1),  // the same site again, inside the same state
      state(600, 700, kBarrier, 1, 2),
      make_record(RecordKind::kUserEvent, 1000, kPhaseEnd, 0,
                  1),  // ends it (its own site is not the state's)
      state(1100, 1200, kBarrier, 0, 3),
      state(1300, 1400, kSend, 0, 0),  // unknown site
      state(1500, 1600, kSend, 0, 1),  // a site seen before, now at the top level
  };
  std::vector<Record> r1 = {
      state(150, 350, kRecv, 0, 3),
      state(600, 700, kBarrier, 0, 1),
      state(800, 900, kBarrier, 0, 2),
  };
  const std::string path = temp_path("in.mpelog");
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  uint32_t rank = 0;
  for (const auto* records : {&r0, &r1}) {
    std::string chunk;
    encode_events(records->data(), static_cast<uint32_t>(records->size()), rank++, 0, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
  }
  EXPECT_TRUE(w.finish(defs()).ok());
  return path;
}

using FrameKey = std::tuple<std::string, std::string, int, std::string, uintptr_t>;
// rank, start, end, name, depth, site text, every frame
using StateKey =
    std::tuple<uint32_t, int64_t, int64_t, std::string, uint32_t, std::string, std::vector<FrameKey>>;

std::vector<StateKey> states(const LogFile& f, const Trace& t) {
  std::vector<StateKey> out;
  for (const auto& tl : t.timelines)
    for (const auto& s : tl.states) {
      std::vector<FrameKey> frames;
      if (s.site)
        for (const Frame& fr : f.callsites()[s.site - 1].frames)
          frames.emplace_back(fr.function, fr.file, fr.line, fr.module, fr.offset);
      out.emplace_back(tl.rank, s.start, s.end, f.category_name(s.cat), s.depth, f.callsite_text(s.site),
                       frames);
    }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int> per_site(const LogFile& f, const Trace& t) {
  std::map<std::string, int> n;
  for (const auto& tl : t.timelines)
    for (const auto& s : tl.states) ++n[f.callsite_text(s.site) + " " + f.category_name(s.cat)];
  return n;
}

struct Archive {
  std::string in, dir, back;
  Archive() : in(write_log()), dir(temp_path("archive")), back(temp_path("back.mpelog")) {}
  ~Archive() {
    std::filesystem::remove(in);
    std::filesystem::remove(back);
    std::filesystem::remove_all(dir);
  }
};

TEST(Otf2CallSites, RoundTripKeepsEveryStatesCallSite) {
  Archive a;
  const auto out = mpe::interop::mpelog_to_otf2(a.in, a.dir);
  ASSERT_TRUE(out.ok()) << out.to_string();
  const auto s = mpe::interop::otf2_to_mpelog(a.dir, a.back);
  ASSERT_TRUE(s.ok()) << s.to_string();
  auto fa = LogFile::open(a.in), fb = LogFile::open(a.back);
  ASSERT_TRUE(fa.ok() && fb.ok());
  auto ta = load_trace(*fa), tb = load_trace(*fb);
  ASSERT_TRUE(ta.ok() && tb.ok());
  const auto want = states(*fa, *ta);
  ASSERT_EQ(want.size(), 10u);
  EXPECT_EQ(states(*fb, *tb), want);
  // Known texts, so that a test that lost every site on both sides cannot pass.
  const auto counts = per_site(*fb, *tb);
  EXPECT_EQ(counts, per_site(*fa, *ta));
  EXPECT_EQ(counts.at("a.c:10 (main) MPI_Send"), 3);
  EXPECT_EQ(counts.at("a.c:10 (main) MPI_Barrier"), 1);
  EXPECT_EQ(counts.at("b.c:20 (layer_two) <- b.c:30 (layer_one) <- a.c:40 (main) MPI_Barrier"), 1);
  EXPECT_EQ(counts.at("libx.so+0x1a2b (0x1a2b) MPI_Barrier"), 2);
  EXPECT_EQ(counts.at("a.c:5 (main) phase"), 1);
  EXPECT_EQ(counts.at("c.c:7 (main) MPI_Recv"), 1);
  EXPECT_EQ(counts.at(" MPI_Send"), 1);  // the unknown site stays unknown
  EXPECT_EQ(fb->callsites().size(), 5u);
  // Each rank defines only the sites its states use.
  EXPECT_EQ(fb->definitions().ranks[0].callsites.size(), 4u);
  EXPECT_EQ(fb->definitions().ranks[1].callsites.size(), 3u);
}

// What an OTF2 reader sees of the archive: the calling-context tree and each location's
// CallingContextEnter/Leave (and whether any plain Enter/Leave was written).
struct Seen {
  struct Context {
    uint32_t region, scl, parent;
  };
  std::map<uint32_t, Context> contexts;
  std::map<uint32_t, std::string> region_names;
  std::map<uint32_t, OTF2_Paradigm> paradigms;
  std::map<uint32_t, std::string> strings;
  std::vector<uint64_t> locations;
  struct Event {
    uint64_t location;
    bool enter;
    uint32_t context;
    uint32_t unwind;
  };
  std::vector<Event> events;
  int plain = 0;  // Enter/Leave callbacks: only when reading with those alone
};

Seen read_archive(const std::string& dir, bool enter_leave_only) {
  Seen seen;
  OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(
      dc, [](void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
             OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
        auto* s = static_cast<Seen*>(u);
        s->region_names[self] = s->strings[name];
        s->paradigms[self] = paradigm;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(
      dc, [](void* u, OTF2_CallingContextRef self, OTF2_RegionRef region, OTF2_SourceCodeLocationRef scl,
             OTF2_CallingContextRef parent) {
        static_cast<Seen*>(u)->contexts[self] = {region, scl, parent};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks* ec = OTF2_EvtReaderCallbacks_New();
  if (enter_leave_only) {
    OTF2_EvtReaderCallbacks_SetEnterCallback(
        ec, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef) {
          ++static_cast<Seen*>(u)->plain;
          return OTF2_CALLBACK_SUCCESS;
        });
    OTF2_EvtReaderCallbacks_SetLeaveCallback(
        ec, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef) {
          ++static_cast<Seen*>(u)->plain;
          return OTF2_CALLBACK_SUCCESS;
        });
  } else {
    OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(
        ec, [](OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
               OTF2_CallingContextRef c, uint32_t unwind) {
          static_cast<Seen*>(u)->events.push_back({l, true, c, unwind});
          return OTF2_CALLBACK_SUCCESS;
        });
    OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(
        ec, [](OTF2_LocationRef l, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*,
               OTF2_CallingContextRef c) {
          static_cast<Seen*>(u)->events.push_back({l, false, c, 1});
          return OTF2_CALLBACK_SUCCESS;
        });
    OTF2_EvtReaderCallbacks_SetEnterCallback(
        ec, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u, OTF2_AttributeList*, OTF2_RegionRef) {
          ++static_cast<Seen*>(u)->plain;
          return OTF2_CALLBACK_SUCCESS;
        });
  }
  otf2_test::read_archive(dir, dc, ec, &seen);
  return seen;
}

TEST(Otf2CallSites, ContextsFollowOtf2sRules) {
  Archive a;
  const auto out = mpe::interop::mpelog_to_otf2(a.in, a.dir);
  ASSERT_TRUE(out.ok()) << out.to_string();
  const Seen seen = read_archive(a.dir, false);
  EXPECT_EQ(seen.plain, 0);  // Enter/Leave and calling-context events are exclusive
  ASSERT_EQ(seen.events.size(), 20u);
  auto parent = [&](uint32_t c) { return seen.contexts.at(c).parent; };
  auto path = [&](uint32_t c) {  // c and its ancestors, innermost first
    std::vector<uint32_t> p;
    for (; c != OTF2_UNDEFINED_CALLING_CONTEXT; c = parent(c)) p.push_back(c);
    return p;
  };
  std::map<uint64_t, std::vector<uint32_t>> open;  // per location: contexts entered, not left
  std::map<uint64_t, uint32_t> previous;           // per location: the previous calling context
  for (const auto& e : seen.events) {
    auto& stack = open[e.location];
    const uint32_t prev = previous.count(e.location) ? previous[e.location]
                                                     : static_cast<uint32_t>(OTF2_UNDEFINED_CALLING_CONTEXT);
    if (!e.enter) {
      ASSERT_FALSE(stack.empty());
      EXPECT_EQ(stack.back(), e.context) << "a leave must name the innermost open context";
      stack.pop_back();
      previous[e.location] = parent(e.context);
      continue;
    }
    const std::vector<uint32_t> p = path(e.context);
    // The regions above the entered one, up to the enclosing state, are unwound frames.
    if (!stack.empty()) {
      const auto at = std::find(p.begin(), p.end(), stack.back());
      ASSERT_NE(at, p.end()) << "a nested state's context must lie below its enclosing state's";
      for (auto it = p.begin() + 1; it != at; ++it)
        EXPECT_EQ(seen.paradigms.at(seen.contexts.at(*it).region), OTF2_PARADIGM_SAMPLING);
      // The enclosing state was entered with a CallingContextEnter: an upper bound for the
      // unwind distance (the progress node is it or below it).
      EXPECT_LE(e.unwind, static_cast<uint32_t>(at - p.begin()) + 1);
    }
    // Unwind distance N + 1: the N nodes newly entered are not on the previous context's path,
    // the next one (made progress; may be the undefined root) is.
    ASSERT_GE(e.unwind, 1u);
    ASSERT_LE(e.unwind, p.size() + 1);
    const std::vector<uint32_t> before =
        prev == OTF2_UNDEFINED_CALLING_CONTEXT ? std::vector<uint32_t>{} : path(prev);
    for (uint32_t k = 0; k + 1 < e.unwind; ++k)
      EXPECT_EQ(std::count(before.begin(), before.end(), p[k]), 0)
          << "node " << k << " was not newly entered";
    if (e.unwind - 1 < p.size())  // else the undefined root, on every path
      EXPECT_EQ(std::count(before.begin(), before.end(), p[e.unwind - 1]), 1) << "the progress node";
    stack.push_back(e.context);
    previous[e.location] = e.context;
  }
  for (const auto& [loc, stack] : open) EXPECT_TRUE(stack.empty());
  // A reader that knows only Enter/Leave still sees every state (OTF2 emulates them).
  EXPECT_EQ(read_archive(a.dir, true).plain, 20);
}

TEST(Otf2CallSites, OtfPrintAcceptsTheArchive) {
  // Not a skip: scripts/test installs otf2-tools, and a skipped gtest still passes in ctest.
  ASSERT_EQ(access("/usr/bin/otf2-print", X_OK), 0) << "no otf2-print: install the Debian package otf2-tools";
  Archive a;
  const auto out = mpe::interop::mpelog_to_otf2(a.in, a.dir);
  ASSERT_TRUE(out.ok()) << out.to_string();
  const std::string err = temp_path("print.err");
  const std::string cmd = "/usr/bin/otf2-print " + a.dir + "/traces.otf2 2>" + err;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::map<std::string, int> counts;
  char line[4096];
  bool started = false;
  while (std::fgets(line, sizeof line, p)) {
    const std::string s(line);
    if (s.rfind("-----", 0) == 0) {
      started = true;
      continue;
    }
    if (started && s.size() > 1) ++counts[s.substr(0, s.find(' '))];
  }
  EXPECT_EQ(pclose(p), 0);
  EXPECT_EQ(std::filesystem::file_size(err), 0u) << "otf2-print wrote to stderr";
  std::filesystem::remove(err);
  EXPECT_EQ(counts["CALLING_CONTEXT_ENTER"], 10);
  EXPECT_EQ(counts["CALLING_CONTEXT_LEAVE"], 10);
  EXPECT_EQ(counts["ENTER"], 0);
}

// A log without call sites (format v1/v2, or liblog before it writes them) keeps plain
// Enter/Leave: nothing about it changes.
TEST(Otf2CallSites, NoSitesNoContexts) {
  Definitions d = defs();
  for (auto& r : d.ranks) r.callsites.clear();
  const std::string in = temp_path("plain.mpelog"), dir = temp_path("plain");
  std::vector<Record> recs = {state(200, 300, kSend, 0, 0)};
  {
    LogWriter w;
    ASSERT_TRUE(w.open(in).ok());
    std::string chunk;
    encode_events(recs.data(), 1, 0, 0, 1, &chunk);
    ASSERT_TRUE(w.add_events_chunk(chunk).ok());
    ASSERT_TRUE(w.finish(d).ok());
  }
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, dir).ok());
  const Seen seen = read_archive(dir, false);
  EXPECT_TRUE(seen.contexts.empty());
  EXPECT_TRUE(seen.events.empty());
  EXPECT_EQ(seen.plain, 1);
  std::filesystem::remove(in);
  std::filesystem::remove_all(dir);
}

}  // namespace
