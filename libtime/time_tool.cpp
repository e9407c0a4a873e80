// libmpetime: time, calls and bytes per MPI routine per process; one file per process and the
// whole-run report from rank 0 at MPI_Finalize.
//
// Design. Each thread accumulates into its own Table (one Stat per wrapped routine), allocated
// and linked into a global list under a mutex the first time the thread makes an MPI call; after
// that the per-call path takes no lock and allocates nothing. At finalize the main thread sums
// the tables. Nested calls: call.depth says how deep a call is; a per-thread array of child
// time per depth turns inclusive time into exclusive time, so the exclusive times of a thread
// add up to no more than its wall time. Bytes are derived from each routine's semantics
// (bytes.cpp-like helpers below); receives take their size from the status, which the core
// guarantees to be real because this tool asks for kNeedsStatus.
#include <mpi.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "mpe/bytes.h"
#include "mpe/config.h"
#include "mpe/completion.h"
#include "mpe/core.h"
#include "profile.h"

namespace {

using mpe::Call;
using mpe::CallClass;
using mpe::Mode;
namespace role = mpe::role;

constexpr int kMaxDepth = 32;

struct Stat {
  uint64_t calls, incl, excl, min, max, sent, recv;
};

constexpr int kReqSlots = 4096;  // outstanding nonblocking receives tracked per thread (power of 2)
constexpr int kSnapMax = 1024;   // requests per Wait/Test call whose kind is remembered

// Outstanding nonblocking receive requests of one thread: an open-addressing set with linear
// probing and backward-shift deletion; an all-zero handle marks an empty slot (no MPI uses 0).
struct RecvSet {
  MPI_Request slot[kReqSlots];
  static uint64_t key(MPI_Request r) {
    uint64_t k = 0;
    std::memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
  }
  static bool empty(MPI_Request r) { return key(r) == 0; }
  static unsigned home(MPI_Request r) { return static_cast<unsigned>((key(r) * 0x9E3779B97F4A7C15ull) >> 52) & (kReqSlots - 1); }
  int find(MPI_Request r) const {
    for (unsigned i = home(r), n = 0; n < kReqSlots; i = (i + 1) & (kReqSlots - 1), ++n) {
      if (empty(slot[i])) return -1;
      if (slot[i] == r) return static_cast<int>(i);
    }
    return -1;
  }
  void insert(MPI_Request r) {
    if (empty(r) || r == MPI_REQUEST_NULL || find(r) >= 0) return;
    for (unsigned i = home(r), n = 0; n < kReqSlots - 1; i = (i + 1) & (kReqSlots - 1), ++n)
      if (empty(slot[i])) {
        slot[i] = r;
        return;
      }
    // Full: the receive's bytes will not be counted (documented limit).
  }
  void erase(MPI_Request r) {
    int at = find(r);
    if (at < 0) return;
    unsigned i = static_cast<unsigned>(at), j = i;
    std::memset(&slot[i], 0, sizeof slot[i]);
    for (;;) {
      j = (j + 1) & (kReqSlots - 1);
      if (empty(slot[j])) return;
      const unsigned h = home(slot[j]);
      // Move slot[j] back into the hole at i unless its home lies cyclically in (i, j].
      if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
        slot[i] = slot[j];
        std::memset(&slot[j], 0, sizeof slot[j]);
        i = j;
      }
    }
  }
};

struct Table {
  Stat stats[mpe::kFnCount];
  uint64_t child[kMaxDepth];  // time of finished calls at each depth, not yet charged to a parent
  RecvSet recvs;
  MPI_Request snap[kSnapMax]; // for the Wait/Test in progress: request i if a tracked receive, else 0
  Table* next;
};

std::mutex g_mutex;
Table* g_tables = nullptr;  // every thread's table; never freed, so a thread may exit early
int g_nthreads = 0;
__thread Table* t_table __attribute__((tls_model("initial-exec")));

std::atomic<bool> g_paused{false};
std::atomic<uint64_t> g_run_start{0};    // ticks when the measured span began (init or reset)
std::atomic<uint64_t> g_pause_start{0};  // ticks when the current pause began
std::atomic<uint64_t> g_paused_ticks{0}; // total ticks spent paused since g_run_start

