// Addresses to function, file:line and module with libdw's dwfl over the process's own map.
#include "mpe/symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>

namespace mpe {

namespace {

// Finds each module's ELF file through /proc/<pid>/maps, and its debug information next to it,
// in /usr/lib/debug or by build id.
const Dwfl_Callbacks kCallbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr, nullptr};

// A frame that only names `value` in hex: the last resort, so it must not throw.
Frame hex_frame(uintptr_t value) noexcept {
  Frame frame;
  char text[2 + 16 + 1];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, value);
  try {
    frame.function = text;
  } catch (const std::bad_alloc&) {
    // Longer than the string's inline buffer and no memory: an empty name is all that is left.
  }
  return frame;
}

// The demangled name, or the name itself when it is not a C++ symbol.
std::string demangle(const char* name) {
  if (!name) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;  // C and Fortran symbols: nothing to do
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(name);
}

}  // namespace

Symbolizer::~Symbolizer() {
  if (dwfl_) dwfl_end(dwfl_);
}

// Reports every mapping of this process to dwfl: the first time a fresh session, later an
// addition that keeps the modules already known (and their loaded tables).
void Symbolizer::read_memory_map() noexcept {
  if (!dwfl_) {
    dwfl_ = dwfl_begin(&kCallbacks);
    if (!dwfl_) return;
    dwfl_report_begin(dwfl_);
  } else {
    dwfl_report_begin_add(dwfl_);
  }
  // A partial report (non-zero) is still usable: addresses in the modules it did report resolve.
  dwfl_linux_proc_report(dwfl_, getpid());
  if (dwfl_report_end(dwfl_, nullptr, nullptr) != 0) {  // the session is unusable from here on
    dwfl_end(dwfl_);
    dwfl_ = nullptr;
  }
}

Frame Symbolizer::symbolize(uintptr_t address, bool is_return_address) noexcept {
  // A return address points after the call instruction: look up the call itself.
  const uintptr_t pc = is_return_address && address > 0 ? address - 1 : address;
  try {
    return lookup(pc);
  } catch (const std::exception&) {  // out of memory for the names
    return hex_frame(pc);
  }
}

Frame Symbolizer::lookup(uintptr_t pc) {
  if (!map_read_) {
    map_read_ = true;
    read_memory_map();
  }
  Dwfl_Module* module = dwfl_ ? dwfl_addrmodule(dwfl_, pc) : nullptr;
  if (!module && !reread_) {  // perhaps a library loaded since the first read
    reread_ = true;
    read_memory_map();
    if (dwfl_) module = dwfl_addrmodule(dwfl_, pc);
  }
  if (!module) return hex_frame(pc);

  Frame frame;
  Dwarf_Addr start = 0;
  const char* main_file = nullptr;
  const char* name =
      dwfl_module_info(module, nullptr, &start, nullptr, nullptr, nullptr, &main_file, nullptr);
  frame.module = main_file ? main_file : (name ? name : "");
  frame.offset = pc - start;
  frame.function = demangle(dwfl_module_addrname(module, pc));
  if (Dwfl_Line* line = dwfl_module_getsrc(module, pc)) {
    int line_number = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &line_number, nullptr, nullptr, nullptr)) {
      frame.file = file;
      frame.line = line_number;
    }
  }
  if (frame.function.empty()) frame.function = hex_frame(frame.offset).function;  // stripped: the offset
  return frame;
}

}  // namespace mpe
