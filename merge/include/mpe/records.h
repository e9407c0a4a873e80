// Typed views of the log's records: one named struct per RecordKind, made (to_record()) and read
// (from(), as<V>()) here and nowhere else, so that no writer or reader decodes Record::a, b and c
// by hand; and Event, a record as the reader hands it out, read through the same views. The
// on-disk Record (mpe/log_format.h) does not change: these are views of its fields, and every
// format version reads as before. Making a record costs what make_record() costs (a few stores,
// constexpr): liblog's hot path uses these too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>

#include "mpe/log_format.h"

namespace mpe::format {

// An MPI call or a user state (kState): cat = routine or user state, its nesting depth, its call
// site (v3: the rank's local site id; 0 before), its duration in ticks.
struct StateRecord {
  static constexpr RecordKind kKind = RecordKind::kState;
  uint64_t time = 0;  // entry, ticks
  uint16_t cat = 0;
  uint32_t depth = 0;
  uint32_t site = 0;
  uint64_t duration = 0;  // ticks
  constexpr Record to_record() const {
    return make_record(kKind, time, cat, static_cast<int32_t>(depth), static_cast<int32_t>(site), 0,
                       duration);
  }
  static constexpr StateRecord from(const Record& r) {
    return {r.time, r.cat, static_cast<uint32_t>(r.a), static_cast<uint32_t>(r.b), r.c};
  }
  // Writes the record into *out field by field, as to_record() would make it: liblog's per-call
  // path, where assigning a whole Record makes GCC assemble the a/b pair in a vector register
  // first (measured: 4 instructions more per call). The a/b pair is one 64-bit store of a
  // scalar, which the vectorizer leaves alone (1 instruction fewer than two 32-bit fields).
  void write_to(Record* out) const {
    out->time = time;
    out->kind = static_cast<uint8_t>(kKind);
    out->flags = 0;
    out->cat = cat;
    static_assert(offsetof(Record, b) == offsetof(Record, a) + 4);
    const uint64_t depth_and_site = uint64_t{depth} | uint64_t{site} << 32;  // a, then b: little-endian
    std::memcpy(reinterpret_cast<char*>(out) + offsetof(Record, a), &depth_and_site, sizeof depth_and_site);
    out->comm = 0;
    out->c = duration;
  }
  bool operator==(const StateRecord&) const = default;
};

// A message left (kSend): at the send call's entry, to `dest` (rank in comm).
struct SendRecord {
  static constexpr RecordKind kKind = RecordKind::kSend;
  uint64_t time = 0;
  uint16_t cat = 0;  // the sending routine
  int32_t dest = 0;
  int32_t tag = 0;
  uint32_t comm = 0;  // the rank's communicator index
  uint64_t bytes = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, dest, tag, comm, bytes); }
  static constexpr SendRecord from(const Record& r) { return {r.time, r.cat, r.a, r.b, r.comm, r.c}; }
  bool operator==(const SendRecord&) const = default;
};

// A message arrived (kRecv): at the receive's completion, from `source` (rank in comm; the actual
// source and tag, also for wildcard receives and MPI_STATUS_IGNORE, which liblog replaces).
struct RecvRecord {
  static constexpr RecordKind kKind = RecordKind::kRecv;
  uint64_t time = 0;
  uint16_t cat = 0;  // the completing routine
  int32_t source = 0;
  int32_t tag = 0;
  uint32_t comm = 0;
  uint64_t bytes = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, source, tag, comm, bytes); }
  static constexpr RecvRecord from(const Record& r) { return {r.time, r.cat, r.a, r.b, r.comm, r.c}; }
  bool operator==(const RecvRecord&) const = default;
};

// A send recorded earlier was cancelled (kSendCancel): the same dest, tag and comm as its kSend.
struct SendCancelRecord {
  static constexpr RecordKind kKind = RecordKind::kSendCancel;
  uint64_t time = 0;
  uint16_t cat = 0;
  int32_t dest = 0;
  int32_t tag = 0;
  uint32_t comm = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, dest, tag, comm); }
  static constexpr SendCancelRecord from(const Record& r) { return {r.time, r.cat, r.a, r.b, r.comm}; }
  bool operator==(const SendCancelRecord&) const = default;
};

