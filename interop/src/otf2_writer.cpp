// .mpelog -> OTF2. Each location (rank, thread) is built from its chunks alone: records become
// intervals (states, user states paired per thread) and points (messages, collectives, comm
// creation), then Enter/Leave and the point events are emitted in time order with a nesting
// stack. A log with call sites gets them as Score-P writes an unwound stack: calling-context
// trees and CallingContextEnter/Leave instead of Enter/Leave. Nonblocking requests (liblog's
// request records) become OTF2's request events: MpiIsend ... MpiIrecv for messages,
// NonBlockingCollectiveRequest/Complete for collectives. What the log cannot say (request ids of
// persistent requests, receive sizes of collectives) is documented in docs/interop.md.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "mpe/interop.h"
#include "mpe/log_defs.h"
#include "mpe/otf2_export.h"
#include "mpe/rma.h"
#include "otf2_common.h"
#include "otf2_metrics.h"

namespace mpe::interop {

namespace {

using log::Record;
using log::RecordKind;

using detail::location_ref;

struct Interval {
  int64_t start;
  int64_t end;
  uint32_t cat;
  uint32_t depth;
  uint32_t site = 0;    // run-wide call site, 0 when unknown
  int collective = -1;  // index of the collective record this call carried, or -1
  uint32_t context = OTF2_UNDEFINED_CALLING_CONTEXT;  // its calling context (local id), once entered
};

struct Point {
  int64_t time;
  Record rec;
  bool dropped = false;  // attached to its interval, or a cancelled send
  // A send, receive or collective of a nonblocking request: its serial (0: blocking).
  uint64_t request = 0;
};

struct LocationSummary {
  uint32_t rank = 0;
  uint32_t thread = 0;
  uint64_t events = 0;
  uint64_t last_time = 0;
};

struct MarkerRecord {
  uint64_t time = 0;
  uint64_t location = 0;
  uint32_t kind = 0;  // RecordKind::kMarker (MPI_Pcontrol) or kUserEvent
  uint32_t cat = 0;
  int64_t value = 0;  // Pcontrol level, or the user event's data
};

struct CommInfo {
  uint64_t global_id = 0;
  bool inter = false;
  log::MemberList members;
  bool self = false;  // MPI_COMM_SELF: one communicator for every rank, as Score-P defines it
};

// A node of the calling-context tree. A state's context is the chain of its call site's frames,
// outermost first, under the context of the state enclosing it, then the state itself: what
// Score-P writes for a wrapped (MPI) call when it unwinds (frame nodes of paradigm SAMPLING, the
// call site's line on the innermost frame and on the call). Nodes are numbered per process
// (local ids, in the order made, parents first); the root unifies them and every location's
// local definitions carry the mapping.
enum ContextKind : uint32_t { kFrameContext = 0, kStateContext = 1 };
struct ContextNode {
  uint32_t parent = OTF2_UNDEFINED_CALLING_CONTEXT;
  uint32_t kind = kFrameContext;
  uint32_t a = 0;      // frame: frame id (Impl::frames); state: category
  uint32_t b = 0;      // state: run-wide call site, 0 when unknown
  uint32_t depth = 1;  // nodes from the root, this one included
};

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};

}  // namespace

struct Otf2Export::Impl {
  explicit Impl(const log::LogFile& l) : log(l) {
    build_comms();
    build_frames();
  }

  const log::LogFile& log;
  detail::MetricExport metrics{log};  // MPI_T counters as metrics (otf2_metrics.h)
  OTF2_Archive* archive = nullptr;
  std::vector<CommInfo> comms;                 // by OTF2 comm ref
  std::vector<std::vector<uint32_t>> comm_of;  // [rank][per-rank comm index] -> comm ref
  std::vector<LocationSummary> locations;      // written by this process
  std::set<uint32_t> used_cats;
  std::vector<MarkerRecord> markers;
  // Events name regions by category id (local ids); OTF2 wants global region refs dense, so
  // the root numbers the union of the categories used and every location's local definitions
  // carry the mapping table.
  std::vector<uint32_t> region_cats;  // global region ref -> category
  // Call sites (v3 logs). Frames are numbered over the run from LogFile::callsites(), the same
  // on every process that opened the log.
  bool use_contexts = false;                       // the log has call sites
  std::vector<const Frame*> frames;                // frame id -> frame
  std::vector<std::vector<uint32_t>> site_frames;  // run-wide site - 1 -> frame ids, innermost first
  std::vector<ContextNode> contexts;               // local id -> node
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> context_ids;
  // Root, after write_global_definitions: each process's local -> global contexts, by the ref of
  // its first location.
  std::vector<std::pair<uint64_t, std::vector<uint32_t>>> context_maps;

  void build_frames() {
    std::unordered_map<std::string, uint32_t> ids;
    for (const log::CallSite& site : log.callsites()) {
      std::vector<uint32_t> chain;
      for (const Frame& f : site.frames) {
        auto [it, fresh] = ids.try_emplace(callsite_key({f}), static_cast<uint32_t>(frames.size()));
        if (fresh) frames.push_back(&f);
        chain.push_back(it->second);
      }
      site_frames.push_back(std::move(chain));
    }
    use_contexts = !site_frames.empty();
  }

  uint32_t context_node(uint32_t parent, uint32_t kind, uint32_t a, uint32_t b) {
    auto [it, fresh] = context_ids.try_emplace({parent, kind, a, b}, static_cast<uint32_t>(contexts.size()));
    if (fresh)
      contexts.push_back(ContextNode{
          parent, kind, a, b, parent == OTF2_UNDEFINED_CALLING_CONTEXT ? 1 : contexts[parent].depth + 1});
    return it->second;
  }

  // The context of a state of category `cat` at call site `site` inside context `parent`.
  uint32_t context(uint32_t parent, uint32_t cat, uint32_t site) {
    if (site >= 1 && site <= site_frames.size()) {
      const auto& chain = site_frames[site - 1];
      for (size_t k = chain.size(); k-- > 0;) parent = context_node(parent, kFrameContext, chain[k], 0);
    }
    return context_node(parent, kStateContext, cat, site);
  }

  // OTF2's unwind distance of entering `next` after the calling context `previous`: the nodes
  // newly entered (those of next's path below the deepest node the two share) plus one, the
  // shared node that made progress (possibly the undefined root).
  uint32_t unwind_distance(uint32_t previous, uint32_t next) const {
    auto depth = [&](uint32_t c) { return c == OTF2_UNDEFINED_CALLING_CONTEXT ? 0u : contexts[c].depth; };
    uint32_t a = next, b = previous;
    while (depth(a) > depth(b)) a = contexts[a].parent;
    while (depth(b) > depth(a)) b = contexts[b].parent;
    while (a != b) a = contexts[a].parent, b = contexts[b].parent;
    return depth(next) - depth(a) + 1;
  }

