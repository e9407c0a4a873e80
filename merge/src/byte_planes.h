// The byte planes of an events chunk, for the chunk codec (chunk_codec.cpp); the shuffle itself,
// shuffle_records, is declared in mpe/chunk_codec.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "mpe/log_format.h"
#include "mpe/status.h"

namespace mpe::format {

// The inverse of shuffle_records(): the same transposes (a transpose is its own inverse), then the
// running sum of the time deltas. The planes are `stride` bytes apart at `in`.
void unshuffle_records(const char* in, uint32_t n, size_t stride, Record* out);
// Splits the 32 planes of a shuffled buffer (`stride` bytes apart) into constant, sparse and
// varying ones: the plane header to `head`, the varying planes and then the sparse ones'
// exceptions to `body` (raw_size bytes). Returns the body's size.
size_t split_planes(const char* shuffled, uint32_t n, size_t stride, std::string* head, char* body);
// Writes a sparse plane's `count` exceptions from [*at, end) into `plane`, moving *at past them.
Status apply_exceptions(const char** at, const char* end, uint32_t count, uint32_t n, char* plane);

}  // namespace mpe::format
