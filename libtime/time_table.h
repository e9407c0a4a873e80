// libmpetime's per-thread tables: what the per-call path (time_tool.cpp) fills and the finalize
// report (time_report.cpp) reads. See time_tool.cpp for the design.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "mpe/callsite.h"
#include "mpe/core.h"
#include "mpe/request_table.h"
#include "mpe/traffic.h"

namespace mpe::tools::time::tool {

// One call site's counters in one thread (64 bytes). A row belongs to the first routine called
// from its site; another routine from the same return address (a call through a function
// pointer) gets a row of its own in Table::aliases.
struct Row {
  uint64_t calls, incl;
  uint64_t nested;  // time of the calls nested inside this site's calls: exclusive = incl - nested
  uint64_t min, max, sent, recv;
  uint16_t fn;        // the routine (mpe::Fn), or kUnclaimed / kNeverMatches
  uint32_t messages;  // point-to-point messages sent and received (in the padding: wraps at 2^32)
};
static_assert(sizeof(Row) == 64);
constexpr uint16_t kUnclaimed = 0xffff;     // no call has used the row yet
constexpr uint16_t kNeverMatches = 0xfffe;  // row 0: the unknown site's calls go to Table::unknown
static_assert(mpe::kFnCount < kNeverMatches);
constexpr uint64_t kNoMin = ~uint64_t{0};  // min starts above every duration: no first-call test
constexpr Row kFreshRow = {0, 0, 0, kNoMin, 0, 0, 0, kUnclaimed, 0};

// A thread's rows of (site, routine) pairs whose site's row belongs to another routine: an
// open-addressed map, rows allocated one by one so that they never move. Rare.
struct Aliases {
  struct Slot {
    uint64_t key;  // (id << 16 | fn) + 1; 0 for an empty slot
    Row* row;
  };
  Slot* slots = nullptr;
  uint32_t mask = 0, used = 0;
};

constexpr int kSnapMax = 1024;  // requests per Wait/Test call whose kind is remembered

// A followed request: what it was posted as (the one traffic rule, mpe/traffic.h); a nonblocking
// file read is followed too, its bytes taken from its status at completion.
struct TrackedRequest {
  mpe::traffic::Posted posted;
  bool file_read = false;
};

// The core's call-site cache of a thread before its first lookup: empty slots (pc 0, id 0).
constexpr mpe::core::SiteCache kNoCache = {};

struct Table {
  // The fast path's view of the core's call-site cache: kNoCache (every lookup misses) until the
  // core has made this thread's cache, and while some id in it may be >= capacity. Invariant:
  // every id in *cache is < capacity, so rows[id] needs no bounds check. It holds because only
  // leave_slow() fills this library's cache (through callsite()), and it grows the rows to cover
  // each id it gets, or falls back to kNoCache when it cannot.
  const mpe::core::SiteCache* cache;
  Row* rows;            // by call-site id; rows[0] is row0 (kNeverMatches)
  uint64_t child[257];  // by depth + 1: time of finished calls at each depth, not yet charged to a parent
  uint32_t capacity;    // rows in `rows`
  uint32_t max_id;      // the largest id this thread's lookups returned
  Row row0;             // `rows` until the first site: a thread always has a row 0
  Row unknown[mpe::kFnCount];  // site 0 ("unknown call site", out of memory) by routine
  Aliases aliases;
  mpe::RequestTable<TrackedRequest> requests;
  // For the Wait/Test in progress: request i's handle, since MPI overwrites completed handles.
  // What it stands for stays in `requests` until the completion reads and erases it.
  MPI_Request snap[kSnapMax];
  mpe::traffic::ProbedMessages probed;  // Mprobe'd messages awaiting their Mrecv
  Table* next;
};

// Guards the list of tables and the growth of their rows and aliases (the owner thread writes
// counters without it).
extern std::mutex g_mutex;
extern Table* g_tables;  // every thread's table; never freed, so a thread may exit early
extern int g_nthreads;

extern std::atomic<bool> g_paused;
extern std::atomic<uint64_t> g_run_start;     // ticks when the measured span began (init or reset)
extern std::atomic<uint64_t> g_pause_start;   // ticks when the current pause began
extern std::atomic<uint64_t> g_paused_ticks;  // total ticks spent paused since g_run_start

// Writes the per-process file and, on rank 0, the run's report. Collective over
// MPI_COMM_WORLD; never throws (the tool's before_finalize hook).
void report_at_finalize() noexcept;

}  // namespace mpe::tools::time::tool
