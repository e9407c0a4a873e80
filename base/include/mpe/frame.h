// A symbolized code address, and what makes two call sites the same: shared by the runtime's
// symbolizer (core/), the logfile's call-site definitions (merge/) and every report.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpe {

class ByteWriter;
class ByteReader;

// One code address, symbolized. What is unknown stays empty (or 0), except the function, which
// falls back to "0x<offset in module>" without a symbol and "0x<address>" outside every module.
struct Frame {
  std::string function;  // demangled
  std::string file;      // source file from the line table (needs debug information)
  int line = 0;
  std::string module;    // path of the executable or shared library
  uintptr_t offset = 0;  // the address relative to the module's load address (PIE and libraries alike)
};

// Returns "function at file:line (module file name)", leaving out what is unknown; empty when
// out of memory.
std::string frame_text(const Frame& frame) noexcept;

// Returns the last component of a path ("flood.c" for "/src/samples/flood.c").
std::string_view base_name(std::string_view path) noexcept;

// What makes two call sites, of any ranks, the same: the function, file and line of each frame,
// innermost first; for a frame without a source line, its module's file name and offset (the
// same on every rank, PIE or not). Throws std::bad_alloc.
std::string callsite_key(const std::vector<Frame>& frames);

// A call site for people: "halo.c:42 (exchange)" for the innermost frame, "libfoo.so+0x1a2b
// (exchange)" without a source line, then " <- main.c:10 (main)" for each outer frame; "?" for no
// frame. Throws std::bad_alloc.
std::string callsite_text(const std::vector<Frame>& frames);

// A frame in the tools' gather encoding (byte_codec.h): function, file, line, module, offset.
void encode_frame(ByteWriter& out, const Frame& frame);
// Reads what encode_frame wrote; false (and *frame partly filled) on truncated bytes.
bool decode_frame(ByteReader& in, Frame* frame);
// Frames as a count then each frame; decode_frames rejects a count the bytes cannot hold.
void encode_frames(ByteWriter& out, const std::vector<Frame>& frames);
bool decode_frames(ByteReader& in, std::vector<Frame>* frames);

}  // namespace mpe
