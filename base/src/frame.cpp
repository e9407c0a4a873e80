#include "mpe/frame.h"

#include <cstdio>
#include <new>

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

}  // namespace mpe
