// The hash that spreads communicator handles over libumq's open-addressed communicator table.
#pragma once

#include <cstdint>

namespace mpe::libumq {

// The first slot to probe for `key`: murmur3's finalizer, a few cycles, no table lookups.
inline uint32_t table_hash(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return static_cast<uint32_t>(key);
}

}  // namespace mpe::libumq
