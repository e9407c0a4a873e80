// libmpestack: several PMPI tools in one run, each unmodified (docs/stack.md). The seed design is
// Open MPI's pull request #6245: one array of function pointers per MPI routine, one entry per
// layer, and a thread-local level. `MPI_X` enters at the caller's own level (the top, for the
// application); `PMPI_X` from level k goes to the first level below k that defines X; the MPI
// library is the bottom level, so what it calls internally never climbs back into a tool.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <type_traits>

#include "mpe/calls.h"
#include "mpe/stack_list.h"
#include "mpe/tool.h"

namespace mpe::stack {

// t_level outside every layer: the application.
inline constexpr int kApplication = -2;
// t_level inside the MPI's Fortran binding entered from the application: its C calls go to the
// top layer, as the application's do (the Fortran entry points sit above every layer).
inline constexpr int kFortranBinding = -1;

// One routine: its function in each layer (null where the layer does not define it; the last
// is the MPI library's PMPI_X) and, from each level, the first level at or below it that does.
struct Routine {
  void* fn[kMaxLayers + 1];
  int8_t next[kMaxLayers + 1];
};

// The layers; g_mpe_layer is the suite's own (called with the application's call site first), or
// -1. Filled once, at the process's first MPI call (load()).
extern Routine g_routines[kFnCount] MPE_HIDDEN;
extern int g_layers MPE_HIDDEN;  // the MPI library's level
extern int g_mpe_layer MPE_HIDDEN;
extern bool g_loaded MPE_HIDDEN;

extern __thread int t_level MPE_HIDDEN __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t t_caller MPE_HIDDEN __attribute__((tls_model("initial-exec")));

// Loads MPE_STACK's layers (once; later calls return at once).
MPE_HIDDEN void load();
// MPI_Pcontrol(level) through every layer from `start` that defines it, then the MPI library.
MPE_HIDDEN int pcontrol_from(int start, int level);

// Where MPI_X starts: at the caller's own level (re-entering it, as plain PMPI gives a tool
// that calls MPI_Y in its wrapper), the top for the application. A handle conversion called by
// the MPI's Fortran binding (`kConversion`) is the binding's own: it goes to the MPI library.
template <bool kConversion>
inline int start_for_mpi(uintptr_t return_address) {
  const int level = t_level;
  if (level == kApplication) t_caller = return_address;
  if (kConversion && level == kFortranBinding) return kMaxLayers;
  return level < 0 ? 0 : level;
}

// Where PMPI_X starts: the level below the caller's. From the application (which rarely calls
// PMPI_X itself) and from the Fortran binding, that is the top, as in the seed design.
template <bool kConversion>
inline int start_for_pmpi(uintptr_t return_address) {
  const int level = t_level;
  if (level == kApplication) t_caller = return_address;
  if (kConversion && level == kFortranBinding) return kMaxLayers;
  return level < 0 ? 0 : level + 1;
}

// Per routine, what our layer calls to go on below it (generated, stack_c.cpp).
extern void* const kBelowMpe[kFnCount] MPE_HIDDEN;
MPE_HIDDEN int below_mpe_pcontrol(int level, ...);

// Runs routine `r` at `level`, with the thread's level set to it for the call's duration.
template <typename R, typename... A>
inline R run_at(const Routine& r, int level, A... args) {
  const int saved = t_level;
  t_level = level;
  if constexpr (std::is_void_v<R>) {
    reinterpret_cast<void (*)(A...)>(r.fn[level])(args...);
    t_level = saved;
  } else {
    const R result = reinterpret_cast<R (*)(A...)>(r.fn[level])(args...);
    t_level = saved;
    return result;
  }
}

// Runs routine `fn` at the first level from `start` that defines it. Our own layer runs at the
// MPI library's level, so that the calls our tools make themselves (their finalize reductions)
// reach no other layer; it goes on below through kBelowMpe.
template <typename R, typename... A>
inline R dispatch(Fn fn, int start, A... args) {
  if (!g_loaded) [[unlikely]]
    load();
  const int index = static_cast<int>(fn);
  const Routine& r = g_routines[index];
  const int level = r.next[start > g_layers ? g_layers : start];
  if (level != g_mpe_layer) [[likely]]
    return run_at<R>(r, level, args...);
  const int saved = t_level;
  t_level = g_layers;
  using Next = R (*)(A...);
  auto ours = reinterpret_cast<R (*)(uintptr_t, Next, A...)>(r.fn[level]);
  if constexpr (std::is_void_v<R>) {
    ours(t_caller, reinterpret_cast<Next>(kBelowMpe[index]), args...);
    t_level = saved;
  } else {
    const R result = ours(t_caller, reinterpret_cast<Next>(kBelowMpe[index]), args...);
    t_level = saved;
    return result;
  }
}

// Our layer's wrapper going on: to the first level below ours that defines `fn`.
template <typename R, typename... A>
inline R dispatch_below_mpe(Fn fn, A... args) {
  const Routine& r = g_routines[static_cast<int>(fn)];
  return run_at<R>(r, r.next[g_mpe_layer + 1], args...);
}

// The application entered the MPI's Fortran binding: its call site is recorded, and the C calls
// the binding makes start at the top.
struct FortranEntry {
  explicit FortranEntry(uintptr_t return_address) : saved(t_level) {
    if (saved == kApplication) {
      t_caller = return_address;
      t_level = kFortranBinding;
    }
  }
  ~FortranEntry() { t_level = saved; }
  FortranEntry(const FortranEntry&) = delete;
  FortranEntry& operator=(const FortranEntry&) = delete;
  int saved;
};

}  // namespace mpe::stack
