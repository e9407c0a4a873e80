// MPE_STACK's syntax, stated once: libmpestack reads it (core/src/stack.cpp) and `mpe run --stack`
// writes it (cli/stack_layers.cpp). Header-only and free of MPI so that `mpe`, which links no MPI,
// shares it; it neither allocates nor throws, as libmpestack's loader may not.
#pragma once

#include <cstddef>
#include <string_view>

namespace mpe::stack {

// The most layers one stack holds, ours included: every routine's dispatch table has one slot per
// layer (mpe/stack.h), and `mpe run` refuses a longer list before launching.
inline constexpr int kMaxLayers = 16;
// The entry that stands for the suite's own tools, placing them among the foreign layers.
inline constexpr std::string_view kSuiteEntry = "mpe";
// What separates the entries, so a library whose path holds one cannot be listed.
inline constexpr char kSeparator = ',';

// Takes the next non-empty entry off the front of `rest` into `entry`, or returns false when none
// is left.
inline bool next_entry(std::string_view& rest, std::string_view* entry) noexcept {
  while (!rest.empty()) {
    const size_t end = rest.find(kSeparator);
    *entry = rest.substr(0, end);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (!entry->empty()) return true;  // "A.so,,B.so" and a trailing comma name nothing more
  }
  return false;
}

}  // namespace mpe::stack
