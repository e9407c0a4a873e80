// What a tool hands the core: its hooks and what it needs. See docs/WRITING_A_TOOL.md.
#pragma once

#include <cstdint>

#define MPE_EXPORT __attribute__((visibility("default")))
#define MPE_HIDDEN __attribute__((visibility("hidden")))
// The application's call site, read in the function it called (a wrapper, or a stack entry).
#define MPE_RETURN_ADDRESS() reinterpret_cast<uintptr_t>(__builtin_return_address(0))

namespace mpe {

struct Call;

// A hook must not throw and should not call MPI_ functions (use PMPI_ ones); calls it makes
// anyway bypass all tools. It may read the Call's argument fields but must not change them: the
// wrapper forwards those fields to PMPI_X.
using Hook = void (*)(Call&) noexcept;

inline constexpr uint32_t kNeedsTime = 1;    // fill Call::t_enter / t_leave
inline constexpr uint32_t kNeedsStatus = 2;  // replace MPI_STATUS(ES)_IGNORE with real storage

// A set of call classes (mpe::CallClass) as a bit mask, for Tool::enter_classes/leave_classes:
// mpe::classes(CallClass::kWait, CallClass::kTest).
template <typename... Class>
constexpr uint64_t classes(Class... c) {
  return ((uint64_t{1} << static_cast<int>(c)) | ...);
}
inline constexpr uint64_t kEveryClass = 0;  // the default: the hook sees every call

struct Tool {
  const char* name;
  uint32_t needs;
  Hook enter;                          // may be null
  Hook leave;                          // may be null
  void (*after_init)() noexcept;       // MPI is up; may be null
  void (*before_finalize)() noexcept;  // last chance for MPI traffic; may be null
  // The classes of calls each hook is called for; a call of another class skips the hook at no
  // cost. kEveryClass (0, so a tool that leaves these out sees everything) for all.
  uint64_t enter_classes = kEveryClass;
  uint64_t leave_classes = kEveryClass;
};

}  // namespace mpe

extern "C" {
// Registers a tool with the one active core of the process. Call it from a constructor.
// Returns 0, or -1 when the registry is full. Exported so that, whichever tool library the
// loader found first, every tool registers with that library's core.
MPE_EXPORT int mpe_core_register_tool(const mpe::Tool* tool);
// The rank in MPI_COMM_WORLD, or -1 before MPI_Init.
MPE_EXPORT int mpe_core_world_rank();
}
