// liblog's record semantics: what each MPI call writes into the thread's log (states, messages,
// collectives, requests, communicators, Pcontrol markers). The hooks the core calls.
#include "records.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "communicators.h"
#include "counters.h"
#include "log_tool.h"
#include "mpe/bytes.h"
#include "mpe/call_filter.h"
#include "mpe/callsite.h"
#include "mpe/clock.h"
#include "mpe/completion.h"
#include "mpe/config.h"
#include "mpe/records.h"
#include "mpe/traffic.h"
#include "rma.h"

namespace mpe::tools::log {

using mpe::Call;
using mpe::CallClass;
using mpe::Mode;
using mpe::traffic::RequestKind;
namespace role = mpe::role;

std::atomic<uint64_t> g_finalize_enter{0};
std::atomic<uint32_t> g_finalize_site{0};

namespace {

// Says once per rank that a request could not be followed (its table could not grow).
void lost_request() noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    config::warn("liblog: out of memory for the request table; some nonblocking messages are not recorded",
                 false);
}

// Follows a persistent request until it is freed.
void follow(ThreadLog* t, const RequestInfo& info) {
  if (!t->requests.put(info.req, info)) lost_request();
}

// Tracks a nonblocking send's, receive's or collective's request under a new serial, which its
// kRequestPost and kRequestDone records carry (for OTF2's MpiIsend ... MpiIrecv and
// NonBlockingCollectiveRequest/Complete); returns the serial.
// MPICH hands out one builtin handle for every send (and every collective) that completed inside
// its call, so the handle can still name an older one: that one was complete, so say so now,
// before the new request's records (which must stay next to its message or collective record).
uint32_t track_request(ThreadLog* t, const Call& c, RequestInfo info) {
  info.serial = ++t->last_request;
  RequestInfo replaced{};
  if (!t->requests.put(info.req, info, &replaced)) lost_request();
  const RequestKind was = replaced.posted.kind;
  if (was == RequestKind::kSend || was == RequestKind::kCollective)
    put(t, format::RequestDoneRecord{{c.t_enter, static_cast<uint16_t>(c.fn), replaced.serial,
                                      was == RequestKind::kSend ? format::RequestWhat::kSend
                                                                : format::RequestWhat::kCollective}}
               .to_record());
  return info.serial;
}

void put_request_post(ThreadLog* t, const Call& c, uint32_t serial, format::RequestWhat what) {
  put(t, format::RequestPostRecord{{c.t_enter, static_cast<uint16_t>(c.fn), serial, what}}.to_record());
}

void put_recv(ThreadLog* t, uint64_t time, uint16_t cat, uint32_t comm, const traffic::Message& m) {
  put(t, format::RecvRecord{time, cat, m.peer, m.tag, comm, m.bytes}.to_record());
}

// What the traffic rule (mpe/traffic.h) says a call moved, as liblog's records.
struct LogSink {
  ThreadLog* t;
  uint16_t cat;

