// liblive's per-call path, inline: the library's own wrappers call these hooks directly while it is
// the only tool loaded (mpe/core.h, Solo), and it registers the same functions with the core. The
// out-of-line parts are in live_tool.cpp.
#pragma once

#include <atomic>

#include "live_state.h"
#include "mpe/bytes.h"
#include "mpe/call_filter.h"
#include "mpe/callsite.h"
#include "mpe/clock.h"
#include "mpe/completion.h"
#include "mpe/core.h"
#include "mpe/python_frames.h"
#include "mpe/traffic.h"

namespace mpe::tools::live {

// MPE_LOG_FILTER (mpe/call_filter.h): set after MPI_Init. g_filtered sends every call through
// on_leave_filtered; g_filter_on is false on a rank `only ranks` leaves out and while the last
// Pcontrol level is not one `only pcontrol` names.
extern bool g_filtered MPE_HIDDEN;
extern std::atomic<bool> g_filter_on MPE_HIDDEN;

using live_stream::WaitKind;

// Before a Wait/Test call: what each request is (MPI nulls the completed handles), and for a Wait
// the world ranks it waits for. Returns the wait kind: kAllOf/kAnyOf over the known peers, or
// kUnknown when an "any" wait has a request with an unknown peer (that one could release it) or
// nothing is known. An "all" wait is a sound edge over its known peers alone.
__attribute__((noinline)) WaitKind snapshot_requests(LiveThread* t, const Call& c, NowSlot& s,
                                                     bool any) noexcept MPE_HIDDEN;
// What a call moved (messages, collectives), the communicators it made, the requests it posted
// or completed: the classes of has_traffic only.
__attribute__((noinline)) void record_traffic(LiveThread* t, const Call& c) noexcept MPE_HIDDEN;
// Under a filter: a call left out keeps the rank in "application" and its time uncounted; its
// messages still count unless `drop messages`, and what keeps liblive's tables right (new
// communicators, requests completing) always runs.
__attribute__((noinline)) void on_leave_filtered(LiveThread* t, Call& c) noexcept MPE_HIDDEN;

// MPI_Wtime and MPI_Wtick do not take a rank out of the application: a rank that times its
// computation in a loop is computing, not "in MPI since a microsecond ago". (Class kOther: a
// constant test in the wrappers of every other class.)
inline bool is_clock(CallClass cls, Fn fn) {
  return cls == CallClass::kOther && (fn == Fn::MPI_Wtime || fn == Fn::MPI_Wtick);
}

// What the call is about to wait for. `cls`, `roles` and `mode` are c's, constants in a solo
// wrapper: the switch folds to its one case, and the tests of roles and mode fold too.
__attribute__((always_inline)) inline void fill_wait(LiveThread* t, const Call& c, NowSlot& s, CallClass cls,
                                                     uint64_t roles, Mode mode) noexcept {
  auto has = [roles](uint64_t bits) { return (roles & bits) == bits; };
  s.npeers = 0;
  s.peer = traffic::kPeerUnknown;
  s.tag = -1;
  s.root = -1;
  s.wait = static_cast<uint8_t>(WaitKind::kNone);
  const MPI_Comm comm = s.comm;
  const bool blocking = mode == Mode::kBlocking;
  auto single = [&](int32_t peer) {
    s.peer = peer;
    if (!blocking || peer == traffic::kPeerNull) return;
    if (peer == traffic::kPeerAny) {
      s.wait = static_cast<uint8_t>(WaitKind::kAnyInComm);
    } else if (peer >= 0) {
      s.peers[0] = peer;
      s.npeers = 1;
      s.wait = static_cast<uint8_t>(WaitKind::kAllOf);
    }
  };
  switch (cls) {
    case CallClass::kSend:
      if (has(role::dest)) single(world_rank(comm, c.dest));
      if (has(role::sendtag)) s.tag = c.sendtag;
      break;
    case CallClass::kRecv:
    case CallClass::kProbe:
    case CallClass::kMprobe:
      if (has(role::source)) single(world_rank(comm, c.source));
      if (has(role::recvtag)) s.tag = c.recvtag;
      break;
    case CallClass::kSendrecv:
      if (has(role::source | role::dest)) {
        single(world_rank(comm, c.source));
        const int32_t dest = world_rank(comm, c.dest);
        if (s.wait == static_cast<uint8_t>(WaitKind::kAllOf) && dest >= 0 && dest != s.peers[0])
          s.peers[s.npeers++] = dest;
      }
      if (has(role::recvtag)) s.tag = c.recvtag;
      break;
    case CallClass::kWait:
    case CallClass::kWaitall:
      s.wait = static_cast<uint8_t>(snapshot_requests(t, c, s, false));
      break;
    case CallClass::kWaitany:
    case CallClass::kWaitsome:
      s.wait = static_cast<uint8_t>(snapshot_requests(t, c, s, true));
      break;
    case CallClass::kTest:
    case CallClass::kTestall:
    case CallClass::kTestany:
    case CallClass::kTestsome:
      snapshot_requests(t, c, s, false);
      s.npeers = 0;  // a Test waits for nobody
      break;
    case CallClass::kCommCreate:
      if (blocking && has(role::comm)) s.wait = static_cast<uint8_t>(WaitKind::kCollective);
      break;
    case CallClass::kRequestFree:
      // Forgotten before the call, which nulls the handle: MPI may hand the handle out again,
      // and a stale entry would then count a new request's traffic as the old one's.
      if (has(role::requests)) t->requests.erase(*c.requests);
      break;
    default:
      if (is_collective(cls)) {
        if (has(role::root)) s.root = world_rank(comm, c.root);
        if (blocking && has(role::comm)) s.wait = static_cast<uint8_t>(WaitKind::kCollective);
      }
      break;
  }
}

constexpr bool has_traffic(CallClass cls) {
  return traffic::moves_messages(cls) || cls == CallClass::kCommCreate || completes_requests(cls) ||
         is_collective(cls);
}

// ~55 instructions: the slot's fields, and for a blocking call what it waits for. `k` is the call's
// Shape, constants in a solo wrapper, where the switch on the class and the tests of roles and mode
// fold. `stamped`: the core has stamped c.t_enter already (a solo wrapper, Hooks::kEnterSeesTime),
// and it is the slot's "since"; else a clock read of its own.
template <bool stamped>
__attribute__((always_inline)) inline void on_enter(Call& c, core::Shape k) noexcept {
  if (c.depth != 0 || is_clock(k.cls, k.fn)) return;
  // A Wait/Test left out still takes its snapshot: the requests it completes are followed.
  if (__builtin_expect(g_filtered, 0) && !completes_requests(k.cls) &&
      (!g_filter_on.load(std::memory_order_relaxed) || (call_filter::g_active && call_filter::leaves_out(c))))
    return;
  LiveThread* t = live_thread();
  if (!t) return;
  NowSlot& s = t->now;
  const uint32_t q = s.begin_write();
  s.in_mpi = true;
  s.fn = k.fn;
  s.since = stamped ? c.t_enter : clock::now();
  s.comm = (k.roles & role::comm) ? c.comm : MPI_COMM_NULL;
  fill_wait(t, c, s, k.cls, k.roles, k.mode);
  // From Python the return address names mpi4py: the site's id then rides in caller's tag bits
  // (mpe/callsite.h), read by the publisher. One load and branch for a program without Python.
  if (__builtin_expect(core::python::g_readable, 0)) core::callsite(c);
  s.caller = c.caller;
  s.end_write(q);
}

// The slot back to "application".
inline void leave_slot(LiveThread* t, const Call& c) noexcept {
  NowSlot& s = t->now;
  const uint32_t q = s.begin_write();
  s.in_mpi = false;
  s.since = c.t_leave;
  s.wait = 0;
  s.npeers = 0;
  s.end_write(q);
}

// ~40 instructions plus the event: the routine's time, the slot back to "application".
__attribute__((always_inline)) inline void record_call(LiveThread* t, Call& c, core::Shape k) noexcept {
  const auto fn = static_cast<size_t>(k.fn);
  bump(t->fn_ticks[fn], c.t_leave - c.t_enter);
  bump(t->fn_calls[fn], 1);
  leave_slot(t, c);
  if (has_traffic(k.cls)) record_traffic(t, c);
}

__attribute__((always_inline)) inline void on_leave(Call& c, core::Shape k) noexcept {
  if (c.depth != 0 || is_clock(k.cls, k.fn)) return;
  LiveThread* t = t_live;
  if (!t) return;
  if (__builtin_expect(g_filtered, 0)) return on_leave_filtered(t, c);
  record_call(t, c, k);
}

// The Shape of a call as its Call holds it: the registered hooks' view.
inline core::Shape shape_of(const Call& c) { return core::Shape{c.fn, c.cls, c.mode, c.roles}; }

struct Hooks {
  static constexpr uint32_t kNeeds = kNeedsTime | kNeedsStatus;
  static constexpr uint64_t kEnterClasses = kEveryClass;
  static constexpr uint64_t kLeaveClasses = kEveryClass;
  // In a solo wrapper the core stamps t_enter before the enter hook, and the slot's "since" is that
  // stamp: one clock read fewer (~20 ns). The routine's time then includes the slot's writes
  // (~10 ns). Registered, with other tools, the hook reads a clock of its own.
  static constexpr bool kEnterSeesTime = true;
  static void enter(Call& c) noexcept { on_enter<false>(c, shape_of(c)); }
  static void leave(Call& c) noexcept { on_leave(c, shape_of(c)); }
  __attribute__((always_inline)) static void enter(Call& c, core::Shape k) noexcept { on_enter<true>(c, k); }
  __attribute__((always_inline)) static void leave(Call& c, core::Shape k) noexcept { on_leave(c, k); }
};

}  // namespace mpe::tools::live
