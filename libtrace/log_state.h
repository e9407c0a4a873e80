// liblog's shared state: the per-thread logs, the run's flags and the rank's definitions, and the
// inline per-call path (the record store) that every part of the logger uses.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/log_format.h"
#include "mpe/log_layout.h"
#include "mpe/request_table.h"
#include "mpe/tool.h"
#include "mpe/traffic.h"

namespace mpe::tools::log {

// A request liblog follows: what it was posted as (the one traffic rule's view), and what
// liblog's records add.
struct RequestInfo {
  MPI_Request req;
  traffic::Posted posted;
  // liblog's index of posted.msg.comm, taken when posted: the application may free the
  // communicator before the request completes.
  uint32_t comm = 0;
  uint32_t serial = 0;      // kRecv, kSend, kCollective: the request's serial in its kRequestPost record
  uint32_t completion = 0;  // the Wait/Test that last completed this entry (see records.cpp)
};

// One thread's log: its record buffer, its requests, and what a Wait/Test in progress was given.
struct ThreadLog {
  format::Record* recs = nullptr;
  uint32_t n = 0;
  uint32_t cap = 0;
  uint32_t index = 0;
  RequestTable<RequestInfo> requests;
  uint32_t last_request = 0;         // serial of the last nonblocking request posted on this thread
  uint32_t completions = 0;          // Wait/Test calls whose completions this thread recorded
  std::vector<MPI_Request> snap[2];  // per call depth 0/1: the request handles a Wait/Test was given
  traffic::ProbedMessages probed;    // Mprobe'd messages awaiting their Mrecv
  uint64_t* left_out = nullptr;      // MPE_LOG_FILTER: calls left out per routine (kFnCount), once one is
  ThreadLog* next = nullptr;
};

extern std::atomic<bool> g_active MPE_HIDDEN;   // between after_init and before_finalize
extern std::atomic<bool> g_logging MPE_HIDDEN;  // false while paused by MPI_Pcontrol(0) / MPE_Stop_log
extern bool g_rank_recorded MPE_HIDDEN;         // false on a rank MPE_LOG_FILTER's `only ranks` leaves out
extern int g_rank MPE_HIDDEN;
extern int g_size MPE_HIDDEN;
extern MPI_Comm g_comm MPE_HIDDEN;  // private: clock sync and finalize traffic
extern uint32_t g_buffer_records MPE_HIDDEN;
extern int g_zstd_level MPE_HIDDEN;

// Guards g_threads, g_meta and the spill file's chunk list; never taken on the per-call path.
extern std::mutex g_mutex MPE_HIDDEN;
extern ThreadLog* g_threads MPE_HIDDEN;
extern format::RankMeta g_meta MPE_HIDDEN;

extern __thread ThreadLog* t_log MPE_HIDDEN __attribute__((tls_model("initial-exec")));

// Makes the calling thread's log (first MPI call of a thread); null when memory ran out.
ThreadLog* new_thread_log() noexcept MPE_HIDDEN;
// Compresses a thread's buffer into one chunk and appends it to the spill file. ~3 ns/record.
void spill(ThreadLog* t) noexcept MPE_HIDDEN;

// ~1 ns: one TLS load.
inline ThreadLog* thread_log() {
  ThreadLog* t = t_log;
  return t ? t : new_thread_log();
}

// ~3 ns: bounds check and a 32-byte store.
inline void put(ThreadLog* t, const format::Record& r) {
  if (__builtin_expect(t->n == t->cap, 0)) spill(t);
  t->recs[t->n++] = r;
}

}  // namespace mpe::tools::log
