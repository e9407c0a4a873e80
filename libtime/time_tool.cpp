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
#include <new>
#include <string>
#include <vector>

#include "mpe/bytes.h"
#include "mpe/collective.h"
#include "mpe/completion.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/request_table.h"
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

constexpr int kSnapMax = 1024;  // requests per Wait/Test call whose kind is remembered

// What a followed request will move when it completes (or, for a persistent send, at each Start).
enum class Tracked : uint8_t { kNone = 0, kRecv, kPersistentRecv, kPersistentSend };
struct TrackedRequest {
  Tracked kind;
  uint64_t bytes;  // kPersistentSend: bytes per MPI_Start
};

// For the Wait/Test in progress: request i's kind and handle, since MPI overwrites completed handles.
struct SnapEntry {
  MPI_Request request;
  Tracked kind;
};

struct Table {
  Stat stats[mpe::kFnCount];
  uint64_t child[kMaxDepth];  // time of finished calls at each depth, not yet charged to a parent
  mpe::RequestTable<TrackedRequest> requests;
  SnapEntry snap[kSnapMax];
  Table* next;
};

std::mutex g_mutex;
Table* g_tables = nullptr;  // every thread's table; never freed, so a thread may exit early
int g_nthreads = 0;
__thread Table* t_table __attribute__((tls_model("initial-exec")));

std::atomic<bool> g_paused{false};
std::atomic<uint64_t> g_run_start{0};     // ticks when the measured span began (init or reset)
std::atomic<uint64_t> g_pause_start{0};   // ticks when the current pause began
std::atomic<uint64_t> g_paused_ticks{0};  // total ticks spent paused since g_run_start

Table* new_table() noexcept {
  auto* t = new (std::nothrow) Table{};
  if (!t) return nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  t->next = g_tables;
  g_tables = t;
  ++g_nthreads;
  t_table = t;
  return t;
}

// Follows a request; says once per process when the table could not grow.
void follow(Table* t, MPI_Request r, const TrackedRequest& what) noexcept {
  static std::atomic<bool> said{false};
  if (!t->requests.put(r, what) && !said.exchange(true))
    mpe::config::warn("libmpetime: out of memory for the request table; some received bytes are not counted",
                      false);
}

// Bytes of request completions: the status of each completed request that was a receive.
void completed_bytes(const Call& c, Stat& st, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests) || !c.requests)
    return;  // the snapshot is taken for application calls only
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  auto one = [&](int i, const MPI_Status* s) {
    if (i < 0 || i >= n) return;
    SnapEntry& e = t->snap[i];
    if (e.kind != Tracked::kRecv && e.kind != Tracked::kPersistentRecv) return;
    st.recv += static_cast<uint64_t>(mpe::status_bytes(s));
    if (e.kind == Tracked::kRecv) t->requests.erase(e.request);  // a persistent one lives until freed
    e.kind = Tracked::kNone;
  };
  mpe::for_each_completed(c, one);
}

// Before a Wait/Test: remembers which requests are followed receives, since MPI overwrites
// completed handles with MPI_REQUEST_NULL. ~2 ns per request.
void snapshot(const Call& c, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests) || !c.requests) return;
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  for (int i = 0; i < n; ++i) {
    const MPI_Request r = c.requests[i];
    const TrackedRequest* tracked = r == MPI_REQUEST_NULL ? nullptr : t->requests.find(r);
    t->snap[i] = SnapEntry{r, tracked ? tracked->kind : Tracked::kNone};
  }
}

