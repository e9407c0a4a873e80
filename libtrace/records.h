// liblog's hooks: what each MPI call writes into the calling thread's log.
#pragma once

#include <atomic>
#include <cstdint>

#include "log_state.h"
#include "mpe/call_filter.h"
#include "mpe/callsite.h"
#include "mpe/completion.h"
#include "mpe/core.h"
#include "mpe/records.h"

namespace mpe::tools::log {

// Clock ticks when MPI_Finalize was entered: its state is written before the merge.
extern std::atomic<uint64_t> g_finalize_enter MPE_HIDDEN;
extern std::atomic<uint32_t> g_finalize_site MPE_HIDDEN;  // and its call site

// Before the calls of kEnterClasses: snapshots the requests a Wait/Test is given, forgets freed
// requests, notes MPI_Finalize's entry, flushes before MPI_Abort.
void on_enter(Call& c) noexcept MPE_HIDDEN;
// The classes on_enter acts on; every other call goes straight to on_leave.
inline constexpr uint64_t kEnterClasses =
    kCompletingClasses | classes(CallClass::kRequestFree, CallClass::kFinalize, CallClass::kAbort);

// The classes whose calls write their state and nothing else (no message, request, communicator or
// marker): on_leave_slow has nothing to do for them.
constexpr bool writes_state_only(CallClass cls) {
  return cls == CallClass::kOther || cls == CallClass::kProbe;
}

// What on_leave does, in full: its common case is inlined there without calls.
__attribute__((noinline)) void on_leave_general(ThreadLog* t, Call& c, bool logging) noexcept MPE_HIDDEN;
// The same for a call that writes its state only, from the fields that needs: the Call's address
// then never leaves a solo wrapper of such a routine, and the compiler drops every store to it
// that nothing reads (the arguments, the class, the roles: ~15 instructions per MPI_Iprobe).
__attribute__((noinline)) void on_leave_state(ThreadLog* t, Fn fn, bool logging, uint64_t t_enter,
                                              uint64_t t_leave, uint8_t depth,
                                              uintptr_t caller) noexcept MPE_HIDDEN;
// What a call's class means beyond its state record. `messages`: false for a call MPE_LOG_FILTER
// left out with `drop messages`; a Wait/Test still records the messages of the requests it
// completes, which belong to the calls that posted them.
__attribute__((noinline)) void on_leave_slow(ThreadLog* t, Call& c, bool logging,
                                             bool messages) noexcept MPE_HIDDEN;

// After every call: the state record, then what the call's class means (messages, collectives,
// requests, communicators, Pcontrol). ~8-12 ns for a cheap call: TLS loads, a call-site cache
// probe, one record, one class test. Every call it makes is a tail call, so the common case
// saves no registers. Inline, for the library's own wrappers (Hooks); `fn` and `cls` are c.fn and
// c.cls, constants there (the wrapper's Shape): read from the Call they would be loads, as its
// address escapes to the rare cases, and the record's kind and category then one store.
__attribute__((always_inline)) inline void on_leave(Call& c, Fn fn, CallClass cls) noexcept {
  if (!g_active.load(std::memory_order_relaxed)) return;
  ThreadLog* t = t_log;  // not thread_log(): creating the log is a call, which would cost a frame
  const bool logging = g_logging.load(std::memory_order_relaxed);
  uint32_t site;
  if (!t || !logging || call_filter::g_active || t->n == t->cap || !core::cached_callsite(c.caller, &site)) {
    // A routine the filter leaves out, which moves no message: counted in place, no record (~10
    // instructions, so a left-out call costs less than libmpetime's path).
    const auto f = static_cast<size_t>(fn);
    if (call_filter::g_active && t && logging && call_filter::g_routine_left_out[f] && t->left_out &&
        writes_state_only(cls)) {
      ++t->left_out[f];
      return;
    }
    if (writes_state_only(cls))
      return on_leave_state(t, fn, logging, c.t_enter, c.t_leave, c.depth, c.caller);
    return on_leave_general(t, c, logging);
  }
  // In place, field by field (StateRecord::write_to): a whole Record assigned here costs more.
  format::StateRecord{c.t_enter, static_cast<uint16_t>(fn), c.depth, site, c.t_leave - c.t_enter}.write_to(
      &t->recs[t->n++]);
  if (!writes_state_only(cls)) return on_leave_slow(t, c, logging, true);
}

struct Hooks {
  static constexpr uint32_t kNeeds = kNeedsTime | kNeedsStatus;
  static constexpr uint64_t kEnterClasses = log::kEnterClasses;
  static constexpr uint64_t kLeaveClasses = kEveryClass;
  static void enter(Call& c) noexcept { on_enter(c); }
  static void leave(Call& c) noexcept { on_leave(c, c.fn, c.cls); }
  __attribute__((always_inline)) static void leave(Call& c, core::Shape k) noexcept {
    on_leave(c, k.fn, k.cls);
  }
};

}  // namespace mpe::tools::log
