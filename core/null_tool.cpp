// A tool that registers empty hooks: measures what the core alone adds to each MPI call.
#include "mpe/core.h"
#include "null_hooks.h"

namespace {

constexpr mpe::Tool kNullTool = mpe::core::solo_tool<mpe::null_tool::Hooks>("null", nullptr, nullptr);

__attribute__((constructor)) void register_null_tool() { mpe_core_register_tool(&kNullTool); }

}  // namespace
