// A location's records as the reader interprets them (format::interpret_records): its states, the
// points between them, and which request record belongs to which message or collective.
#include <algorithm>

#include "otf2_write_state.h"

namespace mpe::interop::detail {

namespace {

using format::RecordKind;

// Takes what interpret_records() makes of the records. The writer wants what was logged, not the
// reader's model: an MPI call's end from its raw ticks (so that a receive completing at the
// call's exit lands exactly on the Leave, not a rounding nanosecond after it), the message ends
// with their communicator-local peers, and the request and counter records.
struct LocationSink {
  const format::LogFile& log;
  uint32_t rank;
  LocationRecords* out;

  void call(int64_t t, const format::StateRecord& st, uint32_t site) {
    out->states.push_back(Interval{t, log.to_ns(rank, st.time + st.duration), st.cat, st.depth, site});
  }
  void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {  // user states
    out->states.push_back(Interval{start, end, cat, depth, site});
  }
  void event(const format::Event& e) { out->points.push_back(Point{e}); }
  void message_end(bool, const format::MessageKey&, int64_t, uint64_t) {}  // taken in message_record
  void message_record(const format::MessageKey& key, const format::Event& e) {
    out->points.push_back(Point{e, key});
  }
  void unmodelled(const format::Event& e) { out->points.push_back(Point{e}); }
  // As the reader does: the latest send of the key is withdrawn.
  void cancel_send(const format::MessageKey& key) {
    for (size_t k = out->points.size(); k-- > 0;) {
      Point& p = out->points[k];
      if (!p.dropped && p.kind() == RecordKind::kSend && p.message == key) {
        p.dropped = true;
        return;
      }
    }
  }
  void span(int64_t, int64_t) {}
};

bool is_request(const Point& p, RecordKind kind, format::RequestWhat what) {
  return p.kind() == kind && format::as<format::RequestRecord>(p.event).what == what;
}

}  // namespace

Status gather_location(const format::LogFile& log, uint32_t rank, const std::vector<size_t>& chunks,
                       Progress* progress, LocationRecords* out) {
  format::UserStates user_states;
  LocationSink sink{log, rank, out};
  format::LogFile::ChunkScratch scratch;
  std::vector<format::Record> recs;
  for (size_t i : chunks) {
    MPE_RETURN_IF_ERROR(log.read_chunk(i, &scratch, &recs));
    format::interpret_records(log, log.index()[i], recs.data(), recs.size(), &user_states, sink);
    if (progress) progress->advance();
  }
  // A user state begun and never ended stays a point in time: a marker.
  out->unpaired_user = user_states.take_open();
  return Status();
}

void attach_collectives(std::vector<Interval>* states, std::vector<Point>* points) {
  std::unordered_multimap<uint64_t, size_t> by_start;
  for (size_t i = 0; i < states->size(); ++i)
    by_start.emplace(static_cast<uint64_t>((*states)[i].start) * 0x10001ull + (*states)[i].cat, i);
  for (size_t k = 0; k < points->size(); ++k) {
    Point& p = (*points)[k];
    if (p.kind() != RecordKind::kCollective) continue;
    auto range = by_start.equal_range(static_cast<uint64_t>(p.time()) * 0x10001ull + p.event.cat);
    for (auto it = range.first; it != range.second; ++it) {
      Interval& s = (*states)[it->second];
      if (s.start == p.time() && s.cat == p.event.cat && s.collective < 0) {
        s.collective = static_cast<int>(k);
        p.dropped = true;
        break;
      }
    }
  }
}

// A send and a collective are followed by their kRequestPost, a receive preceded by its
// kRequestDone, at the same time (docs/FORMAT.md). The collective's completion carries its
// operation, communicator, root and sizes, hence the map.
std::unordered_map<uint64_t, size_t> attach_requests(std::vector<Point>* points) {
  std::unordered_map<uint64_t, size_t> collectives;
  for (size_t k = 0; k + 1 < points->size(); ++k) {
    Point& a = (*points)[k];
    Point& b = (*points)[k + 1];
    // A collective is "dropped" when attached to its call's state; its request is still its own.
    if (a.kind() == RecordKind::kCollective && !b.dropped && a.time() == b.time() &&
        is_request(b, RecordKind::kRequestPost, format::RequestWhat::kCollective)) {
      a.request = format::as<format::RequestPostRecord>(b.event).serial;
      b.dropped = true;
      collectives[a.request] = k;
      continue;
    }
    if (a.dropped || b.dropped || a.time() != b.time()) continue;
    if (a.kind() == RecordKind::kSend &&
        is_request(b, RecordKind::kRequestPost, format::RequestWhat::kSend)) {
      a.request = format::as<format::RequestPostRecord>(b.event).serial;
      b.dropped = true;
    } else if (is_request(a, RecordKind::kRequestDone, format::RequestWhat::kRecv) &&
               b.kind() == RecordKind::kRecv) {
      b.request = format::as<format::RequestDoneRecord>(a.event).serial;
      a.dropped = true;
    }
  }
  return collectives;
}

}  // namespace mpe::interop::detail
