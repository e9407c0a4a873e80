// Reading the calling thread's Python frames (mpe/python_frames.h) without Python's headers or
// library: the tools are preloaded into every program, and only a Python one has an interpreter.
#include "mpe/python_frames.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string_view>

#include "mpe/config.h"

namespace mpe::core::python {

bool g_readable = false;

namespace {

// CPython 3.11's layout on x86-64 (Include/cpython/pystate.h, internal/pycore_frame.h,
// cpython/code.h, cpython/unicodeobject.h). tests/python/python_layout.c prints each from the
// installed headers under the name in its comment, and test_python_layout compares them.
constexpr size_t kThreadCFrame = 56;         // PyThreadState::cframe
constexpr size_t kCFrameCurrentFrame = 8;    // _PyCFrame::current_frame
constexpr size_t kFrameCode = 32;            // _PyInterpreterFrame::f_code
constexpr size_t kFramePrevious = 48;        // _PyInterpreterFrame::previous
constexpr size_t kFramePrevInstr = 56;       // _PyInterpreterFrame::prev_instr
constexpr size_t kFrameOwner = 69;           // _PyInterpreterFrame::owner
constexpr size_t kObjectType = 8;            // PyObject::ob_type
constexpr size_t kCodeFilename = 112;        // PyCodeObject::co_filename
constexpr size_t kCodeQualname = 128;        // PyCodeObject::co_qualname
constexpr size_t kCodeFirstTraceable = 168;  // PyCodeObject::_co_firsttraceable
constexpr size_t kCodeInstructions = 184;    // PyCodeObject::co_code_adaptive
constexpr size_t kStringLength = 16;         // PyASCIIObject::length
constexpr size_t kStringState = 32;          // PyASCIIObject::state
constexpr size_t kAsciiData = 48;            // sizeof(PyASCIIObject)
constexpr size_t kCompactUtf8 = 56;          // PyCompactUnicodeObject::utf8
constexpr size_t kCompactData = 72;          // sizeof(PyCompactUnicodeObject)
constexpr char kFrameOwnedByGenerator = 1;   // FRAME_OWNED_BY_GENERATOR
constexpr int kStateKindShift = 2;           // PyASCIIObject::state.kind
constexpr int kStateCompactShift = 5;        // PyASCIIObject::state.compact
constexpr int kStateAsciiShift = 6;          // PyASCIIObject::state.ascii
constexpr int kMaxFrames = 64;               // frames walked past frozen ones, at most

template <typename T>
T field(uintptr_t object, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(object + offset), sizeof value);
  return value;
}

struct Interpreter {
  void* (*this_thread_state)() = nullptr;     // PyGILState_GetThisThreadState
  int (*addr_to_line)(void*, int) = nullptr;  // PyCode_Addr2Line: walks the code's line table only
  uintptr_t code_type = 0, string_type = 0;   // &PyCode_Type, &PyUnicode_Type
  uintptr_t base = 0;                         // where the interpreter is loaded (dladdr)
};
Interpreter g_interpreter;

// Fills this library's g_interpreter: 0 no Python in the process, 1 readable, 2 a version the
// tools cannot read. Says nothing (mpe_core_python_state speaks, once per process).
int load_interpreter() {
  const auto version = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
  if (!version) return 0;
  Interpreter& p = g_interpreter;
  p.this_thread_state = reinterpret_cast<void* (*)()>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  p.addr_to_line = reinterpret_cast<int (*)(void*, int)>(dlsym(RTLD_DEFAULT, "PyCode_Addr2Line"));
  p.code_type = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "PyCode_Type"));
  p.string_type = reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, "PyUnicode_Type"));
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(version), &info)) p.base = reinterpret_cast<uintptr_t>(info.dli_fbase);
  const char* v = version();
  const bool known = v && std::strncmp(v, "3.11.", 5) == 0;
  return known && p.this_thread_state && p.addr_to_line && p.code_type && p.string_type ? 1 : 2;
}

bool is_string(uintptr_t s) { return s && field<uintptr_t>(s, kObjectType) == g_interpreter.string_type; }

// The string's UTF-8 bytes appended to out; "?" for a string in a form no code object uses.
void append_string(std::string& out, uintptr_t s) {
  if (!is_string(s)) {
    out += '?';
    return;
  }
  const auto length = static_cast<size_t>(field<intptr_t>(s, kStringLength));
  const auto state = field<uint32_t>(s, kStringState);
  const unsigned kind = (state >> kStateKindShift) & 7, compact = (state >> kStateCompactShift) & 1,
                 ascii = (state >> kStateAsciiShift) & 1;
  if (!compact) {
    out += '?';
  } else if (ascii) {
    out.append(reinterpret_cast<const char*>(s + kAsciiData), length);
  } else if (const auto utf8 = field<const char*>(s, kCompactUtf8)) {
    out += utf8;  // the interpreter's own cached encoding
  } else {
    for (size_t i = 0; i < length; ++i) {
      uint32_t c = kind == 1   ? field<uint8_t>(s, kCompactData + i)
                   : kind == 2 ? field<uint16_t>(s, kCompactData + 2 * i)
                               : field<uint32_t>(s, kCompactData + 4 * i);
      if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | c >> 6);
        out += static_cast<char>(0x80 | (c & 0x3F));
      } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | c >> 12);
        out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      } else {
        out += static_cast<char>(0xF0 | c >> 18);
        out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
        out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
      }
    }
  }
}