  // Every rank's MPI_COMM_SELF (id (1 << 62) | rank, the rank alone) becomes one communicator
  // with a group of type COMM_SELF, as in Score-P's archives.
  void build_comms() {
    std::map<uint64_t, uint32_t> ref_of;
    std::optional<uint32_t> self_ref;
    const auto& ranks = log.definitions().ranks;
    comm_of.resize(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r)
      for (const auto& c : ranks[r].comms) {
        const auto rank = static_cast<int32_t>(r);
        const bool self =
            !c.inter && c.global_id == ((1ull << 62) | r) && c.members.size() == 1 && c.members[0] == rank;
        uint32_t ref = static_cast<uint32_t>(comms.size());
        if (self && self_ref) {
          ref = *self_ref;
        } else if (self) {
          self_ref = ref;
          comms.push_back(CommInfo{c.global_id, false, {}, true});
        } else {
          auto [it, fresh] = ref_of.try_emplace(c.global_id, ref);
          if (fresh) comms.push_back(CommInfo{c.global_id, c.inter, c.members});
          ref = it->second;
        }
        if (comm_of[r].size() <= c.index) comm_of[r].resize(c.index + 1, OTF2_UNDEFINED_COMM);
        comm_of[r][c.index] = ref;
      }
  }

  uint32_t comm_ref(uint32_t rank, uint32_t index) const {
    if (rank >= comm_of.size() || index >= comm_of[rank].size()) return OTF2_UNDEFINED_COMM;
    return comm_of[rank][index];
  }

  // One-sided windows. Events name a window by its communicator's ref and its ordinal on it (what
  // liblog's kWinCreate records say, the same on every member), so every process names it alike
  // without asking the others; the root numbers the windows the summaries list densely (OTF2
  // tools want dense refs) and every location's local definitions carry the mapping table.
  std::set<std::pair<uint32_t, uint32_t>> used_windows;  // (local window id, comm ref)
  std::vector<uint32_t> window_ids;                      // root: global window ref -> local id
  static constexpr int kWindowBits = 8;                  // windows per communicator: 256
  uint32_t window_id(uint32_t rank, uint32_t comm_index, int32_t ordinal) const {
    const uint32_t c = comm_ref(rank, comm_index);
    if (c == OTF2_UNDEFINED_COMM || c >> (32 - kWindowBits) || ordinal < 0 || ordinal >> kWindowBits)
      return OTF2_UNDEFINED_RMA_WIN;
    return c << kWindowBits | static_cast<uint32_t>(ordinal);
  }

  Status write_location(uint32_t rank, uint32_t thread, const std::vector<size_t>& chunks,
                        Progress* progress);
};

namespace {

// Reads one location's chunks into intervals and points.
Status gather_location(const log::LogFile& log, uint32_t rank, const std::vector<size_t>& chunks,
                       Progress* progress, std::vector<Interval>* states, std::vector<Point>* points,
                       std::vector<std::pair<uint32_t, int64_t>>* unpaired_user) {
  log::UserStates user_states;
  const bool has_sites = log.version() >= log::kFirstCallsiteVersion;
  auto site_of = [&](const Record& r) {
    return has_sites ? log.callsite(rank, static_cast<uint32_t>(r.b)) : 0;
  };
  for (size_t i : chunks) {
    auto recs = log.read_chunk(i);
    if (!recs.ok()) return recs.status();
    for (const Record& r : *recs) {
      const int64_t t = log.to_ns(rank, r.time);
      switch (static_cast<RecordKind>(r.kind)) {
        case RecordKind::kState:
          // The end from the raw end time, so that a receive completing at the call's exit
          // lands exactly on the Leave, not a rounding nanosecond after it.
          states->push_back(
              Interval{t, log.to_ns(rank, r.time + r.c), r.cat, static_cast<uint32_t>(r.a), site_of(r)});
          break;
        case RecordKind::kUserEvent: {
          log::UserStates::Closed c;
          const auto fed = user_states.feed(log, r.cat, t, site_of(r), &c);
          if (fed == log::UserStates::Fed::kEnded)
            states->push_back(Interval{c.start, t, c.cat, c.depth, c.site});
          if (fed == log::UserStates::Fed::kLone) points->push_back(Point{t, r});
          break;
        }
        case RecordKind::kSendCancel:
          for (size_t k = points->size(); k-- > 0;) {
            Point& p = (*points)[k];
            if (!p.dropped && p.rec.kind == static_cast<uint8_t>(RecordKind::kSend) && p.rec.a == r.a &&
                p.rec.b == r.b && p.rec.comm == r.comm) {
              p.dropped = true;
              break;
            }
          }
          break;
        default:
          points->push_back(Point{t, r});
          break;
      }
    }
    if (progress) progress->advance();
  }
  // A user state begun and never ended stays a point in time: a marker.
  *unpaired_user = user_states.take_open();
  return Status();
}

// Attaches each collective record to the call that carried it (same start and category), so
// that MpiCollectiveBegin/End sit inside its Enter/Leave.
void attach_collectives(std::vector<Interval>* states, std::vector<Point>* points) {
  std::unordered_multimap<uint64_t, size_t> by_start;
  for (size_t i = 0; i < states->size(); ++i)
    by_start.emplace(static_cast<uint64_t>((*states)[i].start) * 0x10001ull + (*states)[i].cat, i);
  for (size_t k = 0; k < points->size(); ++k) {
    Point& p = (*points)[k];
    if (p.rec.kind != static_cast<uint8_t>(RecordKind::kCollective)) continue;
    auto range = by_start.equal_range(static_cast<uint64_t>(p.time) * 0x10001ull + p.rec.cat);
    for (auto it = range.first; it != range.second; ++it) {
      Interval& s = (*states)[it->second];
      if (s.start == p.time && s.cat == p.rec.cat && s.collective < 0) {
        s.collective = static_cast<int>(k);
        p.dropped = true;
        break;
      }
    }
  }
}

// Gives each message end and collective of a nonblocking request its request serial: a send and
// a collective are followed by their kRequestPost, a receive preceded by its kRequestDone, at the
// same time (docs/FORMAT.md). The request record that was folded into the message or collective
// is dropped. Returns each nonblocking collective's point by serial, for its completion, which
// carries the collective's operation, communicator, root and sizes.
std::unordered_map<uint64_t, size_t> attach_requests(std::vector<Point>* points) {
  auto is = [](const Point& p, RecordKind k, log::RequestWhat w) {
    return p.rec.kind == static_cast<uint8_t>(k) && p.rec.b == static_cast<int32_t>(w);
  };
  std::unordered_map<uint64_t, size_t> collectives;
  for (size_t k = 0; k + 1 < points->size(); ++k) {
    Point& a = (*points)[k];
    Point& b = (*points)[k + 1];
    // A collective is "dropped" when attached to its call's state; its request is still its own.
    if (a.rec.kind == static_cast<uint8_t>(RecordKind::kCollective) && !b.dropped && a.time == b.time &&
        is(b, RecordKind::kRequestPost, log::RequestWhat::kCollective)) {
      a.request = static_cast<uint32_t>(b.rec.a);
      b.dropped = true;
      collectives[a.request] = k;
      continue;
    }
    if (a.dropped || b.dropped || a.time != b.time) continue;
    if (a.rec.kind == static_cast<uint8_t>(RecordKind::kSend) &&
        is(b, RecordKind::kRequestPost, log::RequestWhat::kSend)) {
      a.request = static_cast<uint32_t>(b.rec.a);
      b.dropped = true;
    } else if (is(a, RecordKind::kRequestDone, log::RequestWhat::kRecv) &&
               b.rec.kind == static_cast<uint8_t>(RecordKind::kRecv)) {
      b.request = static_cast<uint32_t>(a.rec.a);
      a.dropped = true;
    }
  }
  return collectives;
}

}  // namespace