// A collective call (kCollective): at its entry; root as a rank in comm (-1: none), bytes this
// rank sent and received (received saturates at 2^31-1; v2 on).
struct CollectiveRecord {
  static constexpr RecordKind kKind = RecordKind::kCollective;
  uint64_t time = 0;
  uint16_t cat = 0;  // the routine
  int32_t root = -1;
  uint32_t comm = 0;
  uint64_t sent = 0;
  int32_t received = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, root, received, comm, sent); }
  static constexpr CollectiveRecord from(const Record& r) { return {r.time, r.cat, r.a, r.comm, r.c, r.b}; }
  bool operator==(const CollectiveRecord&) const = default;
};

// MPI_Pcontrol (kMarker): the level, and whether logging was on after the call.
struct MarkerRecord {
  static constexpr RecordKind kKind = RecordKind::kMarker;
  uint64_t time = 0;
  uint16_t cat = 0;
  int32_t level = 0;
  bool logging_on = false;
  constexpr Record to_record() const { return make_record(kKind, time, cat, level, logging_on ? 1 : 0); }
  static constexpr MarkerRecord from(const Record& r) { return {r.time, r.cat, r.a, r.b == 1}; }
  bool operator==(const MarkerRecord&) const = default;
};

// MPE_Log_event (kUserEvent): the event id, its call site (v3), up to 8 bytes of data.
struct UserEventRecord {
  static constexpr RecordKind kKind = RecordKind::kUserEvent;
  uint64_t time = 0;
  uint16_t id = 0;
  uint32_t site = 0;
  uint64_t data = 0;
  constexpr Record to_record() const {
    return make_record(kKind, time, id, 0, static_cast<int32_t>(site), 0, data);
  }
  static constexpr UserEventRecord from(const Record& r) {
    return {r.time, r.cat, static_cast<uint32_t>(r.b), r.c};
  }
  bool operator==(const UserEventRecord&) const = default;
};

// A communicator was created (kCommCreate, recorded even when paused): its per-rank index and size.
struct CommCreateRecord {
  static constexpr RecordKind kKind = RecordKind::kCommCreate;
  uint64_t time = 0;
  uint16_t cat = 0;  // the creating routine
  uint32_t comm = 0;
  int32_t size = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, size, 0, comm); }
  static constexpr CommCreateRecord from(const Record& r) { return {r.time, r.cat, r.comm, r.a}; }
  bool operator==(const CommCreateRecord&) const = default;
};

// A nonblocking request was posted (kRequestPost) or completed (kRequestDone): its serial on the
// thread (1, 2, ...) and what it is. A send's post follows its kSend, a receive's done precedes its
// kRecv, a collective's post follows its kCollective (same times).
struct RequestRecord {
  uint64_t time = 0;
  uint16_t cat = 0;  // the posting or completing routine
  uint32_t serial = 0;
  RequestWhat what = RequestWhat::kSend;
  constexpr Record to_record(RecordKind kind) const {
    return make_record(kind, time, cat, static_cast<int32_t>(serial), static_cast<int32_t>(what));
  }
  static constexpr RequestRecord from(const Record& r) {
    return {r.time, r.cat, static_cast<uint32_t>(r.a), static_cast<RequestWhat>(r.b)};
  }
  bool operator==(const RequestRecord&) const = default;
};
struct RequestPostRecord : RequestRecord {
  static constexpr RecordKind kKind = RecordKind::kRequestPost;
  constexpr Record to_record() const { return RequestRecord::to_record(kKind); }
  static constexpr RequestPostRecord from(const Record& r) { return {RequestRecord::from(r)}; }
  bool operator==(const RequestPostRecord&) const = default;
};
struct RequestDoneRecord : RequestRecord {
  static constexpr RecordKind kKind = RecordKind::kRequestDone;
  constexpr Record to_record() const { return RequestRecord::to_record(kKind); }
  static constexpr RequestDoneRecord from(const Record& r) { return {RequestRecord::from(r)}; }
  bool operator==(const RequestDoneRecord&) const = default;
};

// An MPI_T performance-variable sample (kCounter, v4): the rank's counter id, the communicator
// whose handle was read (kUnknownComm: process-wide), the element holding the largest value (-1:
// one element), a watermark's changes so far, and the value's bits (see log_format.h).
struct CounterRecord {
  static constexpr RecordKind kKind = RecordKind::kCounter;
  uint64_t time = 0;
  uint16_t counter = 0;
  uint32_t comm = kUnknownComm;
  int32_t top_element = -1;
  int32_t changes = 0;
  uint64_t value_bits = 0;
  constexpr Record to_record() const {
    return make_record(kKind, time, counter, top_element, changes, comm, value_bits);
  }
  static constexpr CounterRecord from(const Record& r) { return {r.time, r.cat, r.comm, r.a, r.b, r.c}; }
  bool operator==(const CounterRecord&) const = default;
};

