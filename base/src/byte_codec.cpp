// The byte reader's out-of-line reads (see byte_codec.h).
#include "mpe/byte_codec.h"

#include <cstring>

namespace mpe {

bool ByteReader::raw(void* out, size_t n) {
  if (left() < n) return false;
  std::memcpy(out, p_, n);
  p_ += n;
  return true;
}

bool ByteReader::str(std::string* s) {
  uint32_t n;
  if (!u32(&n) || left() < n) return false;
  s->assign(p_, n);
  p_ += n;
  return true;
}

}  // namespace mpe