Status Otf2Export::Impl::write_location(uint32_t rank, uint32_t thread, const std::vector<size_t>& chunks,
                                        Progress* progress) {
  std::vector<Interval> states;
  std::vector<Point> points;
  std::vector<std::pair<uint32_t, int64_t>> unpaired;
  MPE_RETURN_IF_ERROR(gather_location(log, rank, chunks, progress, &states, &points, &unpaired));
  // Points first: the states keep indices into them. Stable, so that a request record stays next
  // to the message or collective record it belongs to.
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.time < b.time; });
  attach_collectives(&states, &points);
  std::sort(states.begin(), states.end(), [](const Interval& a, const Interval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.depth < b.depth;
  });
  const std::unordered_map<uint64_t, size_t> nonblocking = attach_requests(&points);

  const uint64_t loc = location_ref(rank, thread);
  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc);
  if (!w)
    return detail::otf2_error("cannot get the event writer of rank " + std::to_string(rank),
                              OTF2_ERROR_INVALID_CALL);
  uint64_t last_ts = 0, events = 0;
  OTF2_ErrorCode err = OTF2_SUCCESS;
  // OTF2 wants non-decreasing timestamps per location; clock correction can make times a few ns
  // negative or (for improperly nested states) out of order, so clamp.
  auto ts = [&](int64_t t) {
    uint64_t u = t < 0 ? 0 : static_cast<uint64_t>(t);
    if (u < last_ts) u = last_ts;
    return last_ts = u;
  };
  auto check = [&](OTF2_ErrorCode e) {
    if (e != OTF2_SUCCESS && err == OTF2_SUCCESS) err = e;
    ++events;
  };
  // A collective's end: MpiCollectiveEnd in its call, or for a nonblocking one (request != 0)
  // NonBlockingCollectiveComplete in the Wait/Test that completed it, as Score-P writes them.
  auto collective_end = [&](const Record& c, uint64_t time, uint64_t request) {
    const auto op = detail::collective_op(log::routine_of(log, c.cat)).value_or(OTF2_COLLECTIVE_OP_BARRIER);
    const uint32_t root = c.a < 0 ? OTF2_UNDEFINED_UINT32 : static_cast<uint32_t>(c.a);
    const uint64_t received = c.b > 0 ? static_cast<uint64_t>(c.b) : 0;
    if (request)
      check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, time, op, comm_ref(rank, c.comm), root,
                                                         c.c, received, request));
    else
      check(
          OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, time, op, comm_ref(rank, c.comm), root, c.c, received));
  };
  // A collective's start, right after its call's Enter: MpiCollectiveBegin, or for a nonblocking
  // one NonBlockingCollectiveRequest (OTF2 pairs it with the Complete, not with an End).
  auto collective_begin = [&](const Point& c, uint64_t time) {
    if (c.request)
      check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, time, c.request));
    else
      check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, time));
  };
  std::vector<size_t> open;
  // The calling context of the last CallingContextEnter, or the parent of the last left.
  uint32_t previous = OTF2_UNDEFINED_CALLING_CONTEXT;
  auto enter = [&](Interval& s, uint64_t t) {
    if (!use_contexts) {
      check(OTF2_EvtWriter_Enter(w, nullptr, t, s.cat));
      return;
    }
    s.context =
        context(open.empty() ? OTF2_UNDEFINED_CALLING_CONTEXT : states[open.back()].context, s.cat, s.site);
    check(OTF2_EvtWriter_CallingContextEnter(w, nullptr, t, s.context, unwind_distance(previous, s.context)));
    previous = s.context;
  };
  auto leave = [&]() {
    const Interval& s = states[open.back()];
    const uint64_t t = ts(s.end);
    if (s.collective >= 0 && !points[static_cast<size_t>(s.collective)].request)
      collective_end(points[static_cast<size_t>(s.collective)].rec, t, 0);
    if (use_contexts) {
      check(OTF2_EvtWriter_CallingContextLeave(w, nullptr, t, s.context));
      previous = contexts[s.context].parent;
    } else {
      check(OTF2_EvtWriter_Leave(w, nullptr, t, s.cat));
    }
    open.pop_back();
  };
  auto close_before = [&](int64_t t) {
    while (!open.empty() && states[open.back()].end < t) leave();
  };
  // One-sided: window index -> ref (from this location's kWinCreate records), and the operations
  // waiting for the synchronisation that completes them (matching id = position among them).
  std::unordered_map<uint32_t, OTF2_RmaWinRef> win_of;
  log::RmaPending rma_pending;
  uint64_t rma_ops = 0;
  auto rma_op = [&](const Record& r, uint64_t t) {
    const auto win = win_of.find(r.comm);
    log::RmaKind kind;
    if (win == win_of.end() || !log::rma_kind_of(log::routine_of(log, r.cat), &kind)) return;
    const uint64_t id = ++rma_ops, received = r.b > 0 ? static_cast<uint64_t>(r.b) : 0;
    const auto target = static_cast<uint32_t>(r.a);
    if (kind == log::RmaKind::kPut)
      check(OTF2_EvtWriter_RmaPut(w, nullptr, t, win->second, target, r.c, id));
    else if (kind == log::RmaKind::kGet)
      check(OTF2_EvtWriter_RmaGet(w, nullptr, t, win->second, target, received, id));
    else
      check(OTF2_EvtWriter_RmaAtomic(w, nullptr, t, win->second, target, detail::rma_atomic_type(kind), r.c,
                                     received, id));
    rma_pending.issue(win->second, r.a, id);
  };
  auto write_point = [&](const Point& p) {
    const Record& r = p.rec;
    const uint64_t t = ts(p.time);
    switch (static_cast<RecordKind>(r.kind)) {
      case RecordKind::kWinCreate: {
        const OTF2_RmaWinRef win = window_id(rank, r.comm, r.b);
        if (win == OTF2_UNDEFINED_RMA_WIN) break;
        win_of[static_cast<uint32_t>(r.a)] = win;
        used_windows.insert({win, comm_ref(rank, r.comm)});
        check(OTF2_EvtWriter_RmaWinCreate(w, nullptr, t, win));
        break;
      }
      case RecordKind::kRmaOp:
        rma_op(r, t);
        break;
      case RecordKind::kRmaComplete: {
        const auto win = win_of.find(r.comm);
        if (win != win_of.end())
          rma_pending.complete(win->second, r.a, [&](uint64_t id) {
            check(OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, nullptr, t, win->second, id));
          });
        break;
      }
      case RecordKind::kSend:
        if (p.request)
          check(OTF2_EvtWriter_MpiIsend(w, nullptr, t, static_cast<uint32_t>(r.a), comm_ref(rank, r.comm),
                                        static_cast<uint32_t>(r.b), r.c, p.request));
        else
          check(OTF2_EvtWriter_MpiSend(w, nullptr, t, static_cast<uint32_t>(r.a), comm_ref(rank, r.comm),
                                       static_cast<uint32_t>(r.b), r.c));
        break;
      case RecordKind::kRecv:
        if (p.request)
          check(OTF2_EvtWriter_MpiIrecv(w, nullptr, t, static_cast<uint32_t>(r.a), comm_ref(rank, r.comm),
                                        static_cast<uint32_t>(r.b), r.c, p.request));
        else
          check(OTF2_EvtWriter_MpiRecv(w, nullptr, t, static_cast<uint32_t>(r.a), comm_ref(rank, r.comm),
                                       static_cast<uint32_t>(r.b), r.c));
        break;
      case RecordKind::kRequestPost:  // a send's was folded into its MpiIsend
        if (r.b == static_cast<int32_t>(log::RequestWhat::kRecv))
          check(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, static_cast<uint32_t>(r.a)));
        break;
      case RecordKind::kRequestDone:  // a receive's was folded into its MpiIrecv
        if (r.b == static_cast<int32_t>(log::RequestWhat::kSend)) {
          check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, static_cast<uint32_t>(r.a)));
        } else if (r.b == static_cast<int32_t>(log::RequestWhat::kCancelled)) {
          check(OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, t, static_cast<uint32_t>(r.a)));
        } else if (r.b == static_cast<int32_t>(log::RequestWhat::kCollective)) {
          // Without its posting collective (not in this location's records) there is nothing to
          // say what completed: no event.
          const auto c = nonblocking.find(static_cast<uint32_t>(r.a));
          if (c != nonblocking.end()) collective_end(points[c->second].rec, t, points[c->second].request);
        }
        break;
      case RecordKind::kCollective:  // no call state around it (logging was paused)
        collective_begin(p, t);
        if (!p.request) collective_end(r, t, 0);
        break;
      case RecordKind::kCommCreate:
        if (comm_ref(rank, r.comm) != OTF2_UNDEFINED_COMM)
          check(OTF2_EvtWriter_CommCreate(w, nullptr, t, comm_ref(rank, r.comm)));
        break;
      case RecordKind::kMarker:
        markers.push_back(MarkerRecord{t, loc, r.kind, r.cat, r.a});
        break;
      case RecordKind::kCounter:
        check(metrics.write_event(
            w, t, rank, r, r.comm == log::kUnknownComm ? OTF2_UNDEFINED_COMM : comm_ref(rank, r.comm)));
        break;
      case RecordKind::kUserEvent:
        markers.push_back(MarkerRecord{t, loc, r.kind, r.cat, static_cast<int64_t>(r.c)});
        break;
      default:
        break;
    }
  };

  size_t i = 0, p = 0;
  while (i < states.size() || p < points.size()) {
    if (p < points.size() && points[p].dropped) {
      ++p;
      continue;
    }
    // At equal times the call is entered first: a send is logged at its call's entry.
    if (i < states.size() && (p >= points.size() || states[i].start <= points[p].time)) {
      Interval& s = states[i];
      close_before(s.start);
      while (!open.empty()) {
        const Interval& top = states[open.back()];
        // A call that starts where the open one ends follows it, unless its recorded depth says
        // it is a (zero-length) child at its parent's very end.
        const bool child_at_end = s.depth > top.depth && s.end <= top.end;
        const bool sibling = top.end < s.end || (top.end == s.start && top.start < s.start && !child_at_end);
        if (!sibling) break;
        leave();
      }
      const uint64_t t = ts(s.start);
      enter(s, t);
      if (s.collective >= 0) collective_begin(points[static_cast<size_t>(s.collective)], t);
      used_cats.insert(s.cat);
      open.push_back(i++);
    } else {
      close_before(points[p].time);
      write_point(points[p++]);
    }
  }
  while (!open.empty()) leave();
  for (const auto& [cat, t] : unpaired) markers.push_back(MarkerRecord{ts(t), loc, 6, cat, 0});

  const OTF2_ErrorCode closed = OTF2_Archive_CloseEvtWriter(archive, w);
  locations.push_back(LocationSummary{rank, thread, events, last_ts});
  if (err != OTF2_SUCCESS)
    return detail::otf2_error("writing the events of rank " + std::to_string(rank), err);
  if (closed != OTF2_SUCCESS)
    return detail::otf2_error("closing the events of rank " + std::to_string(rank), closed);
  return Status();
}

