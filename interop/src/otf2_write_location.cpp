// One location's events: its states become Enter/Leave (or CallingContextEnter/Leave when the log
// has call sites), emitted in time order with a nesting stack, and its points the OTF2 events of
// messages, requests, collectives, one-sided transfers, communicator creation and counters.
#include <algorithm>

#include "otf2_common.h"
#include "otf2_write_state.h"

namespace mpe::interop::detail {

namespace {

using format::RecordKind;

class LocationWriter {
 public:
  LocationWriter(ExportState& x, uint32_t rank, uint32_t thread, LocationRecords& recs, OTF2_EvtWriter* w)
      : x_(x),
        rank_(rank),
        loc_(location_ref(rank, thread)),
        states_(recs.states),
        points_(recs.points),
        w_(w) {}

  // Emits every state and point; unpaired user states become markers.
  void write(const std::unordered_map<uint64_t, size_t>& nonblocking,
             const std::vector<std::pair<uint32_t, int64_t>>& unpaired);
  OTF2_ErrorCode error() const { return err_; }
  uint64_t events() const { return events_; }
  uint64_t last_time() const { return last_ts_; }

 private:
  // OTF2 wants non-decreasing timestamps per location; clock correction can make times a few ns
  // negative or (for improperly nested states) out of order, so clamp.
  uint64_t ts(int64_t t) {
    uint64_t u = t < 0 ? 0 : static_cast<uint64_t>(t);
    if (u < last_ts_) u = last_ts_;
    return last_ts_ = u;
  }
  void check(OTF2_ErrorCode e) {
    if (e != OTF2_SUCCESS && err_ == OTF2_SUCCESS) err_ = e;
    ++events_;
  }
  uint32_t comm_ref(uint32_t index) const { return x_.comm_ref(rank_, index); }
  void collective_begin(const Point& c, uint64_t time);
  void collective_end(const Point& c, uint64_t time, uint64_t request);
  void enter(Interval& s, uint64_t t);
  void leave();
  void close_before(int64_t t) {
    while (!open_.empty() && states_[open_.back()].end < t) leave();
  }
  void begin_state(size_t i);
  void write_point(const Point& p, const std::unordered_map<uint64_t, size_t>& nonblocking);
  void write_message(const Point& p, uint64_t t);
  void write_request(const Point& p, uint64_t t, const std::unordered_map<uint64_t, size_t>& nonblocking);
  void write_rma(const Point& p, uint64_t t);

  ExportState& x_;
  const uint32_t rank_;
  const uint64_t loc_;
  std::vector<Interval>& states_;
  std::vector<Point>& points_;
  OTF2_EvtWriter* const w_;
  uint64_t last_ts_ = 0, events_ = 0;
  OTF2_ErrorCode err_ = OTF2_SUCCESS;
  std::vector<size_t> open_;  // the states entered and not left, innermost last
  // The calling context of the last CallingContextEnter, or the parent of the last left.
  uint32_t previous_ = OTF2_UNDEFINED_CALLING_CONTEXT;
  // One-sided: window index -> ref (from this location's kWinCreate records), and the operations
  // waiting for the synchronisation that completes them (matching id = position among them).
  std::unordered_map<uint32_t, OTF2_RmaWinRef> win_of_;
  format::RmaPending rma_pending_;
  uint64_t rma_ops_ = 0;
};

// A collective's start, right after its call's Enter: MpiCollectiveBegin, or for a nonblocking
// one NonBlockingCollectiveRequest (OTF2 pairs it with the Complete, not with an End).
void LocationWriter::collective_begin(const Point& c, uint64_t time) {
  if (c.request)
    check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w_, nullptr, time, c.request));
  else
    check(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, time));
}

// A collective's end: MpiCollectiveEnd in its call, or for a nonblocking one (request != 0)
// NonBlockingCollectiveComplete in the Wait/Test that completed it, as Score-P writes them.
void LocationWriter::collective_end(const Point& p, uint64_t time, uint64_t request) {
  const auto c = format::as<format::CollectiveRecord>(p.event);
  const auto op = collective_op(format::routine_of(x_.log, c.cat)).value_or(OTF2_COLLECTIVE_OP_BARRIER);
  const uint32_t root = c.root < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<uint32_t>(c.root);
  const uint64_t received = c.received > 0 ? static_cast<uint64_t>(c.received) : 0;
  if (request)
    check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w_, nullptr, time, op, comm_ref(c.comm), root, c.sent,
                                                       received, request));
  else
    check(OTF2_EvtWriter_MpiCollectiveEnd(w_, nullptr, time, op, comm_ref(c.comm), root, c.sent, received));
}

void LocationWriter::enter(Interval& s, uint64_t t) {
  if (!x_.use_contexts) {
    check(OTF2_EvtWriter_Enter(w_, nullptr, t, s.cat));
    return;
  }
  s.context = x_.context(open_.empty() ? OTF2_UNDEFINED_CALLING_CONTEXT : states_[open_.back()].context,
                         s.cat, s.site);
  check(OTF2_EvtWriter_CallingContextEnter(w_, nullptr, t, s.context,
                                           x_.unwind_distance(previous_, s.context)));
  previous_ = s.context;
}

