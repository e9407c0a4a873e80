// The typed record views (mpe/records.h): each one writes its fields where docs/FORMAT.md and
// mpe/log_format.h put them, reads them back, and reads the same from the reader's Event.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <tuple>

#include "mpe/records.h"

namespace {

using mpe::format::Event;
using mpe::format::make_record;
using mpe::format::Record;
using mpe::format::RecordKind;
using mpe::format::RequestWhat;
namespace f = mpe::format;

bool same_bytes(const Record& x, const Record& y) { return std::memcmp(&x, &y, sizeof x) == 0; }

// One view with every field set apart from its default, and the record its documented layout
// (mpe/log_format.h) says it is: the on-disk meaning of a, b, comm and c for that kind.
template <class V>
struct Sample {
  V view;
  Record record;
};

const auto kSamples = std::make_tuple(
    Sample<f::StateRecord>{{100, 5, 2, 9, 777}, make_record(RecordKind::kState, 100, 5, 2, 9, 0, 777)},
    Sample<f::SendRecord>{{101, 6, 3, 7, 2, 4096}, make_record(RecordKind::kSend, 101, 6, 3, 7, 2, 4096)},
    Sample<f::RecvRecord>{{102, 6, 4, 8, 2, 1 << 20},
                          make_record(RecordKind::kRecv, 102, 6, 4, 8, 2, 1 << 20)},
    Sample<f::CollectiveRecord>{{103, 8, 1, 4, 800, 1600},
                                make_record(RecordKind::kCollective, 103, 8, 1, 1600, 4, 800)},
    Sample<f::MarkerRecord>{{104, 9, 3, true}, make_record(RecordKind::kMarker, 104, 9, 3, 1)},
    Sample<f::UserEventRecord>{{105, 0x8001, 12, 0xDEADBEEFull},
                               make_record(RecordKind::kUserEvent, 105, 0x8001, 0, 12, 0, 0xDEADBEEFull)},
    Sample<f::CommCreateRecord>{{106, 10, 5, 16}, make_record(RecordKind::kCommCreate, 106, 10, 16, 0, 5)},
    Sample<f::SendCancelRecord>{{107, 6, 3, 7, 2}, make_record(RecordKind::kSendCancel, 107, 6, 3, 7, 2)},
    Sample<f::RequestPostRecord>{{{108, 11, 42, RequestWhat::kRecv}},
                                 make_record(RecordKind::kRequestPost, 108, 11, 42, 1)},
    Sample<f::RequestDoneRecord>{{{109, 12, 42, RequestWhat::kCancelled}},
                                 make_record(RecordKind::kRequestDone, 109, 12, 42, 2)},
    Sample<f::CounterRecord>{{110, 3, 2, 1, 5, 0x4059000000000000ull},
                             make_record(RecordKind::kCounter, 110, 3, 1, 5, 2, 0x4059000000000000ull)},
    Sample<f::RmaOpRecord>{{111, 13, 2, 1, 64, 32}, make_record(RecordKind::kRmaOp, 111, 13, 2, 32, 1, 64)},
    Sample<f::RmaCompleteRecord>{{112, 14, -1, 1}, make_record(RecordKind::kRmaComplete, 112, 14, -1, 0, 1)},
    Sample<f::WinCreateRecord>{{113, 15, 1, 2, 3, 1u << 20},
                               make_record(RecordKind::kWinCreate, 113, 15, 1, 2, 3, 1u << 20)});

template <class V>
void check_sample(const Sample<V>& s) {
  SCOPED_TRACE(static_cast<int>(V::kKind));
  // The view writes the documented layout, and reads it back.
  const Record r = s.view.to_record();
  EXPECT_EQ(f::kind_of(r), V::kKind);
  EXPECT_TRUE(same_bytes(r, s.record)) << "a=" << r.a << " b=" << r.b << " comm=" << r.comm << " c=" << r.c;
  EXPECT_EQ(V::from(r), s.view);
  EXPECT_EQ(f::as<V>(s.record), s.view);
  // Through the reader's Event: its own time (ns, here before the run's start) and call site,
  // the logged fields as they were; the view read from it has every field but the time.
  const Event e = Event::of(s.record, -250, 7);
  EXPECT_EQ(e.time, -250);
  EXPECT_EQ(e.kind, V::kKind);
  EXPECT_EQ(e.site, 7u);
  EXPECT_TRUE(same_bytes(e.record(s.record.time), s.record));
  V untimed = s.view;
  untimed.time = 0;
  EXPECT_EQ(f::as<V>(e), untimed);
}

TEST(Records, EveryViewWritesItsDocumentedLayoutAndReadsItBack) {
  std::apply([](const auto&... s) { (check_sample(s), ...); }, kSamples);
}

TEST(Records, EveryKindHasOneViewAndEverySampleIsTested) {
  std::set<int> kinds;
  size_t views = 0;
  std::apply([&](const auto&... v) { ((kinds.insert(static_cast<int>(v.kKind)), ++views), ...); },
             f::RecordViews{});
  EXPECT_EQ(views, kinds.size()) << "two views of one kind";
  // Kinds are numbered 1..kWinCreate without gaps (mpe/log_format.h).
  std::set<int> all;
  for (int k = 1; k <= static_cast<int>(RecordKind::kWinCreate); ++k) all.insert(k);
  EXPECT_EQ(kinds, all);
  EXPECT_EQ(std::tuple_size_v<decltype(kSamples)>, std::tuple_size_v<f::RecordViews>);
}

TEST(Records, StateWrittenInPlaceEqualsTheMadeRecord) {
  const f::StateRecord s{123456789, 42, 3, 11, 1000};
  Record r;
  std::memset(&r, 0xA5, sizeof r);  // liblog's buffer holds an older record there
  s.write_to(&r);
  EXPECT_TRUE(same_bytes(r, s.to_record()));
}

TEST(Records, RequestViewsShareTheirFieldsButNotTheirKind) {
  const f::RequestRecord what{7, 3, 9, RequestWhat::kCollective};
  EXPECT_EQ(f::kind_of(f::RequestPostRecord{what}.to_record()), RecordKind::kRequestPost);
  EXPECT_EQ(f::kind_of(f::RequestDoneRecord{what}.to_record()), RecordKind::kRequestDone);
  EXPECT_EQ(f::RequestDoneRecord::from(f::RequestPostRecord{what}.to_record()).what,
            RequestWhat::kCollective);
}

TEST(Records, NegativeFieldsSurviveTheUnsignedViews) {
  // A collective without root, and a receive's saturated byte count, as liblog writes them.
  const f::CollectiveRecord c{1, 2, -1, 0, 0, INT32_MAX};
  const Record r = c.to_record();
  EXPECT_EQ(r.a, -1);
  EXPECT_EQ(r.b, INT32_MAX);
  EXPECT_EQ(f::as<f::CollectiveRecord>(Event::of(r, 0)).root, -1);
}

}  // namespace