Otf2Export::Otf2Export(const log::LogFile& log) : impl_(new Impl(log)) { detail::capture_otf2_errors(); }

Otf2Export::~Otf2Export() {
  if (impl_->archive) OTF2_Archive_Close(impl_->archive);
  delete impl_;
}

Status Otf2Export::create(const std::string& dir) {
  impl_->archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                     OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!impl_->archive)
    return detail::otf2_error("cannot create the OTF2 archive " + dir, OTF2_ERROR_FILE_INTERACTION);
  OTF2_ErrorCode e = OTF2_Archive_SetFlushCallbacks(impl_->archive, &kFlushCallbacks, nullptr);
  if (e == OTF2_SUCCESS) e = OTF2_Archive_SetCreator(impl_->archive, "mpe-tools");
  if (e == OTF2_SUCCESS)
    e = OTF2_Archive_SetDescription(impl_->archive, impl_->log.definitions().program.c_str());
  if (e != OTF2_SUCCESS) return detail::otf2_error("setting up the OTF2 archive " + dir, e);
  return Status();
}

Status Otf2Export::set_collectives(const CollectiveSetup& setup) {
  const OTF2_ErrorCode e =
      setup ? setup(impl_->archive) : OTF2_Archive_SetSerialCollectiveCallbacks(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("installing the OTF2 collective callbacks", e);
}

Status Otf2Export::open(const std::string& dir, const CollectiveSetup& setup) {
  MPE_RETURN_IF_ERROR(create(dir));
  return set_collectives(setup);
}

Status Otf2Export::open_event_files() {
  const OTF2_ErrorCode e = OTF2_Archive_OpenEvtFiles(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("opening the OTF2 event files", e);
}

Status Otf2Export::write_rank_events(uint32_t rank, Progress* progress) {
  const auto& index = impl_->log.index();
  const auto& defs = impl_->log.definitions();
  // Every thread the rank defined gets a location, even without events, and thread 0 always
  // (it stands for the rank in the communicators' location group).
  std::set<uint32_t> threads = {0};
  if (rank < defs.ranks.size())
    for (const auto& t : defs.ranks[rank].threads) threads.insert(t.index);
  // The index is ordered by rank and thread in liblog's files, but a reader must not rely on it
  // (`mpe merge --recover` and `mpe synth` interleave): collect each thread's chunks.
  std::map<uint32_t, std::vector<size_t>> chunks;
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i].rank != rank) continue;
    chunks[index[i].thread].push_back(i);
    threads.insert(index[i].thread);
  }
  Status first_error;
  for (uint32_t t : threads) {
    const Status s = impl_->write_location(rank, t, chunks[t], progress);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

Status Otf2Export::close_event_files() {
  const OTF2_ErrorCode e = OTF2_Archive_CloseEvtFiles(impl_->archive);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("closing the OTF2 event files", e);
}

std::string Otf2Export::summary() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(impl_->locations.size()));
  for (const auto& l : impl_->locations) {
    w.u32(l.rank);
    w.u32(l.thread);
    w.u64(l.events);
    w.u64(l.last_time);
  }
  w.u32(static_cast<uint32_t>(impl_->used_cats.size()));
  for (uint32_t c : impl_->used_cats) w.u32(c);
  w.u32(static_cast<uint32_t>(impl_->markers.size()));
  for (const auto& m : impl_->markers) {
    w.u64(m.time);
    w.u64(m.location);
    w.u32(m.kind);
    w.u32(m.cat);
    w.i64(m.value);
  }
  // The calling contexts this process's events use, named by its first location.
  const auto& locs = impl_->locations;
  w.u64(locs.empty() ? ~0ull : location_ref(locs.front().rank, locs.front().thread));
  w.u32(static_cast<uint32_t>(impl_->contexts.size()));
  for (const auto& c : impl_->contexts) {
    w.u32(c.parent);
    w.u32(c.kind);
    w.u32(c.a);
    w.u32(c.b);
  }
  w.u32(static_cast<uint32_t>(impl_->used_windows.size()));
  for (const auto& [win, comm] : impl_->used_windows) {
    w.u32(win);
    w.u32(comm);
  }
  return std::move(w.data());
}

