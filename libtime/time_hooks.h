// libmpetime's per-call path, inline: the library's own wrappers call these hooks directly while it
// is the only tool loaded (mpe/core.h, Solo), and it registers the same functions with the core.
// The out-of-line parts are in time_tool.cpp.
#pragma once

#include "mpe/callsite.h"
#include "mpe/completion.h"
#include "mpe/core.h"
#include "time_table.h"

namespace mpe::tools::time::tool {

using mpe::Call;
using mpe::CallClass;

extern __thread Table* t_table __attribute__((tls_model("initial-exec")));

// Before the calls that complete or free requests (Hooks::kEnterClasses).
void on_enter(Call& call) noexcept;
// Adds the bytes a call moved to its routine's counters. Out of line: most cheap calls move none.
__attribute__((noinline)) void count_bytes(const Call& c, Row& st, Table* t) noexcept;
// The per-call path when the fast one cannot serve: a thread's first call, a site's first call on
// this thread (a miss in the core's cache), a site whose row belongs to another routine, and
// every call at MPE_CALLSITE_DEPTH > 1 (the core unwinds then).
__attribute__((noinline)) void leave_slow(Call& call, Table* t, uint8_t traits) noexcept;
// MPI_Pcontrol and MPI_Init(_thread), then the call is recorded as any other.
__attribute__((noinline)) void leave_rare(Call& call, uint8_t traits) noexcept;

// Classes whose calls move data or complete requests, indexed by CallClass.
constexpr bool moves_bytes(CallClass c) {
  switch (c) {
    case CallClass::kOther:
    case CallClass::kInit:
    case CallClass::kFinalize:
    case CallClass::kPcontrol:
    case CallClass::kProbe:
    case CallClass::kMprobe:
    case CallClass::kRequestGetStatus:
    case CallClass::kCancel:
    case CallClass::kRequestFree:
    case CallClass::kPready:
    case CallClass::kParrived:
    case CallClass::kBarrier:
    case CallClass::kCommCreate:
    case CallClass::kCommFree:
    case CallClass::kWinSync:
    case CallClass::kWinCreate:
    case CallClass::kFileOpen:
    case CallClass::kFileClose:
      return false;
    default:
      return true;
  }
}

// What the leave hook must know of a call's class, in one byte: one load decides both branches.
constexpr uint8_t kMovesBytes = 1;  // count_bytes
constexpr uint8_t kRare = 2;        // MPI_Pcontrol, MPI_Init(_thread): leave_rare

struct ClassTraits {
  uint8_t v[mpe::kCallClassCount];
  constexpr ClassTraits() : v() {
    for (int i = 0; i < mpe::kCallClassCount; ++i) {
      const auto c = static_cast<CallClass>(i);
      v[i] = static_cast<uint8_t>((moves_bytes(c) ? kMovesBytes : 0) |
                                  (c == CallClass::kPcontrol || c == CallClass::kInit ? kRare : 0));
    }
  }
};
constexpr ClassTraits kTraits;

// Adds one call to its row: what every call pays.
inline void record(const Call& call, Table* t, Row& r, uint8_t traits) noexcept {
  const uint64_t dur = call.t_leave - call.t_enter;
  uint64_t* child = t->child + static_cast<size_t>(call.depth);
  r.nested += child[1];
  child[1] = 0;
  child[0] += dur;  // child[0] of an application call, charged to no parent, is never read
  ++r.calls;
  r.incl += dur;
  if (dur < r.min) r.min = dur;
  if (dur > r.max) r.max = dur;
  if (traits & kMovesBytes) count_bytes(call, r, t);
}

// The per-call path: a TLS load, the core's call-site cache probed inline, one row update. Every
// other case is a tail call, so that this function saves no registers. `cls` is call.cls, a
// constant in a solo wrapper.
__attribute__((always_inline)) inline void on_leave(Call& call, CallClass cls) noexcept {
  const uint8_t traits = kTraits.v[static_cast<int>(cls)];
  if (__builtin_expect(traits & kRare, 0)) return leave_rare(call, traits);
  if (g_paused.load(std::memory_order_relaxed)) return;
  Table* t = t_table;
  if (__builtin_expect(t == nullptr, 0)) return leave_slow(call, t, traits);
  const uint32_t slot = mpe::core::cache_slot(call.caller);
  if (__builtin_expect(t->cache->pc[slot] != call.caller, 0)) return leave_slow(call, t, traits);
  Row& r = t->rows[t->cache->id[slot]];
  if (__builtin_expect(r.fn != static_cast<uint16_t>(call.fn), 0)) return leave_slow(call, t, traits);
  record(call, t, r, traits);
}

struct Hooks {
  static constexpr uint32_t kNeeds = kNeedsTime | kNeedsStatus;
  static constexpr uint64_t kEnterClasses = kCompletingClasses | classes(CallClass::kRequestFree);
  static constexpr uint64_t kLeaveClasses = kEveryClass;
  static void enter(Call& call) noexcept { on_enter(call); }
  static void leave(Call& call) noexcept { on_leave(call, call.cls); }
  __attribute__((always_inline)) static void leave(Call& call, CallClass cls) noexcept {
    on_leave(call, cls);
  }
};

}  // namespace mpe::tools::time::tool
