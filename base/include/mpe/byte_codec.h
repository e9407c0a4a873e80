// Bounds-checked little-endian serialization: the one byte encoding of the logfile's definitions,
// the OTF2 writer's scratch tables, libumq's per-rank call sites and what the processes of a
// spread `mpe stat` exchange.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace mpe {

class ByteWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  // A value as its bytes, for what one binary writes and the same binary reads (the processes of
  // one job): no layout to keep stable.
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    raw(&v, sizeof v);
  }
  std::string& data() { return buf_; }

 private:
  std::string buf_;
};

// Every read returns false, and reads nothing, when fewer bytes are left than it needs.
class ByteReader {
 public:
  ByteReader(const char* p, size_t n) : p_(p), end_(p + n) {}
  bool u8(uint8_t* v) { return raw(v, 1); }
  bool u32(uint32_t* v) { return raw(v, 4); }
  bool u64(uint64_t* v) { return raw(v, 8); }
  bool i64(int64_t* v) { return raw(v, 8); }
  bool f64(double* v) { return raw(v, 8); }
  bool str(std::string* s);
  bool raw(void* out, size_t n);
  // The next n bytes in place (*at points at them), skipped; false when fewer are left.
  bool view(size_t n, const char** at) {
    if (left() < n) return false;
    *at = p_;
    p_ += n;
    return true;
  }
  // ByteWriter::pod's value; T{} when too few bytes are left.
  template <class T>
  T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v{};
    raw(&v, sizeof v);
    return v;
  }
  // A count of items that take at least min_item_bytes each: false when that many could not fit
  // in what is left, so a damaged count cannot ask for a huge allocation.
  bool count(uint32_t* n, size_t min_item_bytes) {
    return u32(n) && static_cast<size_t>(*n) * min_item_bytes <= left();
  }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace mpe