namespace {

// One process's calling contexts, as its summary lists them.
struct ProcessContexts {
  uint64_t key = 0;  // the ref of its first location
  std::vector<ContextNode> nodes;
};

Status parse_summary(const std::string& s, std::vector<LocationSummary>* locs, std::set<uint32_t>* cats,
                     std::vector<MarkerRecord>* markers, ProcessContexts* contexts,
                     std::set<std::pair<uint32_t, uint32_t>>* windows) {
  ByteReader r(s.data(), s.size());
  const Status bad(StatusCode::kCorrupt, "a malformed OTF2 export summary");
  uint32_t n = 0;
  if (!r.u32(&n) || n > r.left() / 24) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    LocationSummary l;
    if (!r.u32(&l.rank) || !r.u32(&l.thread) || !r.u64(&l.events) || !r.u64(&l.last_time)) return bad;
    locs->push_back(l);
  }
  if (!r.u32(&n) || n > r.left() / 4) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t c = 0;
    if (!r.u32(&c)) return bad;
    cats->insert(c);
  }
  if (!r.u32(&n) || n > r.left() / 32) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    MarkerRecord m;
    if (!r.u64(&m.time) || !r.u64(&m.location) || !r.u32(&m.kind) || !r.u32(&m.cat) || !r.i64(&m.value))
      return bad;
    markers->push_back(m);
  }
  if (!r.u64(&contexts->key) || !r.u32(&n) || n > r.left() / 16) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    ContextNode c;
    if (!r.u32(&c.parent) || !r.u32(&c.kind) || !r.u32(&c.a) || !r.u32(&c.b)) return bad;
    contexts->nodes.push_back(c);
  }
  if (!r.u32(&n) || n > r.left() / 8) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t win = 0, comm = 0;
    if (!r.u32(&win) || !r.u32(&comm)) return bad;
    windows->insert({win, comm});
  }
  return Status();
}

// Global string table: written first, referenced by everything after.
class Strings {
 public:
  OTF2_StringRef ref(const std::string& s) {
    auto [it, fresh] = refs_.try_emplace(s, static_cast<OTF2_StringRef>(order_.size()));
    if (fresh) order_.push_back(s);
    return it->second;
  }
  OTF2_ErrorCode write(OTF2_GlobalDefWriter* w) const {
    for (size_t i = 0; i < order_.size(); ++i)
      if (OTF2_ErrorCode e =
              OTF2_GlobalDefWriter_WriteString(w, static_cast<OTF2_StringRef>(i), order_[i].c_str());
          e != OTF2_SUCCESS)
        return e;
    return OTF2_SUCCESS;
  }

 private:
  std::map<std::string, OTF2_StringRef> refs_;
  std::vector<std::string> order_;
};

std::string color_description(const log::LogFile& log, uint32_t cat) {
  const log::Category* c = log.category(cat);
  if (!c) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "color #%06x", c->color & 0xFFFFFF);
  return buf;
}

// The calling contexts of every process unified into one tree (equal paths are one node), and
// each process's local -> global map, in the order of `processes`.
Status unify_contexts(const std::vector<ProcessContexts>& processes, const std::set<uint32_t>& cats,
                      size_t nframes, size_t nsites, std::vector<ContextNode>* global,
                      std::vector<std::pair<uint64_t, std::vector<uint32_t>>>* maps) {
  const Status bad(StatusCode::kCorrupt, "a malformed calling context in an OTF2 export summary");
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> ids;
  maps->clear();
  for (const auto& p : processes) {
    std::vector<uint32_t> map;
    for (size_t k = 0; k < p.nodes.size(); ++k) {
      ContextNode c = p.nodes[k];
      const bool valid = c.kind == kFrameContext
                             ? c.a < nframes
                             : c.kind == kStateContext && cats.count(c.a) && c.b <= nsites;
      if (!valid || (c.parent != OTF2_UNDEFINED_CALLING_CONTEXT && c.parent >= k)) return bad;
      if (c.parent != OTF2_UNDEFINED_CALLING_CONTEXT) c.parent = map[c.parent];
      c.depth = c.parent == OTF2_UNDEFINED_CALLING_CONTEXT ? 1 : (*global)[c.parent].depth + 1;
      auto [it, fresh] = ids.try_emplace({c.parent, c.kind, c.a, c.b}, static_cast<uint32_t>(global->size()));
      if (fresh) global->push_back(c);
      map.push_back(it->second);
    }
    maps->emplace_back(p.key, std::move(map));
  }
  return Status();
}

