// MPI_T counters through OTF2 and back. A log with counter records of every kind the format has
// (a process-wide level, a timer of doubles recorded as deltas, a signed counter, a variable bound
// to a communicator with the rank of its largest element, the same counter on two ranks under
// different local ids) becomes OTF2 metrics as Score-P's metric plugins write them: a metric member
// and a class per counter (ABSOLUTE_POINT values, RELATIVE_LAST deltas, the value's own type), one
// Metric event per sample, the communicator and element as attributes. Read back, every counter's
// definition and every rank's tracks (times, values, levels, communicators by their members,
// elements) must be the log's.
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_counters.h"
#include "mpe/log_reader.h"
#include "mpe/log_writer.h"
#include "otf2_test_support.h"

namespace {

using namespace mpe::format;
using mpe::PvarClass;
using mpe::PvarValueKind;

std::string temp_path(const std::string& name) { return otf2_test::temp_path("interop_metrics", name); }

CounterDef counter(uint32_t id, const char* name, PvarClass cls, PvarValueKind kind, bool per_comm = false) {
  CounterDef c;
  c.id = id;
  c.name = name;
  c.description = std::string("the ") + name + " variable";
  c.datatype = kind == PvarValueKind::kDouble   ? "MPI_DOUBLE"
               : kind == PvarValueKind::kSigned ? "MPI_INT"
                                                : "MPI_UNSIGNED";
  c.cls = cls;
  c.semantics = mpe::pvar_semantics(cls);
  c.kind = kind;
  c.per_comm = per_comm;
  return c;
}

uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

Record sample(uint64_t t, uint16_t local, uint64_t value, uint32_t comm = kUnknownComm, int32_t peer = -1) {
  return make_record(RecordKind::kCounter, t, local, peer, 0, comm, value);
}

Definitions defs() {
  Definitions d = otf2_test::two_rank_definitions("metrics", {"MPI_Send", "MPI_Recv"});
  d.ranks[0].counters = {counter(0, "unexpected_recvq_length", PvarClass::kLevel, PvarValueKind::kUnsigned),
                         counter(1, "time_matching", PvarClass::kTimer, PvarValueKind::kDouble)};
  d.ranks[1].counters = {counter(0, "msgq_length", PvarClass::kLevel, PvarValueKind::kUnsigned, true),
                         counter(1, "balance", PvarClass::kCounter, PvarValueKind::kSigned),
                         counter(2, "unexpected_recvq_length", PvarClass::kLevel, PvarValueKind::kUnsigned)};
  return d;
}

std::vector<Record> rank_records(uint32_t r) {
  if (r == 0)
    return {make_record(RecordKind::kState, 100, 0, 0, 0, 0, 50),
            make_record(RecordKind::kSend, 100, 0, 1, 3, 0, 8),
            sample(100, 0, 3),
            sample(150, 1, bits(0.5)),
            sample(200, 0, 5),
            sample(250, 1, bits(1.25)),
            sample(300, 0, 0)};
  return {make_record(RecordKind::kState, 90, 1, 0, 0, 0, 110),
          sample(120, 0, 2, 0, 1),
          sample(130, 1, static_cast<uint64_t>(int64_t{7})),
          sample(140, 1, static_cast<uint64_t>(int64_t{-3})),
          make_record(RecordKind::kRecv, 200, 1, 0, 3, 0, 8),
          sample(400, 0, 0, 0),
          sample(500, 2, 1)};
}

std::string write_log(const std::string& name) {
  const std::string path = temp_path(name);
  LogWriter w;
  EXPECT_TRUE(w.open(path).ok());
  for (uint32_t r = 0; r < 2; ++r) {
    const auto recs = rank_records(r);
    std::string chunk;
    encode_events(recs.data(), static_cast<uint32_t>(recs.size()), r, 0, 1, &chunk);
    EXPECT_TRUE(w.add_events_chunk(chunk).ok());
  }
  EXPECT_TRUE(w.finish(defs()).ok());
  return path;
}

// A track as it must survive: counter by name, communicator by its members.
using SampleKey =
    std::tuple<int64_t, uint32_t, int32_t, double, double>;  // time, thread, max_peer, value, level
using TrackKey = std::tuple<std::string, std::vector<int32_t>, std::vector<SampleKey>, double>;

std::vector<TrackKey> tracks(const LogFile& f, uint32_t rank) {
  const Counters counters(f);
  auto t = counter_tracks(f, counters, rank);
  EXPECT_TRUE(t.ok());
  std::vector<TrackKey> out;
  for (const CounterTrack& k : *t) {
    std::vector<int32_t> members;
    if (k.comm != kUnknownComm)
      for (const CommDef& c : f.definitions().ranks[rank].comms)
        if (c.index == k.comm) members = c.members.vector();
    std::vector<SampleKey> samples;
    for (const CounterSample& s : k.samples)
      samples.emplace_back(s.time, s.thread, s.max_peer, s.value, s.level);
    out.emplace_back(counters.counter(k.counter)->def.name, members, samples, k.max_level);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Seen {
  std::map<OTF2_StringRef, std::string> strings;
  std::vector<uint64_t> locations;
  struct Member {
    std::string name, description;
    OTF2_MetricMode mode;
    OTF2_Type type;
  };
  std::map<OTF2_MetricMemberRef, Member> members;  // strings resolved after reading
  std::map<OTF2_MetricMemberRef, std::pair<OTF2_StringRef, OTF2_StringRef>> member_strings;
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> classes;
  std::vector<std::string> metrics;  // "location time member value [comm] [peer]"
};

Seen read_archive(const std::string& dir) {
  Seen seen;
  OTF2_GlobalDefReaderCallbacks* defs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(
      defs, [](void* u, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef description,
               OTF2_MetricType, OTF2_MetricMode mode, OTF2_Type type, OTF2_Base, int64_t, OTF2_StringRef) {
        auto* s = static_cast<Seen*>(u);
        s->members[self] = Seen::Member{"", "", mode, type};
        s->member_strings[self] = {name, description};
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(
      defs, [](void* u, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef* m, OTF2_MetricOccurrence,
               OTF2_RecorderKind) {
        static_cast<Seen*>(u)->classes[self].assign(m, m + n);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_EvtReaderCallbacks* events = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetMetricCallback(
      events, [](OTF2_LocationRef loc, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                 OTF2_MetricRef metric, uint8_t n, const OTF2_Type* types, const OTF2_MetricValue* v) {
        std::string s = std::to_string(loc) + " " + std::to_string(t) + " " + std::to_string(metric);
        for (uint8_t k = 0; k < n; ++k)
          s += " " + (types[k] == OTF2_TYPE_DOUBLE  ? std::to_string(v[k].floating_point)
                      : types[k] == OTF2_TYPE_INT64 ? std::to_string(v[k].signed_int)
                                                    : std::to_string(v[k].unsigned_int));
        OTF2_CommRef c;
        int32_t peer;
        if (a && OTF2_AttributeList_GetCommRef(a, 0, &c) == OTF2_SUCCESS) s += " comm";
        if (a && OTF2_AttributeList_GetInt32(a, 1, &peer) == OTF2_SUCCESS)
          s += " peer=" + std::to_string(peer);
        static_cast<Seen*>(u)->metrics.push_back(s);
        return OTF2_CALLBACK_SUCCESS;
      });
  otf2_test::read_archive(dir, defs, events, &seen);
  for (auto& [ref, m] : seen.members) {
    m.name = seen.strings[seen.member_strings[ref].first];
    m.description = seen.strings[seen.member_strings[ref].second];
  }
  return seen;
}

TEST(Otf2Metrics, CountersAreMetricsAsScorePWritesThem) {
  const std::string in = write_log("in.mpelog"), archive = temp_path("archive");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, archive).ok());
  const Seen seen = read_archive(archive);
  // One member and one class per counter of the run (four: the ranks' unexpected_recvq_length is one).
  ASSERT_EQ(seen.members.size(), 4u);
  ASSERT_EQ(seen.classes.size(), 4u);
  std::map<std::string, Seen::Member> by_name;
  for (const auto& [ref, m] : seen.members) {
    by_name[m.name] = m;
    EXPECT_EQ(seen.classes.at(ref), std::vector<OTF2_MetricMemberRef>{ref});
  }
  EXPECT_EQ(by_name.at("unexpected_recvq_length").mode, OTF2_METRIC_ABSOLUTE_POINT);
  EXPECT_EQ(by_name.at("unexpected_recvq_length").type, OTF2_TYPE_UINT64);
  EXPECT_EQ(by_name.at("unexpected_recvq_length").description,
            "[MPI_T level, MPI_UNSIGNED] the unexpected_recvq_length variable");
  EXPECT_EQ(by_name.at("time_matching").mode, OTF2_METRIC_RELATIVE_LAST);
  EXPECT_EQ(by_name.at("time_matching").type, OTF2_TYPE_DOUBLE);
  EXPECT_EQ(by_name.at("balance").type, OTF2_TYPE_INT64);
  EXPECT_EQ(by_name.at("msgq_length").description,
            "[MPI_T level, MPI_UNSIGNED, per communicator] the msgq_length variable");
  // Every sample, on its rank's location, with its value in its type; the communicator-bound
  // variable's carry their communicator, and the element when there is one.
  std::vector<std::string> m = seen.metrics;
  std::sort(m.begin(), m.end());
  // Times from the run's start (rank 1's MPI_Recv at 90).
  std::vector<std::string> want = {"0 10 0 3",         "0 60 1 0.500000", "0 110 0 5",
                                   "0 160 1 1.250000", "0 210 0 0",       "1 30 2 2 comm peer=1",
                                   "1 40 3 7",         "1 50 3 -3",       "1 310 2 0 comm",
                                   "1 410 0 1"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(m, want);
  std::filesystem::remove(in);
  std::filesystem::remove_all(archive);
}

TEST(Otf2Metrics, TracksSurviveTheRoundTrip) {
  const std::string in = write_log("rt.mpelog"), archive = temp_path("rt_archive"),
                    back = temp_path("back.mpelog");
  ASSERT_TRUE(mpe::interop::mpelog_to_otf2(in, archive).ok());
  const auto s = mpe::interop::otf2_to_mpelog(archive, back);
  ASSERT_TRUE(s.ok()) << s.to_string();
  auto a = LogFile::open(in), b = LogFile::open(back);
  ASSERT_TRUE(a.ok() && b.ok());
  // The definitions, by name.
  const Counters ca(*a), cb(*b);
  ASSERT_EQ(ca.all().size(), cb.all().size());
  for (const Counter& c : ca.all()) {
    const Counter* d = cb.counter(cb.find(c.def.name));
    ASSERT_NE(d, nullptr) << c.def.name;
    EXPECT_EQ(d->def.description, c.def.description);
    EXPECT_EQ(d->def.datatype, c.def.datatype);
    EXPECT_EQ(d->def.cls, c.def.cls);
    EXPECT_EQ(d->def.semantics, c.def.semantics);
    EXPECT_EQ(d->def.kind, c.def.kind);
    EXPECT_EQ(d->def.per_comm, c.def.per_comm);
  }
  for (uint32_t r = 0; r < 2; ++r) {
    const auto ta = tracks(*a, r), tb = tracks(*b, r);
    EXPECT_EQ(ta, tb) << "rank " << r;
    EXPECT_EQ(ta.size(), r == 0 ? 2u : 3u);
  }
  // The known levels: the timer's deltas summed, the signed counter's too.
  const auto t0 = tracks(*b, 0);
  EXPECT_EQ(std::get<0>(t0[0]), "time_matching");
  EXPECT_EQ(std::get<3>(t0[0]), 1.75);
  const auto t1 = tracks(*b, 1);
  EXPECT_EQ(std::get<0>(t1[0]), "balance");
  EXPECT_EQ(std::get<4>(std::get<2>(t1[0]).back()), 4.0);
  EXPECT_EQ(std::get<1>(t1[1]), (std::vector<int32_t>{0, 1}));  // msgq_length on MPI_COMM_WORLD
  std::filesystem::remove(in);
  std::filesystem::remove(back);
  std::filesystem::remove_all(archive);
}

}  // namespace
