// Python call sites: the line of a Python program that made an MPI call through mpi4py (or the
// MPE logging API through ctypes), for the call-site table (mpe/callsite.h).
//
// How. An MPI call from Python returns into mpi4py's extension module, so its C return address
// names mpi4py, not the program. When that address lies in the code between Python and MPI (the
// interpreter, a module under mpi4py/, ctypes and libffi: is_bridge), the site is instead the
// calling thread's innermost Python frames, read from the interpreter's own structures:
// PyGILState_GetThisThreadState() (a thread-local read, valid whether or not the thread holds
// the GIL), then tstate->cframe->current_frame and its `previous` links. Each frame's code object
// and instruction are kept alive by the frame itself while the thread is inside the call, so
// nothing is taken from the interpreter: no GIL, no reference counts, no allocation in it. mpi4py
// releases the GIL around blocking calls; another thread may then run Python, but never this
// thread's frames.
//
// The structures are CPython's internals, which change between minor versions: this reads 3.11
// (Debian 12's Python). Another version gets one line from the first site that asks, and its
// calls keep the C address. The offsets below are checked against the installed Python headers
// by the python_layout test; each frame's code object and each string are also checked to have
// the interpreter's own type before anything else is read from them.
//
// Cost: nothing for a program without Python (one check, once per process). In a Python process
// a call from C, C++ or Fortran pays one more map probe on the call-site cache's miss path only.
// A call from Python skips the cache (its return address is the same for every line) and reads
// the frames: ~265 instructions more than a C call in libmpetime (bench/python_per_call.sh),
// beside the 1705 the interpreter and mpi4py spend on a comm.Iprobe().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/frame.h"
#include "mpe/tool.h"

extern "C" {
// What this process's Python is to the tools: 0 none, 1 readable, 2 a version they cannot read
// (said once, the first time it is asked). Exported so that the line comes once per process
// whatever number of tool libraries ask.
MPE_EXPORT int mpe_core_python_state();
}

namespace mpe::core::python {

// mpe_core_python_state() == 1, asked once per tool library: false until detect() has run.
extern bool g_readable MPE_HIDDEN;
// Asks once (later calls return at once); true when Python's frames can be read.
bool detect() noexcept MPE_HIDDEN;

// True when the code address `caller` lies in the interpreter, in a module under a directory
// named mpi4py, or in ctypes or libffi (dladdr: for a cache's first sighting of an address only).
bool is_bridge(uintptr_t caller) noexcept MPE_HIDDEN;

// One Python frame as the interpreter holds it: its code object and the byte offset of its
// current instruction.
struct FrameRef {
  uintptr_t code;
  uintptr_t lasti;
};

// The calling thread's innermost Python frames, at most `max`, skipping the import machinery's
// frozen frames, MPE's own mpelog.py and frames not yet started; 0 when the thread has no Python
// frame.
int current_frames(FrameRef* out, int max) noexcept MPE_HIDDEN;

// The frames as the call-site registry keeps them: per frame "function\x1Ffile\x1Fline\x1E".
// Throws std::bad_alloc.
std::string frames_text(const FrameRef* frames, int n);

// Parses what frames_text wrote into frames (module "python"); throws std::bad_alloc.
std::vector<Frame> parse_frames_text(const char* text);

}  // namespace mpe::core::python