std::string comm_name(const CommInfo& c, size_t world_size) {
  if (c.global_id == 0) return "MPI_COMM_WORLD";
  if (c.self) return "MPI_COMM_SELF";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %016llx (%zu of %zu ranks)", c.inter ? "intercomm" : "comm",
                static_cast<unsigned long long>(c.global_id), c.members.size(), world_size);
  return buf;
}

}  // namespace

Status Otf2Export::write_global_definitions(const std::vector<std::string>& summaries) {
  std::vector<LocationSummary> locs;
  std::set<uint32_t> cats;
  std::vector<MarkerRecord> markers;
  std::vector<ProcessContexts> process_contexts(summaries.size());
  std::set<std::pair<uint32_t, uint32_t>> windows;  // (window ref, comm ref)
  for (size_t i = 0; i < summaries.size(); ++i)
    MPE_RETURN_IF_ERROR(parse_summary(summaries[i], &locs, &cats, &markers, &process_contexts[i], &windows));
  std::sort(locs.begin(), locs.end(), [](const LocationSummary& a, const LocationSummary& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.thread < b.thread;
  });
  const log::LogFile& log = impl_->log;
  const log::Definitions& d = log.definitions();
  uint64_t trace_end = 0;
  for (const auto& l : locs) trace_end = std::max(trace_end, l.last_time);
  impl_->region_cats.assign(cats.begin(), cats.end());
  std::vector<ContextNode> contexts;
  MPE_RETURN_IF_ERROR(unify_contexts(process_contexts, cats, impl_->frames.size(), impl_->site_frames.size(),
                                     &contexts, &impl_->context_maps));

  // Every reference below is to a definition written before it, strings first.
  Strings str;
  str.ref("");
  // Call sites: a region per function of a frame (after the categories' regions), a source code
  // location per (file, line), and each context's region and source code location.
  std::map<std::pair<std::string, std::string>, OTF2_RegionRef> frame_region_of;
  std::vector<const Frame*> frame_regions;  // by region ref - region_cats.size()
  std::map<std::pair<std::string, int>, OTF2_SourceCodeLocationRef> scl_of;
  std::vector<std::pair<std::string, int>> scls;
  auto scl = [&](const Frame& f) {
    if (f.file.empty() || f.line <= 0) return OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
    auto [it, fresh] =
        scl_of.try_emplace({f.file, f.line}, static_cast<OTF2_SourceCodeLocationRef>(scls.size()));
    if (fresh) scls.emplace_back(f.file, f.line), str.ref(f.file);
    return it->second;
  };
  std::vector<OTF2_RegionRef> context_region(contexts.size());
  std::vector<OTF2_SourceCodeLocationRef> context_scl(contexts.size());
  if (!contexts.empty())
    str.ref(detail::kModuleProperty), str.ref(detail::kOffsetProperty), str.ref(detail::kAddressProperty);
  for (size_t k = 0; k < contexts.size(); ++k) {
    const ContextNode& c = contexts[k];
    if (c.kind == kFrameContext) {
      const Frame& f = *impl_->frames[c.a];
      auto [it, fresh] = frame_region_of.try_emplace(
          {f.function, f.file},
          static_cast<OTF2_RegionRef>(impl_->region_cats.size() + frame_regions.size()));
      if (fresh) frame_regions.push_back(&f), str.ref(f.function), str.ref(f.file);
      if (!f.module.empty()) str.ref(f.module);
      context_region[k] = it->second;
      context_scl[k] = scl(f);
    } else {
      const auto& rc = impl_->region_cats;
      context_region[k] =
          static_cast<OTF2_RegionRef>(std::lower_bound(rc.begin(), rc.end(), c.a) - rc.begin());
      const auto* chain = c.b ? &impl_->site_frames[c.b - 1] : nullptr;
      context_scl[k] = chain && !chain->empty() ? scl(*impl_->frames[chain->front()])
                                                : OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
    }
  }
  std::vector<std::pair<std::string, uint32_t>> hosts;  // name, node ref
  std::vector<uint32_t> node_of_rank(d.ranks.size(), 0);
  for (size_t r = 0; r < d.ranks.size(); ++r) {
    const std::string host = d.ranks[r].host.empty() ? "unknown host" : d.ranks[r].host;
    auto it = std::find_if(hosts.begin(), hosts.end(), [&](const auto& h) { return h.first == host; });
    if (it == hosts.end()) it = hosts.insert(hosts.end(), {host, static_cast<uint32_t>(hosts.size() + 1)});
    node_of_rank[r] = it->second;
  }
  const OTF2_StringRef s_machine = str.ref("machine"), s_node = str.ref("node");
  for (const auto& h : hosts) str.ref(h.first);
  for (size_t r = 0; r < d.world_size; ++r) str.ref("MPI Rank " + std::to_string(r));
  for (const auto& l : locs) str.ref(l.thread == 0 ? "Master thread" : "Thread " + std::to_string(l.thread));
  for (uint32_t c : cats) str.ref(log.category_name(c)), str.ref(color_description(log, c));
  str.ref("MPI_COMM_WORLD locations");
  for (const auto& c : impl_->comms) str.ref(comm_name(c, d.world_size));
  auto window_name = [&](uint32_t win, uint32_t comm) {
    return "window " + std::to_string(win & ((1u << Impl::kWindowBits) - 1)) + " of " +
           (comm < impl_->comms.size() ? comm_name(impl_->comms[comm], d.world_size) : std::string("?"));
  };
  for (const auto& [win, comm] : windows) str.ref(window_name(win, comm));
  impl_->window_ids.clear();
  for (const auto& [win, comm] : windows) impl_->window_ids.push_back(win);

  impl_->metrics.strings([&](const std::string& s) { return str.ref(s); });

  OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(impl_->archive);
  if (!w) return detail::otf2_error("cannot get the global definition writer", OTF2_ERROR_INVALID_CALL);
  OTF2_ErrorCode e =
      OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ull, 0, trace_end + 1, OTF2_UNDEFINED_TIMESTAMP);
  if (e == OTF2_SUCCESS) e = str.write(w);
  if (e == OTF2_SUCCESS)
    e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (const auto& h : hosts)
    if (e == OTF2_SUCCESS)
      e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, h.second, str.ref(h.first), s_node, 0);
  for (uint32_t r = 0; r < d.world_size && e == OTF2_SUCCESS; ++r)
    e = OTF2_GlobalDefWriter_WriteLocationGroup(
        w, r, str.ref("MPI Rank " + std::to_string(r)), OTF2_LOCATION_GROUP_TYPE_PROCESS,
        r < node_of_rank.size() ? node_of_rank[r] : 0, OTF2_UNDEFINED_LOCATION_GROUP);
  for (const auto& l : locs)
    if (e == OTF2_SUCCESS)
      e = OTF2_GlobalDefWriter_WriteLocation(
          w, location_ref(l.rank, l.thread),
          str.ref(l.thread == 0 ? "Master thread" : "Thread " + std::to_string(l.thread)),
          OTF2_LOCATION_TYPE_CPU_THREAD, l.events, l.rank);
  for (size_t k = 0; k < impl_->region_cats.size() && e == OTF2_SUCCESS; ++k) {
    const uint32_t c = impl_->region_cats[k];
    const std::string name = log.category_name(c);
    const bool mpi = c < log::kUserCategoryBase;
    OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
    if (mpi) role = detail::region_role(log::routine_of(log, c));
    // The colour rides in the description, so that a round trip keeps the user's colours.
    e = OTF2_GlobalDefWriter_WriteRegion(w, static_cast<OTF2_RegionRef>(k), str.ref(name), str.ref(name),
                                         str.ref(color_description(log, c)), role,
                                         mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                         OTF2_UNDEFINED_STRING, 0, 0);
  }
  // A frame's function is a region of paradigm SAMPLING, as Score-P names the functions it finds
  // by unwinding.
  for (size_t k = 0; k < frame_regions.size() && e == OTF2_SUCCESS; ++k) {
    const Frame& f = *frame_regions[k];
    e = OTF2_GlobalDefWriter_WriteRegion(
        w, static_cast<OTF2_RegionRef>(impl_->region_cats.size() + k), str.ref(f.function),
        str.ref(f.function), str.ref(""), OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
        OTF2_REGION_FLAG_NONE, f.file.empty() ? OTF2_UNDEFINED_STRING : str.ref(f.file), 0, 0);
  }
  for (size_t k = 0; k < scls.size() && e == OTF2_SUCCESS; ++k)
    e = OTF2_GlobalDefWriter_WriteSourceCodeLocation(w, static_cast<OTF2_SourceCodeLocationRef>(k),
                                                     str.ref(scls[k].first),
                                                     static_cast<uint32_t>(scls[k].second));
  // Group 0: the location standing for each rank (its thread 0); communicator groups list world
  // ranks, i.e. positions in group 0.
  std::vector<uint64_t> rank_locations;
  for (uint32_t r = 0; r < d.world_size; ++r) rank_locations.push_back(location_ref(r, 0));
  if (e == OTF2_SUCCESS)
    e = OTF2_GlobalDefWriter_WriteGroup(
        w, 0, str.ref("MPI_COMM_WORLD locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
        OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(rank_locations.size()), rank_locations.data());
  for (size_t k = 0; k < impl_->comms.size() && e == OTF2_SUCCESS; ++k) {
    const CommInfo& c = impl_->comms[k];
    std::vector<uint64_t> members(c.members.begin(), c.members.end());
    e = OTF2_GlobalDefWriter_WriteGroup(
        w, static_cast<OTF2_GroupRef>(k + 1), str.ref(comm_name(c, d.world_size)),
        c.self ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
        OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(members.size()), members.data());
  }
  for (size_t k = 0; k < impl_->comms.size() && e == OTF2_SUCCESS; ++k)
    e = OTF2_GlobalDefWriter_WriteComm(
        w, static_cast<OTF2_CommRef>(k), str.ref(comm_name(impl_->comms[k], d.world_size)),
        static_cast<OTF2_GroupRef>(k + 1), OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  uint32_t window_ref = 0;
  for (const auto& [win, comm] : windows)
    if (e == OTF2_SUCCESS)
      e = OTF2_GlobalDefWriter_WriteRmaWin(w, window_ref++, str.ref(window_name(win, comm)),
                                           comm < impl_->comms.size() ? comm : OTF2_UNDEFINED_COMM,
                                           OTF2_RMA_WIN_FLAG_NONE);
  // Parents come first (unify_contexts keeps each process's order). A frame's module and offset
  // are the properties Score-P gives an unwound frame.
  for (size_t k = 0; k < contexts.size() && e == OTF2_SUCCESS; ++k) {
    const auto self = static_cast<OTF2_CallingContextRef>(k);
    e = OTF2_GlobalDefWriter_WriteCallingContext(w, self, context_region[k], context_scl[k],
                                                 contexts[k].parent);
    if (contexts[k].kind != kFrameContext || e != OTF2_SUCCESS) continue;
    const Frame& f = *impl_->frames[contexts[k].a];
    OTF2_AttributeValue v;
    if (!f.module.empty()) {
      v.stringRef = str.ref(f.module);
      e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str.ref(detail::kModuleProperty),
                                                           OTF2_TYPE_STRING, v);
      v.uint64 = f.offset;
      if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str.ref(detail::kOffsetProperty),
                                                             OTF2_TYPE_UINT64, v);
    } else if (f.offset) {
      v.uint64 = f.offset;
      e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str.ref(detail::kAddressProperty),
                                                           OTF2_TYPE_UINT64, v);
    }
  }
  if (e == OTF2_SUCCESS) e = impl_->metrics.write_definitions(w);
  if (e != OTF2_SUCCESS) return detail::otf2_error("writing the OTF2 global definitions", e);

  if (markers.empty()) return Status();
  // User events and MPI_Pcontrol calls as markers, one marker definition per event kind.
  OTF2_MarkerWriter* mw = OTF2_Archive_GetMarkerWriter(impl_->archive);
  if (!mw) return detail::otf2_error("cannot get the marker writer", OTF2_ERROR_INVALID_CALL);
  std::map<std::pair<uint32_t, uint32_t>, OTF2_MarkerRef> marker_of;
  std::sort(markers.begin(), markers.end(),
            [](const MarkerRecord& a, const MarkerRecord& b) { return a.time < b.time; });
  for (const auto& m : markers) {
    auto [it, fresh] = marker_of.try_emplace({m.kind, m.cat}, static_cast<OTF2_MarkerRef>(marker_of.size()));
    if (fresh && e == OTF2_SUCCESS) {
      const bool pcontrol = m.kind == static_cast<uint32_t>(RecordKind::kMarker);
      e = OTF2_MarkerWriter_WriteDefMarker(mw, it->second, pcontrol ? "MPI" : "MPE user event",
                                           log.category_name(m.cat).c_str(), OTF2_SEVERITY_NONE);
    }
  }
  for (const auto& m : markers) {
    if (e != OTF2_SUCCESS) break;
    const bool pcontrol = m.kind == static_cast<uint32_t>(RecordKind::kMarker);
    const std::string text = (pcontrol ? "level=" : "data=") + std::to_string(m.value);
    e = OTF2_MarkerWriter_WriteMarker(mw, m.time, 0, marker_of[{m.kind, m.cat}], OTF2_MARKER_SCOPE_LOCATION,
                                      m.location, text.c_str());
  }
  const OTF2_ErrorCode closed = OTF2_Archive_CloseMarkerWriter(impl_->archive, mw);
  if (e == OTF2_SUCCESS) e = closed;
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("writing the OTF2 markers", e);
}

