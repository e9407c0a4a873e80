// The one table of outstanding MPI requests a tool follows (liblog: what each request is;
// libmpetime: which requests are receives), keyed by the request handle.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace mpe {

// Open addressing with linear probing and backward-shift deletion (no tombstones, so probe runs
// stay short however many requests come and go). ~3-5 ns per find, put or erase. Grows by
// doubling when half full; that is its only allocation, amortized, and a failed one is reported
// by put() returning false (the table stays valid; the request is just not followed). Not
// thread-safe: each thread owns its table.
template <typename Value>
class RequestTable {
  static_assert(std::is_trivially_copyable_v<Value>, "entries are moved with memcpy");

 public:
  RequestTable() = default;
  RequestTable(const RequestTable&) = delete;
  RequestTable& operator=(const RequestTable&) = delete;
  ~RequestTable() { std::free(slots_); }

  // The value stored under r, or null.
  Value* find(MPI_Request r) {
    if (!slots_) return nullptr;
    const uint64_t k = key(r);
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      if (!slots_[i].used) return nullptr;
      if (slots_[i].key == k) return &slots_[i].value;
    }
  }

  // Stores value under r (MPI_REQUEST_NULL is ignored). When r was already present, its old value
  // goes to *replaced (if given) and *had is set. False when the table could not grow.
  bool put(MPI_Request r, const Value& value, Value* replaced = nullptr, bool* had = nullptr) {
    if (r == MPI_REQUEST_NULL) return true;
    if (Value* old = find(r)) {
      if (replaced) *replaced = *old;
      if (had) *had = true;
      *old = value;
      return true;
    }
    if (2 * (count_ + 1) > capacity_ && !grow()) return false;
    insert(key(r), value);
    return true;
  }

  // Forgets r, if present.
  void erase(MPI_Request r) {
    if (!slots_) return;
    const uint64_t k = key(r);
    size_t i = home(k);
    while (slots_[i].used && slots_[i].key != k) i = (i + 1) & mask_;
    if (!slots_[i].used) return;
    slots_[i].used = false;
    --count_;
    // Move later entries of the run back into the hole unless their home lies cyclically in (i, j].
    for (size_t j = i;;) {
      j = (j + 1) & mask_;
      if (!slots_[j].used) return;
      const size_t h = home(slots_[j].key);
      if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
        slots_[i] = slots_[j];
        slots_[j].used = false;
        i = j;
      }
    }
  }

  size_t size() const { return count_; }

 private:
  struct Slot {
    uint64_t key;
    bool used;
    Value value;
  };
  static constexpr size_t kInitialCapacity = 4096;

  static uint64_t key(MPI_Request r) {
    uint64_t k = 0;
    std::memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
  }
  // Fibonacci hashing: the top bits of the product spread handles that differ in low bits.
  size_t home(uint64_t k) const { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> shift_); }

  void insert(uint64_t k, const Value& value) {
    size_t i = home(k);
    while (slots_[i].used) i = (i + 1) & mask_;
    slots_[i].key = k;
    slots_[i].used = true;
    slots_[i].value = value;
    ++count_;
  }

  bool grow() {
    const size_t n = capacity_ ? 2 * capacity_ : kInitialCapacity;
    auto* fresh = static_cast<Slot*>(std::calloc(n, sizeof(Slot)));
    if (!fresh) return false;
    Slot* old = slots_;
    const size_t old_capacity = capacity_;
    slots_ = fresh;
    capacity_ = n;
    mask_ = n - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(n));
    count_ = 0;
    for (size_t i = 0; i < old_capacity; ++i)
      if (old[i].used) insert(old[i].key, old[i].value);
    std::free(old);
    return true;
  }

  Slot* slots_ = nullptr;
  size_t capacity_ = 0;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t count_ = 0;
};

}  // namespace mpe
