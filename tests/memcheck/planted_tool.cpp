// A scratch tool that makes one deliberate memory error (chosen by MPE_PLANTED), so that
// tests/memcheck can show its checks fail when a tool errs: the memory-checked runs would
// otherwise prove nothing by passing.
//
// MPE_PLANTED=
//   unset_field    at MPI_Comm_rank, reads *call.requests, a field the call's role bits do not
//                  promise (the wrapper never sets it: with MPE_POISON_CALLS it is 0xa5a5..., which
//                  UBSan rejects as misaligned before it can fault; without, whatever the stack held)
//   uninit_heap    at MPI_Comm_rank, reads a bool from a fresh allocation that nothing initialised
//                  (ASan fills new memory with 0xbe, and UBSan rejects it as a bool)
//   heap_overflow  at MPI_Comm_rank, reads one element past the end of a heap array
//   leak           after MPI_Init, allocates 4096 bytes and drops the pointer
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "mpe/core.h"

namespace {

const char* g_mode = "";
volatile long g_sink;  // keeps each planted read from being optimised away

void on_enter(mpe::Call& call) noexcept {
  if (call.fn != mpe::Fn::MPI_Comm_rank || call.depth > 0) return;
  if (std::strcmp(g_mode, "unset_field") == 0) {
    const MPI_Request first = *call.requests;  // MPI_Comm_rank has no requests
    g_sink = first != MPI_REQUEST_NULL;
  } else if (std::strcmp(g_mode, "uninit_heap") == 0) {
    bool* done = new bool[8];  // never initialised
    g_sink = done[3] ? 1 : 2;
    delete[] done;
  } else if (std::strcmp(g_mode, "heap_overflow") == 0) {
    int* volatile counts = new int[4]();  // volatile: hidden from UBSan's object-size check, for ASan
    g_sink = counts[4];
    delete[] counts;
  }
}

void after_init() noexcept {
  if (std::strcmp(g_mode, "leak") == 0) {
    static void* volatile lost;
    lost = std::malloc(4096);
    std::memset(lost, 1, 4096);
    lost = nullptr;  // the only pointer to it is gone: a leak at exit
  }
}

const mpe::Tool kTool = {"memcheck_planted", 0, on_enter, nullptr, after_init, nullptr};

__attribute__((constructor)) void register_planted_tool() {
  if (const char* m = std::getenv("MPE_PLANTED")) g_mode = m;
  mpe_core_register_tool(&kTool);
}

}  // namespace
