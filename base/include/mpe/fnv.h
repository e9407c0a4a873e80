// FNV-1a, the suite's hash of a byte string when it only has to tell strings apart (a host name, a
// Python call site's text): one place for the constants.
#pragma once

#include <cstdint>
#include <string_view>

namespace mpe {

inline constexpr uint64_t kFnvOffset = 1469598103934665603ull;
inline constexpr uint64_t kFnvPrime = 1099511628211ull;

inline uint64_t fnv1a(std::string_view bytes) {
  uint64_t h = kFnvOffset;
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * kFnvPrime;
  return h;
}

}  // namespace mpe
