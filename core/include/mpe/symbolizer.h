// Turns code addresses of this process into function, file:line and module, against the
// process's own memory map (libdw's dwfl), for the tools' call-site reports.
#pragma once

#include <cstdint>

#include "mpe/frame.h"
#include "mpe/tool.h"

struct Dwfl;  // libdw's session (elfutils/libdwfl.h), kept out of the tools' includes

namespace mpe {

// Symbolizes addresses of the calling process. Works for PIE executables and shared libraries
// because each process reads its own map: symbolize on the rank that captured the address, never
// on another (mpiP resolves every rank's addresses against rank 0's map and gets them wrong).
//
// Cost, measured here on a process with ~50 mapped files: construction is free. The first
// symbolize() reads /proc/<pid>/maps (~1 ms). The first lookup in a module opens its ELF file and
// reads its symbols and, for file:line, its DWARF or separate debug file: ~1 ms for a small
// program, 6-16 ms for libmpich, 60-90 ms for libc with its debug symbols installed. Later
// lookups take ~2 us in a compilation unit already read, up to ~0.2 ms when another unit's line
// table must be read. What was read stays in memory until the destructor, so keep one
// Symbolizer for a batch of addresses and destroy it when done. Use it at finalize or on rare
// events, never on a per-call path.
//
// Not thread-safe: one thread at a time per Symbolizer. Never throws; a failure (no memory, no
// map, no symbols) yields a frame that names the address, or its offset in its module, in hex.
class MPE_HIDDEN Symbolizer {
 public:
  Symbolizer() noexcept = default;
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Returns the function, source line and module of `address`. With is_return_address (any
  // frame of a backtrace except the innermost), looks up address - 1: a return address points
  // after the call, possibly at the next line or function. An address outside every known module
  // re-reads the memory map once per Symbolizer, for libraries loaded after the first read.
  Frame symbolize(uintptr_t address, bool is_return_address) noexcept;

 private:
  void read_memory_map() noexcept;
  Frame lookup(uintptr_t pc);

  Dwfl* dwfl_ = nullptr;
  bool map_read_ = false;  // first read done (successful or not)
  bool reread_ = false;    // the one re-read after a miss done
};

}  // namespace mpe