// The characters of an ASCII string object (an empty view for any other).
std::string_view ascii(uintptr_t string) {
  if (!is_string(string) || !((field<uint32_t>(string, kStringState) >> kStateAsciiShift) & 1)) return {};
  return {reinterpret_cast<const char*>(string + kAsciiData),
          static_cast<size_t>(field<intptr_t>(string, kStringLength))};
}

// Frames that are not the program's: the import machinery ("<frozen importlib._bootstrap>",
// between an import line and the module it runs: mpi4py's MPI_Init runs inside `from mpi4py
// import MPI`), and mpelog.py, MPE's logging API, whose caller is the line that logged.
bool is_ours(uintptr_t code) {
  const std::string_view file = ascii(field<uintptr_t>(code, kCodeFilename));
  return file.starts_with("<frozen ") || file.ends_with("/mpelog.py");
}

}  // namespace

bool detect() noexcept {
  static std::atomic<bool> detected{false};  // the common case: one load, no call
  if (detected.load(std::memory_order_acquire)) return g_readable;
  static std::once_flag once;
  std::call_once(once, [] {
    const int here = load_interpreter();  // this library's copy of the interpreter's entry points
    g_readable = mpe_core_python_state() == 1 && here == 1;  // the process's verdict, said once
    detected.store(true, std::memory_order_release);
  });
  return g_readable;
}

bool is_bridge(uintptr_t caller) noexcept {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(caller), &info)) return false;
  if (reinterpret_cast<uintptr_t>(info.dli_fbase) == g_interpreter.base) return true;
  const char* path = info.dli_fname ? info.dli_fname : "";
  const char* slash = std::strrchr(path, '/');
  const char* name = slash ? slash + 1 : path;
  return std::strstr(path, "/mpi4py/") || std::strncmp(name, "_ctypes", 7) == 0 ||
         std::strncmp(name, "libffi", 6) == 0;
}

int current_frames(FrameRef* out, int max) noexcept {
  const Interpreter& p = g_interpreter;
  const auto thread = reinterpret_cast<uintptr_t>(p.this_thread_state());
  if (!thread) return 0;
  const auto cframe = field<uintptr_t>(thread, kThreadCFrame);
  if (!cframe) return 0;
  int n = 0, walked = 0;
  for (auto frame = field<uintptr_t>(cframe, kCFrameCurrentFrame); frame && n < max && walked < kMaxFrames;
       frame = field<uintptr_t>(frame, kFramePrevious), ++walked) {
    const auto code = field<uintptr_t>(frame, kFrameCode);
    if (!code || field<uintptr_t>(code, kObjectType) != p.code_type) break;  // not a frame we can read
    const uintptr_t first = code + kCodeInstructions;
    const auto instruction = field<uintptr_t>(frame, kFramePrevInstr);
    const bool started =
        field<char>(frame, kFrameOwner) == kFrameOwnedByGenerator ||
        instruction >= first + 2 * static_cast<uintptr_t>(field<int>(code, kCodeFirstTraceable));
    if (!started || is_ours(code)) continue;
    out[n++] = FrameRef{code, instruction - first};
  }
  return n;
}

std::string frames_text(const FrameRef* frames, int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    append_string(text, field<uintptr_t>(frames[i].code, kCodeQualname));
    text += '\x1F';
    append_string(text, field<uintptr_t>(frames[i].code, kCodeFilename));
    text += '\x1F';
    text += std::to_string(g_interpreter.addr_to_line(reinterpret_cast<void*>(frames[i].code),
                                                      static_cast<int>(frames[i].lasti)));
    text += '\x1E';
  }
  return text;
}

std::vector<Frame> parse_frames_text(const char* text) {
  std::vector<Frame> frames;
  for (const char* p = text; *p;) {
    const char* end = std::strchr(p, '\x1E');
    if (!end) break;
    const std::string one(p, end);
    const size_t a = one.find('\x1F'), b = one.find('\x1F', a + 1);
    if (a == std::string::npos || b == std::string::npos) break;
    Frame f;
    f.function = one.substr(0, a);
    f.file = one.substr(a + 1, b - a - 1);
    f.line = std::atoi(one.c_str() + b + 1);
    f.module = "python";
    frames.push_back(std::move(f));
    p = end + 1;
  }
  return frames;
}

}  // namespace mpe::core::python

extern "C" int mpe_core_python_state() {
  static std::once_flag once;
  static int state = 0;
  std::call_once(once, [] {
    state = mpe::core::python::load_interpreter();
    if (state != 2) return;
    const auto version = reinterpret_cast<const char* (*)()>(dlsym(RTLD_DEFAULT, "Py_GetVersion"));
    const char* v = version ? version() : "?";
    char line[300];
    std::snprintf(
        line, sizeof line,
        "this program runs Python %.*s, whose frames the tools cannot read (they read 3.11): its MPI calls "
        "are named by the C code that made them, not by Python lines",
        static_cast<int>(std::strcspn(v, " ")), v);
    mpe::config::warn(std::string(line));
  });
  return state;
}