  void send(const Call& c, const traffic::Message& m, const MPI_Request* req) {
    const uint32_t comm = comm_index(m.comm);
    // Tracked first: a builtin handle it reuses may first close an older request.
    const uint32_t serial =
        req ? track_request(t, c, RequestInfo{*req, traffic::Posted{RequestKind::kSend, false, m}, comm}) : 0;
    put(t, format::SendRecord{c.t_enter, cat, m.peer, m.tag, comm, m.bytes}.to_record());
    if (serial) put_request_post(t, c, serial, format::RequestWhat::kSend);
  }
  void recv(const Call& c, const traffic::Message& m) { put_recv(t, c.t_leave, cat, comm_index(m.comm), m); }
  void post(const Call& c, MPI_Request r, const traffic::Posted& p) {
    const RequestInfo info{r, p, comm_index(p.msg.comm)};
    if (p.kind == RequestKind::kRecv)
      put_request_post(t, c, track_request(t, c, info), format::RequestWhat::kRecv);
    else
      follow(t, info);
  }
  const traffic::Posted* find(MPI_Request r) {
    const RequestInfo* p = t->requests.find(r);
    return p ? &p->posted : nullptr;
  }
  traffic::ProbedMessages& probed() { return t->probed; }
};

// Before a Wait/Test: remembers each request's handle, since MPI nulls completed ones. Handles
// only: what they stand for stays in the request table until completions() reads and erases it,
// and most calls of a polling loop complete nothing. Copying each request's entry here cost ~60
// instructions a request on every call: an MPI_Testany over 16 requests, 1000; hpcc's
// MPIRandomAccess, polling MPI_Testany, ran 4 times slower under liblog.
void snapshot(ThreadLog* t, const Call& c) {
  if (c.depth > 1 || !c.has(role::requests)) return;
  const auto n = static_cast<size_t>(c.nreq());
  auto& s = t->snap[c.depth];
  if (s.size() < n) {
    try {
      s.resize(n);
    } catch (const std::bad_alloc&) {
      s.clear();  // completions() then sees no request: this call's messages go unrecorded
      static std::atomic<bool> said{false};
      if (!said.exchange(true))
        config::warn("liblog: out of memory in a Wait/Test; some completed receives are not recorded", false);
      return;
    }
  }
  std::memcpy(s.data(), c.requests, n * sizeof(MPI_Request));
}

// After a Wait/Test: a kRequestDone for every completed nonblocking send, receive and collective,
// and a receive record for every completed tracked receive.
void completions(ThreadLog* t, const Call& c) {
  if (c.depth > 1 || !c.has(role::requests)) return;
  const auto& s = t->snap[c.depth];
  const int n = std::min<int>(c.nreq(), static_cast<int>(s.size()));
  const uint16_t cat = static_cast<uint16_t>(c.fn);
  const uint32_t id = ++t->completions;
  auto one = [&](int i, const MPI_Status* st) {
    if (i < 0 || i >= n) return;
    const MPI_Request handle = s[static_cast<size_t>(i)];
    RequestInfo* p = handle == MPI_REQUEST_NULL ? nullptr : t->requests.find(handle);
    // A handle that several requests share (MPICH's builtin completed request, also returned
    // for MPI_PROC_NULL) stands for its tracked request once per call, not once per copy.
    if (!p || p->completion == id) return;
    p->completion = id;
    const RequestInfo info = *p;  // erase() below may move the entry
    const RequestKind kind = info.posted.kind;
    if (traffic::ends_at_completion(kind)) {
      const auto what = traffic::cancelled(st)             ? format::RequestWhat::kCancelled
                        : kind == RequestKind::kSend       ? format::RequestWhat::kSend
                        : kind == RequestKind::kCollective ? format::RequestWhat::kCollective
                                                           : format::RequestWhat::kRecv;
      put(t, format::RequestDoneRecord{{c.t_leave, cat, info.serial, what}}.to_record());
    }
    traffic::Message m;
    if (traffic::delivered(info.posted, st, &m)) put_recv(t, c.t_leave, cat, info.comm, m);
    if (traffic::ends_at_completion(kind)) t->requests.erase(info.req);
  };
  mpe::for_each_completed(c, one);
}

}  // namespace

void on_enter(Call& c) noexcept {
  if (__builtin_expect(counters::g_on, 0) && counters::enters(c.cls) &&
      g_active.load(std::memory_order_relaxed))
    if (ThreadLog* t = thread_log()) counters::on_enter(t, c);  // MPE_LOG_PVARS
  if (mpe::completes_requests(c.cls)) {
    if (g_active.load(std::memory_order_relaxed))
      if (ThreadLog* t = thread_log()) snapshot(t, c);
    return;
  }
  switch (c.cls) {
    case CallClass::kRequestFree:
      if (g_active.load(std::memory_order_relaxed) && c.has(role::requests))
        if (ThreadLog* t = thread_log()) t->requests.erase(*c.requests);
      return;
    case CallClass::kFinalize:
      g_finalize_site.store(core::callsite(c), std::memory_order_relaxed);
      g_finalize_enter.store(mpe_clock_now(), std::memory_order_relaxed);
      return;
    case CallClass::kAbort:
      flush_now();
      return;
    default:
      return;
  }
}

