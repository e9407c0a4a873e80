// HandleMap: the tools' registry of MPI handles (communicators, windows) -> a 64-bit value,
// filled by its writers under their own lock and read by any thread without one. liblog keeps
// its communicator indices and windows in one, liblive its communicators.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpe {

// Open addressing with linear probing, no deletion: an entry is written value first, key
// second, so a reader that sees the key sees the value. A freed handle's entry stays until MPI
// reuses the handle and put() overwrites it. Lookup ~2-5 ns. Declare instances `constinit`
// (static storage, zero pages): with a dynamic initializer the compiler would touch every slot
// at load, in every process.
template <typename Handle, size_t kSlots>
class HandleMap {
 public:
  // Stores value under h; false when the map is full. Writers must be serialised by the caller.
  bool put(Handle h, uint64_t value) noexcept {
    const uint64_t k = key(h);
    for (size_t i = home(k), n = 0; n < kSlots; i = (i + 1) % kSlots, ++n) {
      const uint64_t s = slots_[i].key.load(std::memory_order_relaxed);
      if (s == k || s == 0) {
        slots_[i].value.store(value, std::memory_order_release);
        slots_[i].key.store(k, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  // The value stored under h into *value; false when h was never put.
  bool find(Handle h, uint64_t* value) const noexcept {
    const uint64_t k = key(h);
    for (size_t i = home(k), n = 0; n < kSlots; i = (i + 1) % kSlots, ++n) {
      const uint64_t s = slots_[i].key.load(std::memory_order_acquire);
      if (s == k) {
        *value = slots_[i].value.load(std::memory_order_acquire);
        return true;
      }
      if (s == 0) return false;
    }
    return false;
  }

 private:
  // Bit 63 set, so that no handle's key is 0, the empty slot.
  static uint64_t key(Handle h) {
    uint64_t k = 0;
    std::memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return k | (uint64_t{1} << 63);
  }
  static size_t home(uint64_t k) { return (k * 0x9E3779B97F4A7C15ull >> 40) % kSlots; }

  struct Slot {
    std::atomic<uint64_t> key;
    std::atomic<uint64_t> value;
  };
  Slot slots_[kSlots] = {};
};

}  // namespace mpe