// A one-sided operation (kRmaOp, v4): target as a rank in the window's group, the window's index,
// bytes carried to the target and brought back (saturates at 2^31-1).
struct RmaOpRecord {
  static constexpr RecordKind kKind = RecordKind::kRmaOp;
  uint64_t time = 0;
  uint16_t cat = 0;
  int32_t target = 0;
  uint32_t window = 0;
  uint64_t sent = 0;
  int32_t received = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, target, received, window, sent); }
  static constexpr RmaOpRecord from(const Record& r) { return {r.time, r.cat, r.a, r.comm, r.c, r.b}; }
  bool operator==(const RmaOpRecord&) const = default;
};

// A synchronisation completed the rank's pending operations on a window (kRmaComplete, v4): at the
// call's exit; the target, or -1 for every target.
struct RmaCompleteRecord {
  static constexpr RecordKind kKind = RecordKind::kRmaComplete;
  uint64_t time = 0;
  uint16_t cat = 0;
  int32_t target = -1;
  uint32_t window = 0;
  constexpr Record to_record() const { return make_record(kKind, time, cat, target, 0, window); }
  static constexpr RmaCompleteRecord from(const Record& r) { return {r.time, r.cat, r.a, r.comm}; }
  bool operator==(const RmaCompleteRecord&) const = default;
};

// A window was created (kWinCreate, v4, recorded even when paused): its index, its ordinal among
// this rank's windows on the communicator, the communicator, this rank's window size in bytes.
struct WinCreateRecord {
  static constexpr RecordKind kKind = RecordKind::kWinCreate;
  uint64_t time = 0;
  uint16_t cat = 0;
  uint32_t window = 0;
  uint32_t ordinal = 0;
  uint32_t comm = 0;
  uint64_t size = 0;
  constexpr Record to_record() const {
    return make_record(kKind, time, cat, static_cast<int32_t>(window), static_cast<int32_t>(ordinal), comm,
                       size);
  }
  static constexpr WinCreateRecord from(const Record& r) {
    return {r.time, r.cat, static_cast<uint32_t>(r.a), static_cast<uint32_t>(r.b), r.comm, r.c};
  }
  bool operator==(const WinCreateRecord&) const = default;
};

// Every view, one per RecordKind (kRequestPost and kRequestDone share RequestRecord's fields): a
// new kind needs its view here, which the records test checks.
using RecordViews =
    std::tuple<StateRecord, SendRecord, RecvRecord, CollectiveRecord, MarkerRecord, UserEventRecord,
               CommCreateRecord, SendCancelRecord, RequestPostRecord, RequestDoneRecord, CounterRecord,
               RmaOpRecord, RmaCompleteRecord, WinCreateRecord>;

// The kind of a record.
constexpr RecordKind kind_of(const Record& r) { return static_cast<RecordKind>(r.kind); }

// Reads r as the view V; r must be of V's kind.
template <class V>
constexpr V as(const Record& r) {
  return V::from(r);
}

struct Event;
// Reads e as the view V; e must be of V's kind. The view's time is 0: an event's time is
// Event::time, in ns, which a view's ticks cannot hold.
template <class V>
constexpr V as(const Event& e);

// A record as the reader hands it out (interpret_records(), load_trace()): its time corrected to
// ns since the start of the run, its logged fields as they were, which only the views read.
struct Event {
  int64_t time;
  RecordKind kind;
  uint32_t cat;
  int32_t a;
  int32_t b;
  uint32_t comm;
  uint64_t c;
  uint32_t site;  // user events: run-wide call site of the MPE_Log_event call, else 0

  // The event of record r, at time t (ns), with the run-wide call site `site`.
  static constexpr Event of(const Record& r, int64_t t, uint32_t site = 0) {
    return Event{t, kind_of(r), r.cat, r.a, r.b, r.comm, r.c, site};
  }
  // The logged record again, at `ticks`.
  constexpr Record record(uint64_t ticks = 0) const {
    return Record{ticks, static_cast<uint8_t>(kind), 0, static_cast<uint16_t>(cat), a, b, comm, c};
  }
};

template <class V>
constexpr V as(const Event& e) {
  return V::from(e.record());
}

}  // namespace mpe::format
