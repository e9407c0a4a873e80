// Typed views of the log's records: one named struct per RecordKind, made (to_record()) and read
// (from()) here and nowhere else, so that no writer or reader decodes Record::a, b and c by hand.
// The on-disk Record (mpe/log_format.h) does not change: these are views of its fields, and
// every format version reads as before. Making a record costs what make_record() costs (a few
// stores, constexpr): liblog's hot path uses these too.
#pragma once

#include <cstdint>

#include "mpe/log_format.h"

namespace mpe::log {

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
};
struct RequestPostRecord : RequestRecord {
  static constexpr RecordKind kKind = RecordKind::kRequestPost;
  constexpr Record to_record() const { return RequestRecord::to_record(kKind); }
  static constexpr RequestPostRecord from(const Record& r) { return {RequestRecord::from(r)}; }
};
struct RequestDoneRecord : RequestRecord {
  static constexpr RecordKind kKind = RecordKind::kRequestDone;
  constexpr Record to_record() const { return RequestRecord::to_record(kKind); }
  static constexpr RequestDoneRecord from(const Record& r) { return {RequestRecord::from(r)}; }
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
};

// The kind of a record.
constexpr RecordKind kind_of(const Record& r) { return static_cast<RecordKind>(r.kind); }

// Reads r as the view V; r must be of V's kind.
template <class V>
constexpr V as(const Record& r) {
  return V::from(r);
}

}  // namespace mpe::log