std::string Otf2Export::region_table() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(impl_->region_cats.size()));
  for (uint32_t c : impl_->region_cats) w.u32(c);
  // Every process's calling-context map: one broadcast serves all, each takes its own.
  w.u32(static_cast<uint32_t>(impl_->context_maps.size()));
  for (const auto& [key, map] : impl_->context_maps) {
    w.u64(key);
    w.u32(static_cast<uint32_t>(map.size()));
    for (uint32_t g : map) w.u32(g);
  }
  w.u32(static_cast<uint32_t>(impl_->window_ids.size()));
  for (uint32_t id : impl_->window_ids) w.u32(id);
  return std::move(w.data());
}

Status Otf2Export::write_local_definitions(const std::string& region_table) {
  ByteReader r(region_table.data(), region_table.size());
  const Status bad(StatusCode::kCorrupt, "a malformed OTF2 region table");
  uint32_t n = 0;
  if (!r.u32(&n) || n > r.left() / 4) return bad;
  std::vector<uint32_t> cats(n);
  for (uint32_t& c : cats) r.u32(&c);
  // This process's calling contexts: the map listed under its first location.
  const auto& locs = impl_->locations;
  const uint64_t mine = locs.empty() ? ~0ull : location_ref(locs.front().rank, locs.front().thread);
  std::vector<uint32_t> context_map;
  uint32_t nmaps = 0;
  if (!r.u32(&nmaps)) return bad;
  for (uint32_t i = 0; i < nmaps; ++i) {
    uint64_t key = 0;
    uint32_t m = 0;
    if (!r.u64(&key) || !r.u32(&m) || m > r.left() / 4) return bad;
    std::vector<uint32_t> map(m);
    for (uint32_t& g : map) r.u32(&g);
    if (key == mine) context_map = std::move(map);
  }
  uint32_t nwindows = 0;
  if (!r.u32(&nwindows) || nwindows > r.left() / 4) return bad;
  OTF2_IdMap* windows = nwindows ? OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, nwindows) : nullptr;
  for (uint32_t k = 0, id = 0; k < nwindows && r.u32(&id); ++k)
    if (windows) OTF2_IdMap_AddIdPair(windows, id, k);
  // Opening and closing the definition files are collective: a bad map is reported after them.
  Status map_error;
  if (context_map.size() != impl_->contexts.size()) {
    map_error = Status(StatusCode::kCorrupt, "the OTF2 region table lacks this process's calling contexts");
    context_map.clear();
  }
  // An empty table is unreadable (OTF2 rejects a zero-capacity map): a run logged with every
  // call paused has no regions, and then no table; a log without call sites has no contexts.
  OTF2_IdMap* regions = n ? OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, n) : nullptr;
  for (uint32_t k = 0; k < n && regions; ++k) OTF2_IdMap_AddIdPair(regions, cats[k], k);
  OTF2_IdMap* context_ids =
      context_map.empty() ? nullptr
                          : OTF2_IdMap_CreateFromUint32Array(context_map.size(), context_map.data(), false);
  if (((n && !regions) || (!context_map.empty() && !context_ids) || (nwindows && !windows)) && map_error.ok())
    map_error = Status(StatusCode::kIoError, "out of memory for the OTF2 mapping tables");
  OTF2_ErrorCode e = OTF2_Archive_OpenDefFiles(impl_->archive);
  if (e != OTF2_SUCCESS) {
    if (regions) OTF2_IdMap_Free(regions);
    if (context_ids) OTF2_IdMap_Free(context_ids);
    if (windows) OTF2_IdMap_Free(windows);
    return detail::otf2_error("opening the OTF2 definition files", e);
  }
  OTF2_ErrorCode first = OTF2_SUCCESS;
  for (const auto& l : impl_->locations) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(impl_->archive, location_ref(l.rank, l.thread));
    e = !dw ? OTF2_ERROR_INVALID_CALL : OTF2_SUCCESS;
    if (e == OTF2_SUCCESS && regions) e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, regions);
    if (e == OTF2_SUCCESS && context_ids)
      e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_CALLING_CONTEXT, context_ids);
    if (e == OTF2_SUCCESS && windows) e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_RMA_WIN, windows);
    if (dw) {
      const OTF2_ErrorCode c = OTF2_Archive_CloseDefWriter(impl_->archive, dw);
      if (e == OTF2_SUCCESS) e = c;
    }
    if (first == OTF2_SUCCESS) first = e;
  }
  if (regions) OTF2_IdMap_Free(regions);
  if (context_ids) OTF2_IdMap_Free(context_ids);
  if (windows) OTF2_IdMap_Free(windows);
  e = OTF2_Archive_CloseDefFiles(impl_->archive);
  if (first == OTF2_SUCCESS) first = e;
  MPE_RETURN_IF_ERROR(map_error);
  return first == OTF2_SUCCESS ? Status() : detail::otf2_error("writing the OTF2 local definitions", first);
}

