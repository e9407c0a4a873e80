// Frames as text (reports) and in the gather encoding.
#include "mpe/frame.h"

#include <cstdio>
#include <new>

#include "mpe/byte_codec.h"

namespace mpe {

namespace {
std::string hex(uintptr_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%jx", static_cast<uintmax_t>(v));
  return buf;
}

// "file.c:42 (function)" or "module+0x1a2b (function)".
std::string short_frame(const Frame& f) {
  std::string text = f.file.empty() ? std::string(base_name(f.module)) + "+" + hex(f.offset)
                                    : std::string(base_name(f.file)) + ":" + std::to_string(f.line);
  return text + " (" + f.function + ")";
}
}  // namespace

std::string frame_text(const Frame& frame) noexcept {
  try {
    std::string text = frame.function;
    if (!frame.file.empty()) text += " at " + frame.file + ":" + std::to_string(frame.line);
    if (!frame.module.empty()) {
      text += " (";
      text += base_name(frame.module);
      text += ")";
    }
    return text;
  } catch (const std::bad_alloc&) {
    return {};
  }
}

std::string_view base_name(std::string_view path) noexcept {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string callsite_key(const std::vector<Frame>& frames) {
  std::string key;
  for (const Frame& f : frames) {
    key += f.function;
    key += '\t';
    if (f.file.empty()) {
      key += base_name(f.module);
      key += '+' + hex(f.offset);
    } else {
      key += f.file + ':' + std::to_string(f.line);
    }
    key += '\n';
  }
  return key;
}

std::string callsite_text(const std::vector<Frame>& frames) {
  if (frames.empty()) return "?";
  std::string text = short_frame(frames[0]);
  for (size_t i = 1; i < frames.size(); ++i) text += " <- " + short_frame(frames[i]);
  return text;
}

void encode_frame(ByteWriter& out, const Frame& frame) {
  out.str(frame.function);
  out.str(frame.file);
  out.i64(frame.line);
  out.str(frame.module);
  out.u64(frame.offset);
}

bool decode_frame(ByteReader& in, Frame* frame) {
  int64_t line = 0;
  uint64_t offset = 0;
  if (!in.str(&frame->function) || !in.str(&frame->file) || !in.i64(&line) || !in.str(&frame->module) ||
      !in.u64(&offset))
    return false;
  frame->line = static_cast<int>(line);
  frame->offset = static_cast<uintptr_t>(offset);
  return true;
}

void encode_frames(ByteWriter& out, const std::vector<Frame>& frames) {
  out.u32(static_cast<uint32_t>(frames.size()));
  for (const Frame& f : frames) encode_frame(out, f);
}

bool decode_frames(ByteReader& in, std::vector<Frame>* frames) {
  constexpr size_t kMinFrameBytes = 4 + 4 + 8 + 4 + 8;  // three empty strings, line, offset
  uint32_t n = 0;
  if (!in.count(&n, kMinFrameBytes)) return false;
  frames->clear();
  frames->reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    Frame f;
    if (!decode_frame(in, &f)) return false;
    frames->push_back(std::move(f));
  }
  return true;
}

}  // namespace mpe