__attribute__((noinline)) void on_leave_slow(ThreadLog* t, Call& c, bool logging, bool messages) noexcept {
  const uint16_t cat = static_cast<uint16_t>(c.fn);
  const bool ok = c.rc == MPI_SUCCESS;
  switch (c.cls) {
    case CallClass::kPcontrol: {
      const int level = c.has(role::level) ? c.level : 1;
      const bool on = g_rank_recorded && call_filter::records_at_level(level);
      g_logging.store(on, std::memory_order_relaxed);
      if (!g_rank_recorded) return;
      if (!logging)  // recorded even while paused; when logging, on_leave wrote it already
        put(t, format::StateRecord{c.t_enter, cat, c.depth, core::callsite(c), c.t_leave - c.t_enter}
                   .to_record());
      put(t, format::MarkerRecord{c.t_enter, cat, level, on}.to_record());
      return;
    }
    case CallClass::kCommCreate:
      if (ok && c.has(role::newcomm) && c.mode == Mode::kBlocking) {
        counters::comm_created(*c.newcomm);
        register_comm(*c.newcomm, c.t_leave, logging ? t : nullptr,
                      c.fn != Fn::MPI_Comm_spawn && c.fn != Fn::MPI_Comm_spawn_multiple &&
                          c.fn != Fn::MPI_Comm_accept && c.fn != Fn::MPI_Comm_connect &&
                          c.fn != Fn::MPI_Comm_join);
      }
      if (!logging) return;
      break;
    case CallClass::kWinCreate:
      if (ok) register_window(c, t);  // recorded even while paused, like communicators
      return;
    default:
      if (!logging) return;
      break;
  }
  if (!ok) return;
  if (mpe::completes_requests(c.cls)) {
    completions(t, c);
    return;
  }
  if (!messages) return;
  switch (c.cls) {
    case CallClass::kSend:
    case CallClass::kRecv:
    case CallClass::kMrecv:
    case CallClass::kSendrecv:
    case CallClass::kMprobe:
    case CallClass::kStart: {
      LogSink sink{t, cat};
      traffic::visit(c, sink);
      return;
    }
    case CallClass::kBarrier:
    case CallClass::kBcast:
    case CallClass::kReduce:
    case CallClass::kAllreduce:
    case CallClass::kReduceScatter:
    case CallClass::kReduceScatterBlock:
    case CallClass::kScan:
    case CallClass::kExscan:
    case CallClass::kGather:
    case CallClass::kGatherv:
    case CallClass::kScatter:
    case CallClass::kScatterv:
    case CallClass::kAllgather:
    case CallClass::kAllgatherv:
    case CallClass::kAlltoall:
    case CallClass::kAlltoallv:
    case CallClass::kAlltoallw:
    case CallClass::kNeighborAllgather:
    case CallClass::kNeighborAllgatherv:
    case CallClass::kNeighborAlltoall:
    case CallClass::kNeighborAlltoallv:
    case CallClass::kNeighborAlltoallw: {
      const int root = c.has(role::root) ? c.root : -1;
      const mpe::Bytes bytes = mpe::collective_bytes(c);
      const auto received = static_cast<int32_t>(std::min<int64_t>(bytes.recv, INT32_MAX));
      const uint32_t comm = comm_index(c.comm);
      // A nonblocking collective is followed to the Wait/Test that completes it, where its
      // waiting happens. Tracked first: a builtin handle it reuses may first close an older request.
      const uint32_t serial =
          c.mode == Mode::kNonblocking && c.has(role::requests)
              ? track_request(
                    t, c,
                    RequestInfo{*c.requests, traffic::Posted{RequestKind::kCollective, false, {}}, comm})
              : 0;
      put(t, format::CollectiveRecord{c.t_enter, cat, root, comm, static_cast<uint64_t>(bytes.sent), received}
                 .to_record());
      if (serial) put_request_post(t, c, serial, format::RequestWhat::kCollective);
      return;
    }
    case CallClass::kRma:
      put_rma_op(t, c);
      return;
    case CallClass::kWinSync:
      put_rma_complete(t, c);
      return;
    default:
      return;
  }
}

namespace {

// Counts a call the filter left out, per routine on this thread (mpe stat says how many).
void count_left_out(ThreadLog* t, Fn fn) noexcept {
  if (!t->left_out && !(t->left_out = new (std::nothrow) uint64_t[kFnCount]())) return;
  ++t->left_out[static_cast<size_t>(fn)];
}

// The state record of a call past on_leave's common case (the thread's first call, a full buffer,
// a filter, a call-site cache miss, logging paused). Returns whether the call's messages are
// recorded: a call the filter leaves out keeps them unless it says `drop messages`.
bool put_state(ThreadLog* t, Fn fn, uint8_t depth, uintptr_t& caller, uint64_t t_enter, uint64_t t_leave,
               bool logging) {
  if (!logging) return false;
  if (call_filter::g_active && call_filter::leaves_out(fn, caller)) {
    count_left_out(t, fn);
    return !call_filter::drops_messages();
  }
  put(t, format::StateRecord{t_enter, static_cast<uint16_t>(fn), depth, core::callsite_of(caller),
                             t_leave - t_enter}
             .to_record());
  return true;
}

}  // namespace

__attribute__((noinline)) void on_leave_general(ThreadLog* t, Call& c, bool logging) noexcept {
  if (!t && !(t = new_thread_log())) return;  // the thread's first call
  const bool messages = put_state(t, c.fn, c.depth, c.caller, c.t_enter, c.t_leave, logging);
  if (!writes_state_only(c.cls)) on_leave_slow(t, c, logging, messages);
}

__attribute__((noinline)) void on_leave_state(ThreadLog* t, Fn fn, bool logging, uint64_t t_enter,
                                              uint64_t t_leave, uint8_t depth, uintptr_t caller) noexcept {
  if (!t && !(t = new_thread_log())) return;  // the thread's first call
  put_state(t, fn, depth, caller, t_enter, t_leave, logging);
}

}  // namespace mpe::tools::log