Status Otf2Export::close() {
  if (!impl_->archive) return Status();
  const OTF2_ErrorCode e = OTF2_Archive_Close(impl_->archive);
  impl_->archive = nullptr;
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error("closing the OTF2 archive", e);
}

Status mpelog_to_otf2(const std::string& log_path, const std::string& out_dir) {
  auto log = log::LogFile::open(log_path);
  if (!log.ok()) return Status(log.status().code(), log_path + ": " + log.status().message());
  AtomicOutput out(out_dir);
  Otf2Export x(*log);
  MPE_RETURN_IF_ERROR(x.open(out.tmp_path(), {}));
  MPE_RETURN_IF_ERROR(x.open_event_files());
  {
    Progress progress("writing OTF2", log->index().size());
    for (uint32_t r = 0; r < log->definitions().world_size; ++r)
      MPE_RETURN_IF_ERROR(x.write_rank_events(r, &progress));
  }
  MPE_RETURN_IF_ERROR(x.close_event_files());
  MPE_RETURN_IF_ERROR(x.write_global_definitions({x.summary()}));
  MPE_RETURN_IF_ERROR(x.write_local_definitions(x.region_table()));
  MPE_RETURN_IF_ERROR(x.close());
  return out.commit();
}

}  // namespace mpe::interop