// Adds the bytes a call moved to its routine's counters. Out of line: most cheap calls move none.
__attribute__((noinline)) void count_bytes(const Call& c, Stat& st, Table* t) noexcept {
  if (c.rc != MPI_SUCCESS) return;
  const bool receives = c.cls == CallClass::kRecv || c.cls == CallClass::kMrecv ||
                        c.cls == CallClass::kSendrecv || c.cls == CallClass::kFileRead;
  if (c.mode == Mode::kPersistentInit) {
    // Persistent and partitioned requests move their bytes later: a send at each MPI_Start, a
    // receive at each completion.
    if (c.requests && (c.cls == CallClass::kSend || c.cls == CallClass::kRecv)) {
      const bool send = c.cls == CallClass::kSend;
      follow(t, *c.requests,
             TrackedRequest{send ? Tracked::kPersistentSend : Tracked::kPersistentRecv,
                            send ? static_cast<uint64_t>(mpe::send_bytes(c)) : 0});
    }
    return;
  }
  if (c.mode == Mode::kNonblocking && c.requests && receives)
    follow(t, *c.requests, TrackedRequest{Tracked::kRecv, 0});  // its bytes come with its completion
  const bool blocking = c.mode == Mode::kBlocking;
  auto sbytes = [&] { return c.sendcount * mpe::type_size(c.sendtype); };
  int64_t sent = 0, recv = 0;
  if (mpe::is_collective(c.cls)) {
    const mpe::Bytes b = mpe::collective_bytes(c);
    sent = b.sent;
    recv = b.recv;
  }
  switch (c.cls) {
    case CallClass::kSend:
      sent = mpe::send_bytes(c);
      break;
    case CallClass::kStart:
      if (c.requests)
        for (int i = 0; i < c.nreq(); ++i)
          if (const TrackedRequest* p =
                  c.requests[i] == MPI_REQUEST_NULL ? nullptr : t->requests.find(c.requests[i]))
            if (p->kind == Tracked::kPersistentSend) sent += static_cast<int64_t>(p->bytes);
      break;
    case CallClass::kRecv:
    case CallClass::kMrecv:
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::kSendrecv:
      sent = mpe::send_bytes(c);
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::kWait:
    case CallClass::kWaitall:
    case CallClass::kWaitany:
    case CallClass::kWaitsome:
    case CallClass::kTest:
    case CallClass::kTestall:
    case CallClass::kTestany:
    case CallClass::kTestsome:
      completed_bytes(c, st, t);
      return;
    case CallClass::kRma:
      if (c.has(role::sendtype))
        sent = (c.has(role::sendcount) ? c.sendcount : 1) * mpe::type_size(c.sendtype);
      if (c.has(role::recvtype))
        recv = (c.has(role::recvcount) ? c.recvcount : 1) * mpe::type_size(c.recvtype);
      break;
    case CallClass::kFileRead:
      if (blocking) recv = mpe::status_bytes(c.status);
      break;
    case CallClass::kFileWrite:
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
    case CallClass::kOther:
    case CallClass::kInit:
    case CallClass::kFinalize:
    case CallClass::kPcontrol:
    case CallClass::kProbe:
    case CallClass::kMprobe:
    case CallClass::kRequestGetStatus:
    case CallClass::kCancel:
    case CallClass::kRequestFree:
    case CallClass::kPready:
    case CallClass::kParrived:
    case CallClass::kBarrier:
    case CallClass::kCommCreate:
    case CallClass::kCommFree:
    case CallClass::kWinSync:
    case CallClass::kFileOpen:
    case CallClass::kFileClose:
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
  if (g_paused.load(std::memory_order_relaxed))
    g_pause_start.store(mpe_clock_now(), std::memory_order_relaxed);
}

// MPI_Pcontrol: 0 pauses, 1 resumes, 2 resets the counters; other levels are ignored.
void pcontrol(int level) noexcept {
  if (level == 0 && !g_paused.exchange(true)) {
    g_pause_start.store(mpe_clock_now(), std::memory_order_relaxed);
  } else if (level == 1 && g_paused.exchange(false)) {
    g_paused_ticks.fetch_add(mpe_clock_now() - g_pause_start.load(std::memory_order_relaxed),
                             std::memory_order_relaxed);
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
    t->requests.erase(*call.requests);
}

// The per-call path. ~10 ns for a call that moves no bytes: a TLS load, one table row update.
void on_leave(Call& call) noexcept {
  const bool is_pcontrol = call.cls == CallClass::kPcontrol;
  if (__builtin_expect(is_pcontrol, 0)) pcontrol(call.has(role::level) ? call.level : -1);
  // The run starts when MPI_Init(_thread) is entered, so the init time is part of it.
  if (__builtin_expect(call.cls == CallClass::kInit, 0))
    g_run_start.store(call.t_enter, std::memory_order_relaxed);
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
  auto ns = [&](uint64_t ticks) {
    return static_cast<uint64_t>(std::llround(static_cast<double>(ticks) * ns_per_tick));
  };
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
    if (info.cls == CallClass::kFinalize) sum = Stat{1, 0, 0, 0, 0, 0, 0};  // timed span ends as it starts
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

// This rank's contribution to the report: its profile behind one byte that says whether it could
// write its own file ('1') or not ('0'); empty when it could not even build the profile. Never
// throws, so that every rank reaches the gather.
std::string contribution(uint64_t end, int rank, int size, const std::string& base) noexcept {
  try {
    const std::string text = mpe::time::serialize(collect(end, rank, size));
    const std::string mine = base + "." + std::to_string(rank) + ".txt";
    const bool wrote = write_file(mine, text);
    if (!wrote) mpe::config::warn("libmpetime: cannot write " + mine + ": " + std::strerror(errno), false);
    return (wrote ? "1" : "0") + text;
  } catch (const std::bad_alloc&) {
    mpe::config::warn("libmpetime: out of memory while building this rank's profile; it is left out", false);
    return std::string();
  }
}

void finalize() {
  const uint64_t end = mpe_clock_now();
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // Nothing before the gather may throw, or the other ranks would wait in it.
  std::string base, mine;
  try {
    base = mpe::config::output_path(".mpetime");
  } catch (const std::bad_alloc&) {
    // An empty contribution: rank 0 then names this rank as the one without a profile.
  }
  if (!base.empty()) mine = contribution(end, rank, size, base);

  // Gather every rank's contribution on rank 0 over a private communicator.
  MPI_Comm comm;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
    mpe::config::warn("libmpetime: cannot create a communicator for the report; per-process files only");
    return;
  }
  auto gathered = mpe::collective::gather_to_root(mine, 0, comm);
  PMPI_Comm_free(&comm);
  if (!gathered.ok()) {
    mpe::config::warn("libmpetime: cannot gather the report (" + gathered.status().to_string() +
                      "); per-process files only");
    return;
  }
  if (rank != 0) return;

  std::vector<mpe::time::RankProfile> profiles;
  profiles.reserve(static_cast<size_t>(size));
  int files = 0;
  for (int i = 0; i < size; ++i) {
    const std::string& blob = gathered.value()[static_cast<size_t>(i)];
    if (blob.empty()) {
      mpe::config::warn("libmpetime: rank " + std::to_string(i) + " could not build its profile; no report");
      return;
    }
    files += blob[0] == '1';
    auto profile = mpe::time::parse(blob.substr(1));
    if (!profile.ok()) {
      mpe::config::warn("libmpetime: rank " + std::to_string(i) +
                        " sent a bad profile: " + profile.status().message());
      return;
    }
    profiles.push_back(std::move(profile.value()));
  }
  if (const mpe::Status s = mpe::time::check_run(&profiles); !s.ok()) {
    mpe::config::warn("libmpetime: " + s.message());
    return;
  }
  const std::string txt = base + ".txt", json = base + ".json";
  const bool ok =
      write_file(txt, mpe::time::text_report(profiles)) && write_file(json, mpe::time::json_report(profiles));
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
  } catch (const std::bad_alloc&) {
    mpe::config::warn("libmpetime: out of memory at finalize; the report is incomplete or missing");
  } catch (const std::exception&) {
    mpe::config::warn("libmpetime: the report failed");
  }
}

constexpr uint64_t kEnterClasses = mpe::kCompletingClasses | mpe::classes(CallClass::kRequestFree);

const mpe::Tool kTool = {
    "time", mpe::kNeedsTime | mpe::kNeedsStatus, on_enter, on_leave, nullptr, before_finalize, kEnterClasses};

__attribute__((constructor)) void register_time_tool() {
  if (mpe_core_register_tool(&kTool) != 0)
    mpe::config::warn("libmpetime: too many tools loaded; time is off");
}

}  // namespace
