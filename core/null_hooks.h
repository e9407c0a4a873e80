// The do-nothing tool's hooks (null_tool.cpp), inline for its library's own wrappers (mpe/core.h,
// Solo): what a tool's wrapper costs when it is the only tool loaded.
#pragma once
#include "mpe/core.h"

namespace mpe::null_tool {

struct Hooks {
  static constexpr uint32_t kNeeds = 0;
  static constexpr uint64_t kEnterClasses = kEveryClass;
  static constexpr uint64_t kLeaveClasses = kEveryClass;
  static void enter(Call&) noexcept {}
  static void leave(Call&) noexcept {}
};

}  // namespace mpe::null_tool
