// MPI_T performance-variable classes and how their values are recorded: the vocabulary the runtime
// (core/mpit, liblog, libmpetime) and the offline side (the logfile's counter definitions, the
// reader) share. Our own numbering: MPI libraries number the classes differently, so the runtime
// converts from the MPI_T_PVAR_CLASS_* macros (core/src/mpit_info.cpp) and never stores theirs.
#pragma once

#include <cstdint>

namespace mpe {

enum class PvarClass : uint8_t {
  kState = 0,
  kLevel = 1,
  kSize = 2,
  kPercentage = 3,
  kHighWatermark = 4,
  kLowWatermark = 5,
  kCounter = 6,
  kAggregate = 7,
  kTimer = 8,
  kGeneric = 9,
};
inline constexpr int kPvarClassCount = 10;

// How a variable's samples are recorded (Caliper's MPI_T service): counters, timers and
// aggregates as deltas; levels, sizes, percentages, states and generic values as values;
// watermarks as values plus the count of changes.
enum class PvarSemantics : uint8_t { kDelta = 0, kValue = 1, kWatermark = 2 };

// How a variable's value is stored in 64 bits: unsigned, two's complement, or an IEEE double.
enum class PvarValueKind : uint8_t { kUnsigned = 0, kSigned = 1, kDouble = 2 };

inline PvarSemantics pvar_semantics(PvarClass c) {
  switch (c) {
    case PvarClass::kCounter:
    case PvarClass::kAggregate:
    case PvarClass::kTimer:
      return PvarSemantics::kDelta;
    case PvarClass::kHighWatermark:
    case PvarClass::kLowWatermark:
      return PvarSemantics::kWatermark;
    default:
      return PvarSemantics::kValue;
  }
}

// "level", "counter", ... as the MPI standard names the classes (lower case, no prefix).
inline const char* pvar_class_name(PvarClass c) {
  static constexpr const char* kNames[kPvarClassCount] = {
      "state",        "level",   "size",      "percentage", "highwatermark",
      "lowwatermark", "counter", "aggregate", "timer",      "generic"};
  const auto i = static_cast<unsigned>(c);
  return i < kPvarClassCount ? kNames[i] : "?";
}

inline const char* pvar_semantics_name(PvarSemantics s) {
  return s == PvarSemantics::kDelta ? "delta" : s == PvarSemantics::kWatermark ? "watermark" : "value";
}

}  // namespace mpe