Table* new_table() noexcept {
  auto* t = static_cast<Table*>(std::calloc(1, sizeof(Table)));
  if (!t) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  t->next = g_tables;
  g_tables = t;
  ++g_nthreads;
  t_table = t;
  return t;
}

// Bytes of request completions: the status of each completed request that was a receive.
void completed_bytes(const Call& c, Stat& st, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests) || !c.requests) return;  // the snapshot is taken for application calls only
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  auto one = [&](int i, const MPI_Status* s) {
    if (i < 0 || i >= n || RecvSet::empty(t->snap[i])) return;
    st.recv += static_cast<uint64_t>(mpe::status_bytes(s));
    t->recvs.erase(t->snap[i]);
    std::memset(&t->snap[i], 0, sizeof t->snap[i]);
  };
  mpe::for_each_completed(c, one);
}

// Before a Wait/Test: remembers which requests are tracked receives, since MPI overwrites
// completed handles with MPI_REQUEST_NULL. ~2 ns per request.
void snapshot(const Call& c, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests) || !c.requests) return;
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  for (int i = 0; i < n; ++i) {
    const bool tracked = !RecvSet::empty(c.requests[i]) && t->recvs.find(c.requests[i]) >= 0;
    if (tracked)
      t->snap[i] = c.requests[i];
    else
      std::memset(&t->snap[i], 0, sizeof t->snap[i]);
  }
}

// Adds the bytes a call moved to its routine's counters. Out of line: most cheap calls move none.
__attribute__((noinline)) void count_bytes(const Call& c, Stat& st, Table* t) noexcept {
  if (c.rc != MPI_SUCCESS || c.mode == Mode::PersistentInit) return;
  if (c.mode == Mode::Nonblocking && c.requests &&
      (c.cls == CallClass::recv || c.cls == CallClass::mrecv || c.cls == CallClass::sendrecv || c.cls == CallClass::file_read))
    t->recvs.insert(*c.requests);  // a nonblocking receive: its bytes come with its completion
  const bool blocking = c.mode == Mode::Blocking;
  auto sbytes = [&] { return c.sendcount * mpe::type_size(c.sendtype); };
  int64_t sent = 0, recv = 0;
  if (mpe::is_collective(c.cls)) {
    const mpe::Bytes b = mpe::collective_bytes(c);
    sent = b.sent;
    recv = b.recv;
  }
  switch (c.cls) {
    case CallClass::send:
      if (c.dest != MPI_PROC_NULL) sent = sbytes();
      break;
    case CallClass::recv:
    case CallClass::mrecv:
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::sendrecv:
      if (c.dest != MPI_PROC_NULL) sent = sbytes();
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::wait: case CallClass::waitall: case CallClass::waitany: case CallClass::waitsome:
    case CallClass::test: case CallClass::testall: case CallClass::testany: case CallClass::testsome:
      completed_bytes(c, st, t);
      return;
    case CallClass::rma:
      if (c.has(role::sendtype)) sent = (c.has(role::sendcount) ? c.sendcount : 1) * mpe::type_size(c.sendtype);
      if (c.has(role::recvtype)) recv = (c.has(role::recvcount) ? c.recvcount : 1) * mpe::type_size(c.recvtype);
      break;
    case CallClass::file_read:
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::file_write:
      sent = sbytes();
      break;
    default:
      break;
  }
  if (sent > 0) st.sent += static_cast<uint64_t>(sent);
  if (recv > 0) st.recv += static_cast<uint64_t>(recv);
}

// Classes whose calls move data or complete requests, indexed by CallClass.
constexpr bool moves_bytes(CallClass c) {
  switch (c) {
    case CallClass::other: case CallClass::init: case CallClass::finalize: case CallClass::pcontrol:
    case CallClass::probe: case CallClass::mprobe: case CallClass::request_get_status: case CallClass::start:
    case CallClass::cancel: case CallClass::request_free: case CallClass::pready: case CallClass::parrived:
    case CallClass::barrier: case CallClass::comm_create: case CallClass::comm_free: case CallClass::win_sync:
    case CallClass::file_open: case CallClass::file_close:
      return false;
    default:
      return true;
  }
}