void LocationWriter::leave() {
  const Interval& s = states_[open_.back()];
  const uint64_t t = ts(s.end);
  if (s.collective >= 0 && !points_[static_cast<size_t>(s.collective)].request)
    collective_end(points_[static_cast<size_t>(s.collective)], t, 0);
  if (x_.use_contexts) {
    check(OTF2_EvtWriter_CallingContextLeave(w_, nullptr, t, s.context));
    previous_ = x_.contexts[s.context].parent;
  } else {
    check(OTF2_EvtWriter_Leave(w_, nullptr, t, s.cat));
  }
  open_.pop_back();
}

// Enters state i after leaving the open states it does not nest in.
void LocationWriter::begin_state(size_t i) {
  Interval& s = states_[i];
  close_before(s.start);
  while (!open_.empty()) {
    const Interval& top = states_[open_.back()];
    // A call that starts where the open one ends follows it, unless its recorded depth says
    // it is a (zero-length) child at its parent's very end.
    const bool child_at_end = s.depth > top.depth && s.end <= top.end;
    const bool sibling = top.end < s.end || (top.end == s.start && top.start < s.start && !child_at_end);
    if (!sibling) break;
    leave();
  }
  const uint64_t t = ts(s.start);
  enter(s, t);
  if (s.collective >= 0) collective_begin(points_[static_cast<size_t>(s.collective)], t);
  x_.used_cats.insert(s.cat);
  open_.push_back(i);
}

void LocationWriter::write_message(const Point& p, uint64_t t) {
  if (p.kind() == RecordKind::kSend) {
    const auto s = format::as<format::SendRecord>(p.event);
    const auto dest = static_cast<uint32_t>(s.dest), tag = static_cast<uint32_t>(s.tag);
    if (p.request)
      check(OTF2_EvtWriter_MpiIsend(w_, nullptr, t, dest, comm_ref(s.comm), tag, s.bytes, p.request));
    else
      check(OTF2_EvtWriter_MpiSend(w_, nullptr, t, dest, comm_ref(s.comm), tag, s.bytes));
    return;
  }
  const auto v = format::as<format::RecvRecord>(p.event);
  const auto source = static_cast<uint32_t>(v.source), tag = static_cast<uint32_t>(v.tag);
  if (p.request)
    check(OTF2_EvtWriter_MpiIrecv(w_, nullptr, t, source, comm_ref(v.comm), tag, v.bytes, p.request));
  else
    check(OTF2_EvtWriter_MpiRecv(w_, nullptr, t, source, comm_ref(v.comm), tag, v.bytes));
}

// A send's post was folded into its MpiIsend, a receive's completion into its MpiIrecv.
void LocationWriter::write_request(const Point& p, uint64_t t,
                                   const std::unordered_map<uint64_t, size_t>& nonblocking) {
  const auto r = format::as<format::RequestRecord>(p.event);
  if (p.kind() == RecordKind::kRequestPost) {
    if (r.what == format::RequestWhat::kRecv) check(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, t, r.serial));
    return;
  }
  if (r.what == format::RequestWhat::kSend) {
    check(OTF2_EvtWriter_MpiIsendComplete(w_, nullptr, t, r.serial));
  } else if (r.what == format::RequestWhat::kCancelled) {
    check(OTF2_EvtWriter_MpiRequestCancelled(w_, nullptr, t, r.serial));
  } else if (r.what == format::RequestWhat::kCollective) {
    // Without its posting collective (not in this location's records) there is nothing to say
    // what completed: no event.
    const auto c = nonblocking.find(r.serial);
    if (c != nonblocking.end()) collective_end(points_[c->second], t, points_[c->second].request);
  }
}

void LocationWriter::write_rma(const Point& p, uint64_t t) {
  if (p.kind() == RecordKind::kWinCreate) {
    const auto c = format::as<format::WinCreateRecord>(p.event);
    const OTF2_RmaWinRef win = x_.window_id(rank_, c.comm, c.ordinal);
    if (win == OTF2_UNDEFINED_RMA_WIN) return;
    win_of_[c.window] = win;
    x_.used_windows.insert({win, comm_ref(c.comm)});
    check(OTF2_EvtWriter_RmaWinCreate(w_, nullptr, t, win));
  } else if (p.kind() == RecordKind::kRmaComplete) {
    const auto c = format::as<format::RmaCompleteRecord>(p.event);
    const auto win = win_of_.find(c.window);
    if (win != win_of_.end())
      rma_pending_.complete(win->second, c.target, [&](uint64_t id) {
        check(OTF2_EvtWriter_RmaOpCompleteNonBlocking(w_, nullptr, t, win->second, id));
      });
  } else {
    const auto op = format::as<format::RmaOpRecord>(p.event);
    const auto win = win_of_.find(op.window);
    format::RmaKind kind;
    if (win == win_of_.end() || !format::rma_kind_of(format::routine_of(x_.log, op.cat), &kind)) return;
    const uint64_t id = ++rma_ops_, received = op.received > 0 ? static_cast<uint64_t>(op.received) : 0;
    const auto target = static_cast<uint32_t>(op.target);
    if (kind == format::RmaKind::kPut)
      check(OTF2_EvtWriter_RmaPut(w_, nullptr, t, win->second, target, op.sent, id));
    else if (kind == format::RmaKind::kGet)
      check(OTF2_EvtWriter_RmaGet(w_, nullptr, t, win->second, target, received, id));
    else
      check(OTF2_EvtWriter_RmaAtomic(w_, nullptr, t, win->second, target, rma_atomic_type(kind), op.sent,
                                     received, id));
    rma_pending_.issue(win->second, op.target, id);
  }
}

