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

// What a wrapper knows of its call when it is compiled: the same values as the Call's fields, but
// constants. A solo tool's hooks may take it (H::enter(Call&, Shape)), and their tests on the
// class, the roles or the mode then fold, wherever they sit: a field read back from the Call after
// any call out of line (a clock's fallback, a hook's rare case) is a load and a test.
struct Shape {
  Fn fn;
  CallClass cls;
  Mode mode;
  uint64_t roles;
};

// How a wrapper reaches the hooks. Every wrapper body is a template over one of two (generated in
// wrapper_bodies.h):
//   Registered  through the registry: any number of tools, from any tool library. ~70
//               instructions per MPI_Iprobe with a do-nothing tool (callgrind,
//               bench/instructions_per_call.sh): the frame (11), the Call filled (12) and read
//               back (7), the thread state around each hook (13), two indirect hook dispatches
//               (18), the needs tests (8) and the PMPI call (2).
//   Solo<H>     one tool's hooks called directly, known at compile time: a tool library's own
//               wrappers of the per-message routines (wrappers_solo.cpp) take it while its tool is
//               the only one registered (g_solo). The compiler then drops the dispatches, the
//               needs tests and every Call field the inlined hooks do not read: 14 instructions
//               per MPI_Iprobe with the do-nothing tool (the g_solo test, the thread state
//               loaded, tested, raised and restored, one register saved, the PMPI call). A
//               Call whose address reaches an out-of-line function (a hook's rare case) is still
//               filled whole, as the compiler cannot tell which fields that function reads.
// H, a tool's hooks (see null_hooks.h): kNeeds, kEnterClasses, kLeaveClasses and static
// enter(Call&)/leave(Call&), the same functions the tool registers (solo_tool<H> builds its Tool).
struct Registered {
  static bool needs(uint32_t what) { return (g_registry.needs & what) != 0; }
  // Whether the wrapper passes PMPI_X its arguments as read back from the Call: when an opaque
  // hook runs before PMPI_X, they would otherwise have to be kept in callee-saved registers across
  // it (pushed and popped); where no hook runs, the arguments are still in their registers.
  static constexpr bool reads_back(CallClass) { return true; }
  static constexpr bool kEnterSeesTime = false;  // the stamp follows the enter hooks
  static void run_enter(ThreadState& ts, uint32_t s, Call& call, Shape shape) {
    const HookList& hooks = g_registry.enter[static_cast<int>(shape.cls)];
    if (const int n = hooks.n) {
      ts.state = s + kSuppressed;
      hooks.hook[0](call);  // the common case, one tool, without loop overhead
      if (__builtin_expect(n > 1, 0)) call_rest(hooks, call);
    }
  }
  static void run_leave(ThreadState& ts, uint32_t s, Call& call, Shape shape) {
    const HookList& hooks = g_registry.leave[static_cast<int>(shape.cls)];
    if (const int n = hooks.n) {
      ts.state = s + kSuppressed;
      if (__builtin_expect(n > 1, 0)) call_rest_reversed(hooks, call);
      hooks.hook[0](call);
    }
  }
};

constexpr bool in_classes(uint64_t set, CallClass cls) {
  return set == kEveryClass || ((set >> static_cast<int>(cls)) & 1) != 0;
}