struct ClassTable {
  bool v[mpe::kCallClassCount];
  constexpr ClassTable() : v() {
    for (int i = 0; i < mpe::kCallClassCount; ++i) v[i] = moves_bytes(static_cast<CallClass>(i));
  }
};
constexpr ClassTable kMovesBytes;

void reset_all() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (Table* t = g_tables; t; t = t->next) std::memset(t->stats, 0, sizeof t->stats);
  g_run_start.store(mpe_clock_now(), std::memory_order_relaxed);
  g_paused_ticks.store(0, std::memory_order_relaxed);
  if (g_paused.load(std::memory_order_relaxed)) g_pause_start.store(mpe_clock_now(), std::memory_order_relaxed);
}

// MPI_Pcontrol: 0 pauses, 1 resumes, 2 resets the counters; other levels are ignored.
void pcontrol(int level) noexcept {
  if (level == 0 && !g_paused.exchange(true)) {
    g_pause_start.store(mpe_clock_now(), std::memory_order_relaxed);
  } else if (level == 1 && g_paused.exchange(false)) {
    g_paused_ticks.fetch_add(mpe_clock_now() - g_pause_start.load(std::memory_order_relaxed), std::memory_order_relaxed);
  } else if (level == 2) {
    reset_all();
  }
}

// Before the calls that complete or free requests (kEnterClasses); the core skips it for others.
void on_enter(Call& call) noexcept {
  Table* t = t_table;
  if (!t || g_paused.load(std::memory_order_relaxed)) return;
  if (mpe::completes_requests(call.cls))
    snapshot(call, t);
  else if (call.has(role::requests) && call.requests)
    t->recvs.erase(*call.requests);
}

// The per-call path. ~10 ns for a call that moves no bytes: a TLS load, one table row update.
void on_leave(Call& call) noexcept {
  const bool is_pcontrol = call.cls == CallClass::pcontrol;
  if (__builtin_expect(is_pcontrol, 0)) pcontrol(call.has(role::level) ? call.level : -1);
  // The run starts when MPI_Init(_thread) is entered, so the init time is part of it.
  if (__builtin_expect(call.cls == CallClass::init, 0)) g_run_start.store(call.t_enter, std::memory_order_relaxed);
  if (g_paused.load(std::memory_order_relaxed) && !is_pcontrol) return;
  Table* t = t_table;
  if (__builtin_expect(t == nullptr, 0) && (t = new_table()) == nullptr) return;
  const uint64_t dur = call.t_leave - call.t_enter;
  const int d = call.depth < kMaxDepth - 1 ? call.depth : kMaxDepth - 2;
  const uint64_t children = t->child[d + 1];
  t->child[d + 1] = 0;
  if (d > 0) t->child[d] += dur;
  Stat& s = t->stats[static_cast<int>(call.fn)];
  if (s.calls == 0 || dur < s.min) s.min = dur;
  if (dur > s.max) s.max = dur;
  ++s.calls;
  s.incl += dur;
  s.excl += dur > children ? dur - children : 0;
  if (kMovesBytes.v[static_cast<int>(call.cls)]) count_bytes(call, s, t);
}


std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  for (char& c : all)
    if (c == '\0') c = ' ';
  return all;
}

// This process's profile: every thread's table summed, ticks turned into nanoseconds.
mpe::time::RankProfile collect(uint64_t end, int rank, int size) {
  const double ns_per_tick = 1e9 / mpe_clock_ticks_per_second();
  auto ns = [&](uint64_t ticks) { return static_cast<uint64_t>(std::llround(static_cast<double>(ticks) * ns_per_tick)); };
  mpe::time::RankProfile p;
  p.rank = rank;
  p.size = size;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.command = command_line();
  p.mpi = MPE_MPI_NAME;
  p.timer = mpe_clock_name();
  uint64_t paused = g_paused_ticks.load();
  if (g_paused.load()) paused += end - g_pause_start.load();
  const uint64_t span = end - g_run_start.load();
  p.run_ns = ns(span > paused ? span - paused : 0);
  std::lock_guard<std::mutex> lock(g_mutex);
  p.threads = g_nthreads ? g_nthreads : 1;
  for (int f = 0; f < mpe::kFnCount; ++f) {
    Stat sum{};
    for (Table* t = g_tables; t; t = t->next) {
      const Stat& s = t->stats[f];
      if (!s.calls) continue;
      if (!sum.calls || s.min < sum.min) sum.min = s.min;
      if (s.max > sum.max) sum.max = s.max;
      sum.calls += s.calls;
      sum.incl += s.incl;
      sum.excl += s.excl;
      sum.sent += s.sent;
      sum.recv += s.recv;
    }
    const auto& info = mpe::kFnInfo[f];
    if (info.cls == CallClass::finalize) sum = Stat{1, 0, 0, 0, 0, 0, 0};  // timed span ends as it starts
    if (!sum.calls) continue;
    mpe::time::RoutineStats r;
    r.name = info.name;
    r.calls = sum.calls;
    r.incl_ns = ns(sum.incl);
    r.excl_ns = ns(sum.excl);
    r.min_ns = ns(sum.min);
    r.max_ns = ns(sum.max);
    r.bytes_sent = sum.sent;
    r.bytes_recv = sum.recv;
    p.mpi_ns += r.excl_ns;
    p.routines.push_back(std::move(r));
  }
  return p;
}

