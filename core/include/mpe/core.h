// The interposition core: the hot path every generated wrapper runs, and the tool registry.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "mpe/calls.h"
#include "mpe/clock.h"
#include "mpe/tool.h"

namespace mpe::core {

// Per-thread arrays a wrapper fills outside the hooks: statuses for MPI_STATUSES_IGNORE, and a
// Fortran call's arrays converted to C (requests, statuses, indices, datatypes).
enum class Scratch : uint8_t {
  kStatuses,
  kFortranStatuses,
  kRequests,
  kIndices,
  kSendTypes,
  kRecvTypes,
};
inline constexpr int kScratchCount = 6;

struct ScratchBuffer {
  void* data;
  size_t capacity;  // bytes
};

// Per-thread state of the core. Plain data so that __thread needs no constructor call.
struct ThreadState {
  // One word, so the hot path loads it once: bits 0-15 count the MPI calls in progress on this
  // thread; each kSuppressed unit above them marks a tool hook or a Fortran binding's PMPI call
  // in progress, during which MPI calls bypass the tools.
  uint32_t state;
  ScratchBuffer scratch[kScratchCount];
};
inline constexpr uint32_t kSuppressed = 1u << 16;

static_assert(kCallClassCount <= 64, "Tool::enter_classes holds one bit per call class");

// Up to this many tools can be registered in one process.
inline constexpr int kMaxTools = 8;

// The hooks that want one class of calls, in registration order.
struct HookList {
  int n;
  Hook hook[kMaxTools];
};

// The registry, filled before main() by the tools' constructors and read-only afterwards. Hooks
// are listed per call class, so a call reaches only the tools that asked for its class; a
// wrapper's class is a constant, so finding its list costs nothing.
struct Registry {
  int ntools;
  uint32_t needs;  // union of the tools' kNeeds* bits
  HookList enter[kCallClassCount];
  HookList leave[kCallClassCount];
  const Tool* tools[kMaxTools];
};

extern Registry g_registry MPE_HIDDEN;
extern __thread ThreadState t_state MPE_HIDDEN __attribute__((tls_model("initial-exec")));

// ~1 ns: one TLS address computation.
inline ThreadState& thread_state() { return t_state; }

// True when this call is not the tools' own or a binding's internals. (With no tool registered
// the hook loops are empty, so no registry check is needed here: one load and branch fewer.)
inline bool observing(const ThreadState& ts) { return ts.state < kSuppressed; }

// Brackets code whose MPI calls no tool may see.
inline void suppress(ThreadState& ts) { ts.state += kSuppressed; }
inline void unsuppress(ThreadState& ts) { ts.state -= kSuppressed; }

// Fills a Call with a pattern that no valid field holds (pointers become non-canonical
// addresses), so that a tool reading a field its role bit does not promise fails loudly in the
// tests. Only in builds configured with MPE_POISON_CALLS=ON; otherwise free.
inline void poison([[maybe_unused]] Call& call) {
#ifdef MPE_POISON_CALLS
  __builtin_memset(static_cast<void*>(&call), 0xA5, sizeof call);
#endif
}

inline bool wants_status() { return (g_registry.needs & kNeedsStatus) != 0; }

// At least `bytes` of the thread's buffer `which`, or nullptr when it cannot grow. Amortised: a
// buffer doubles, so a thread allocates O(log n) times in its life. Not for use inside a hook.
void* scratch(ThreadState& ts, Scratch which, size_t bytes) noexcept MPE_HIDDEN;

// Storage for n statuses when the application passed MPI_STATUSES_IGNORE, or MPI_STATUSES_IGNORE
// when it cannot grow (the tools then see no statuses).
MPI_Status* status_scratch(ThreadState& ts, int n) MPE_HIDDEN;

// Hooks 1..n-1 of a list, in order or in reverse: out of line, because one tool is the common case
// and the loop would cost the wrappers registers.
void call_rest(const HookList& hooks, Call& call) MPE_HIDDEN;
void call_rest_reversed(const HookList& hooks, Call& call) MPE_HIDDEN;

// Where a wrapper's instructions go: MPI_Iprobe under the do-nothing tool adds 70-71 (callgrind,
// bench/instructions_per_call.sh; counted in the disassembly of libmpenull.so,
// GCC 12 -O2, on the path that neither wants time nor status):
//   11  the frame: four callee-saved registers pushed and popped, the Call's stack space, the ret
//    4  the thread state's TLS address and load, and the observing() test
//    3  the status substitution's test of Registry::needs
//   12  filling the Call: fn/cls/mode in one store, flags, depth, roles, the return address (a
//       load and a store) and the five argument fields
//    7  the five arguments read back from the Call for PMPI_Iprobe, its return code kept
//    9  the TLS stores (and one load) that suppress and release the tools around each hook
//   18  two hook dispatches: the list's length loaded and tested, the Call's address, the
//       indirect call, the test for a second tool, and the empty hook's return
//    5  the two tests of kNeedsTime, the first reloaded after the opaque hook call
//    2  the call to PMPI_Iprobe and its jump through the PLT
// Reaching 40 means not filling a Call the loaded tool does not read: wrappers generated per
// tool, its hooks inlined when it is alone, with this generic path kept for stacked tools.

// Runs the enter hooks in registration order, then stamps the time. Cost: two TLS stores and
// one indirect call per interested tool, plus the clock read when a tool asked for time. `cls`
// is call.cls, passed as the wrapper's constant so that the hook list's address is one too.
__attribute__((always_inline)) inline void enter(ThreadState& ts, Call& call, CallClass cls) {
  const uint32_t s = ts.state;  // observing() held, so nothing is suppressed
  call.depth = static_cast<uint8_t>(s);
  if (cls == CallClass::kMrecv) call.message_in = *call.message;  // a constant test: no cost elsewhere
  const HookList& hooks = g_registry.enter[static_cast<int>(cls)];
  if (const int n = hooks.n) {
    ts.state = s + kSuppressed;
    hooks.hook[0](call);  // the common case, one tool, without loop overhead
    if (__builtin_expect(n > 1, 0)) call_rest(hooks, call);
  }
  ts.state = s + 1;
  if (g_registry.needs & kNeedsTime) call.t_enter = clock::now();
}

// Stamps the time, then runs the leave hooks in reverse order so that hooks nest.
__attribute__((always_inline)) inline void leave(ThreadState& ts, Call& call, CallClass cls) {
  if (g_registry.needs & kNeedsTime) call.t_leave = clock::now();
  const uint32_t s = ts.state - 1;
  const HookList& hooks = g_registry.leave[static_cast<int>(cls)];
  if (const int n = hooks.n) {
    ts.state = s + kSuppressed;
    if (__builtin_expect(n > 1, 0)) call_rest_reversed(hooks, call);
    hooks.hook[0](call);
  }
  ts.state = s;
}

// Life cycle: after MPI_Init(_thread) succeeded, and before PMPI_Finalize runs.
void after_init(ThreadState& ts) MPE_HIDDEN;
void before_finalize(ThreadState& ts) MPE_HIDDEN;

}  // namespace mpe::core