template <class H>
struct Solo {
  static constexpr bool needs(uint32_t what) { return (H::kNeeds & what) != 0; }
  // Whether H's enter hook reads call.t_enter: then the core stamps it before the hook, and the
  // routine's time includes the hook's (liblive: its slot's "since" is that stamp, one clock read
  // fewer). Optional in H; false without it.
  static constexpr bool kEnterSeesTime = [] {
    if constexpr (requires { H::kEnterSeesTime; })
      return H::kEnterSeesTime;
    else
      return false;
  }();
  // An enter hook runs before PMPI_X, or a clock read whose fallback (clock_gettime) is a call.
  static constexpr bool reads_back(CallClass cls) {
    return in_classes(H::kEnterClasses, cls) || needs(kNeedsTime);
  }
  __attribute__((always_inline)) static void run_enter(ThreadState& ts, uint32_t s, Call& call, Shape shape) {
    if (in_classes(H::kEnterClasses, shape.cls)) {
      ts.state = s + kSuppressed;
      // A hook may also take the call's Shape, or its class alone, as an argument: constants
      // here, where reading call.cls back would be a load (the compiler cannot keep a field of a
      // Call whose address escapes).
      if constexpr (requires(Call & c, Shape k) { H::enter(c, k); })
        H::enter(call, shape);
      else if constexpr (requires(Call & c, CallClass k) { H::enter(c, k); })
        H::enter(call, shape.cls);
      else
        H::enter(call);
    }
  }
  __attribute__((always_inline)) static void run_leave(ThreadState& ts, uint32_t s, Call& call, Shape shape) {
    if (in_classes(H::kLeaveClasses, shape.cls)) {
      ts.state = s + kSuppressed;
      if constexpr (requires(Call & c, Shape k) { H::leave(c, k); })
        H::leave(call, shape);
      else if constexpr (requires(Call & c, CallClass k) { H::leave(c, k); })
        H::leave(call, shape.cls);
      else
        H::leave(call);
    }
  }
  // Whether the registered `tool` is H exactly: the same hooks, needs and classes (liblog widens
  // its classes at run time for MPE_LOG_PVARS, and then takes the registry's path).
  static bool accepts(const Tool& tool) {
    return tool.enter == static_cast<Hook>(&H::enter) && tool.leave == static_cast<Hook>(&H::leave) &&
           tool.needs == H::kNeeds && tool.enter_classes == H::kEnterClasses &&
           tool.leave_classes == H::kLeaveClasses;
  }
};

// The Tool a tool registers, made from its hooks H, so that Solo<H>::accepts recognises it.
template <class H>
constexpr Tool solo_tool(const char* name, void (*after_init)() noexcept,
                         void (*before_finalize)() noexcept) {
  return Tool{name,
              H::kNeeds,
              static_cast<Hook>(&H::enter),
              static_cast<Hook>(&H::leave),
              after_init,
              before_finalize,
              H::kEnterClasses,
              H::kLeaveClasses};
}

// True while the only registered tool is the one this library's wrappers_solo.cpp was compiled
// for; set at registration, before main().
extern bool g_solo MPE_HIDDEN;
// Defined in wrappers_solo.cpp: whether `tool` is that library's own (always false in a library
// built without one).
bool solo_accepts(const Tool& tool) MPE_HIDDEN;

// Runs the enter hooks (in registration order), then stamps the time, so that the hooks' time is
// not the routine's; or, for a solo tool whose enter hook reads the stamp (kEnterSeesTime), stamps
// first. `shape` is the wrapper's constant copy of the call's routine, class, mode and roles, so
// that the hook list's address, or the solo tool's tests, are constants too.
template <class Hooks>
__attribute__((always_inline)) inline void enter(ThreadState& ts, Call& call, Shape shape) {
  const uint32_t s = ts.state;  // observing() held, so nothing is suppressed
  call.depth = static_cast<uint8_t>(s);
  if (shape.cls == CallClass::kMrecv) call.message_in = *call.message;  // a constant test: no cost elsewhere
  if (Hooks::kEnterSeesTime && Hooks::needs(kNeedsTime)) call.t_enter = clock::now();
  Hooks::run_enter(ts, s, call, shape);
  ts.state = s + 1;
  if (!Hooks::kEnterSeesTime && Hooks::needs(kNeedsTime)) call.t_enter = clock::now();
}

// Stamps the time, then runs the leave hooks in reverse order so that hooks nest.
template <class Hooks>
__attribute__((always_inline)) inline void leave(ThreadState& ts, Call& call, Shape shape) {
  if (Hooks::needs(kNeedsTime)) call.t_leave = clock::now();
  const uint32_t s = ts.state - 1;
  Hooks::run_leave(ts, s, call, shape);
  ts.state = s;
}

// Life cycle: after MPI_Init(_thread) succeeded, and before PMPI_Finalize runs.
void after_init(ThreadState& ts) MPE_HIDDEN;
void before_finalize(ThreadState& ts) MPE_HIDDEN;

}  // namespace mpe::core