bool write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

void finalize() {
  const uint64_t end = mpe_clock_now();
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string text = mpe::time::serialize(collect(end, rank, size));
  const std::string base = mpe::config::output_path(".mpetime");
  const std::string mine = base + "." + std::to_string(rank) + ".txt";
  const int wrote = write_file(mine, text) ? 1 : 0;
  if (!wrote) mpe::config::warn("libmpetime: cannot write " + mine + ": " + std::strerror(errno), false);

  // Gather every rank's file contents on rank 0 over a private communicator.
  MPI_Comm comm;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
    mpe::config::warn("libmpetime: cannot create a communicator for the report; per-process files only");
    return;
  }
  int len = static_cast<int>(text.size());
  std::vector<int> lens(rank == 0 ? size : 0), displs;
  std::vector<int> wrote_all(rank == 0 ? size : 0);
  PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, comm);
  PMPI_Gather(&wrote, 1, MPI_INT, wrote_all.data(), 1, MPI_INT, 0, comm);
  std::string all;
  if (rank == 0) {
    displs.resize(size);
    long total = 0;
    for (int i = 0; i < size; ++i) displs[i] = static_cast<int>(total), total += lens[i];
    all.resize(static_cast<size_t>(total));
  }
  PMPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, comm);
  PMPI_Comm_free(&comm);
  if (rank != 0) return;

  std::vector<mpe::time::RankProfile> profiles(size);
  std::string error;
  for (int i = 0; i < size; ++i)
    if (!mpe::time::parse(all.substr(displs[i], lens[i]), &profiles[i], &error)) {
      mpe::config::warn("libmpetime: rank " + std::to_string(i) + " sent a bad profile: " + error);
      return;
    }
  if (!mpe::time::check_run(&profiles, &error)) {
    mpe::config::warn("libmpetime: " + error);
    return;
  }
  const std::string txt = base + ".txt", json = base + ".json";
  const bool ok = write_file(txt, mpe::time::text_report(profiles)) && write_file(json, mpe::time::json_report(profiles));
  int files = 0;
  for (int w : wrote_all) files += w;
  if (!ok) {
    mpe::config::warn("libmpetime: cannot write the report " + txt + ": " + std::strerror(errno));
    return;
  }
  mpe::config::warn("libmpetime: report in " + txt + " and " + json + "; " + std::to_string(files) + " of " +
                    std::to_string(size) + " per-process files in " + base + ".<rank>.txt");
}

void before_finalize() noexcept {
  try {
    finalize();
  } catch (const std::exception& e) {
    mpe::config::warn(std::string("libmpetime: report failed: ") + e.what());
  } catch (...) {
    mpe::config::warn("libmpetime: report failed");
  }
}

constexpr uint64_t kEnterClasses = mpe::kCompletingClasses | mpe::classes(CallClass::request_free);

const mpe::Tool kTool = {
    "time", mpe::kNeedsTime | mpe::kNeedsStatus, on_enter, on_leave, nullptr, before_finalize, kEnterClasses};

__attribute__((constructor)) void register_time_tool() {
  if (mpe_core_register_tool(&kTool) != 0) mpe::config::warn("libmpetime: too many tools loaded; time is off");
}

}  // namespace