void LocationWriter::write_point(const Point& p, const std::unordered_map<uint64_t, size_t>& nonblocking) {
  const uint64_t t = ts(p.time());
  switch (p.kind()) {
    case RecordKind::kWinCreate:
    case RecordKind::kRmaOp:
    case RecordKind::kRmaComplete:
      write_rma(p, t);
      break;
    case RecordKind::kSend:
    case RecordKind::kRecv:
      write_message(p, t);
      break;
    case RecordKind::kRequestPost:
    case RecordKind::kRequestDone:
      write_request(p, t, nonblocking);
      break;
    case RecordKind::kCollective:  // no call state around it (logging was paused)
      collective_begin(p, t);
      if (!p.request) collective_end(p, t, 0);
      break;
    case RecordKind::kCommCreate: {
      const uint32_t comm = comm_ref(format::as<format::CommCreateRecord>(p.event).comm);
      if (comm != OTF2_UNDEFINED_COMM) check(OTF2_EvtWriter_CommCreate(w_, nullptr, t, comm));
      break;
    }
    case RecordKind::kMarker:
      x_.markers.push_back(ExportMarker{t, loc_, static_cast<uint32_t>(p.kind()), p.event.cat,
                                        format::as<format::MarkerRecord>(p.event).level});
      break;
    case RecordKind::kCounter: {
      const auto c = format::as<format::CounterRecord>(p.event);
      check(x_.metrics.write_event(w_, t, rank_, c,
                                   c.comm == format::kUnknownComm ? OTF2_UNDEFINED_COMM : comm_ref(c.comm)));
      break;
    }
    case RecordKind::kUserEvent:
      x_.markers.push_back(
          ExportMarker{t, loc_, static_cast<uint32_t>(p.kind()), p.event.cat,
                       static_cast<int64_t>(format::as<format::UserEventRecord>(p.event).data)});
      break;
    default:
      break;
  }
}

void LocationWriter::write(const std::unordered_map<uint64_t, size_t>& nonblocking,
                           const std::vector<std::pair<uint32_t, int64_t>>& unpaired) {
  size_t i = 0, p = 0;
  while (i < states_.size() || p < points_.size()) {
    if (p < points_.size() && points_[p].dropped) {
      ++p;
      continue;
    }
    // At equal times the call is entered first: a send is logged at its call's entry.
    if (i < states_.size() && (p >= points_.size() || states_[i].start <= points_[p].time())) {
      begin_state(i++);
    } else {
      close_before(points_[p].time());
      write_point(points_[p++], nonblocking);
    }
  }
  while (!open_.empty()) leave();
  for (const auto& [cat, t] : unpaired)
    x_.markers.push_back(ExportMarker{ts(t), loc_, static_cast<uint32_t>(RecordKind::kUserEvent), cat, 0});
}

}  // namespace

Status ExportState::write_location(uint32_t rank, uint32_t thread, const std::vector<size_t>& chunks,
                                   Progress* progress) {
  LocationRecords recs;
  MPE_RETURN_IF_ERROR(gather_location(log, rank, chunks, progress, &recs));
  // Points first: the states keep indices into them. Stable, so that a request record stays next
  // to the message or collective record it belongs to.
  std::stable_sort(recs.points.begin(), recs.points.end(),
                   [](const Point& a, const Point& b) { return a.time() < b.time(); });
  attach_collectives(&recs.states, &recs.points);
  std::sort(recs.states.begin(), recs.states.end(), [](const Interval& a, const Interval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.depth < b.depth;
  });
  const std::unordered_map<uint64_t, size_t> nonblocking = attach_requests(&recs.points);

  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, location_ref(rank, thread));
  if (!w)
    return otf2_error("cannot get the event writer of rank " + std::to_string(rank), OTF2_ERROR_INVALID_CALL);
  LocationWriter writer(*this, rank, thread, recs, w);
  writer.write(nonblocking, recs.unpaired_user);
  const OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(archive, w);
  locations.push_back(LocationSummary{rank, thread, writer.events(), writer.last_time()});
  if (writer.error() != OTF2_SUCCESS)
    return otf2_error("writing the events of rank " + std::to_string(rank), writer.error());
  if (closed != OTF2_SUCCESS) return otf2_error("closing the events of rank " + std::to_string(rank), closed);
  return Status();
}

}  // namespace mpe::interop::detail
