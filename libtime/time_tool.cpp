// libmpetime: time, calls and bytes per MPI call site and per MPI routine per process; one file
// per process and the whole-run report from rank 0 at MPI_Finalize.
//
// Design. Each thread accumulates into its own Table, allocated and linked into a global list
// under a mutex the first time the thread makes an MPI call. A table has one Row of counters per
// call site (mpe/callsite.h), indexed by the site's id; the per-routine figures are the sums of
// each routine's sites, made at finalize, so the per-call path updates one row only. After a
// thread's first calls from each site the per-call path takes no lock and allocates nothing.
// Nested calls: call.depth says how deep a call is; a per-thread array of child time per depth
// gives each call the time of the calls nested in it, so the exclusive times of a thread add up
// to no more than its wall time. Bytes are derived from each routine's semantics (bytes.h);
// receives take their size from the status, which the core guarantees to be real because this
// tool asks for kNeedsStatus.
//
// The per-call path's common case is inline in time_hooks.h (the library's own wrappers call it
// directly when it is the only tool), its rare cases are here; the finalize report is in
// time_report.cpp, the tables both share in time_table.h.
#include <mpi.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "mpe/bytes.h"
#include "mpe/callsite.h"
#include "mpe/completion.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/request_table.h"
#include "time_hooks.h"
#include "time_table.h"

namespace mpe::tools::time::tool {

std::mutex g_mutex;
Table* g_tables = nullptr;
int g_nthreads = 0;

std::atomic<bool> g_paused{false};
std::atomic<uint64_t> g_run_start{0};     // ticks when the measured span began (init or reset)
std::atomic<uint64_t> g_pause_start{0};   // ticks when the current pause began
std::atomic<uint64_t> g_paused_ticks{0};  // total ticks spent paused since g_run_start

__thread Table* t_table __attribute__((tls_model("initial-exec")));

namespace {

using mpe::Call;
using mpe::CallClass;
using mpe::Mode;
namespace role = mpe::role;

// Says once per process that call sites were lost to a lack of memory.
void warn_sites_lost() noexcept {
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    mpe::config::warn(
        "libmpetime: out of memory for the call-site table; some calls are counted under \"unknown call "
        "site\"",
        false);
}

Table* new_table() noexcept {
  auto* t = new (std::nothrow) Table{};
  if (!t) return nullptr;
  t->cache = &kNoCache;
  t->row0 = kFreshRow;
  t->row0.fn = kNeverMatches;
  t->rows = &t->row0;
  t->capacity = 1;
  for (int f = 0; f < mpe::kFnCount; ++f) {
    t->unknown[f] = kFreshRow;
    t->unknown[f].fn = static_cast<uint16_t>(f);
  }
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

// Bytes of request completions: what each completed receive delivered, by the traffic rule.
void completed_bytes(const Call& c, Row& st, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests)) return;  // the snapshot is taken for application calls only
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  auto one = [&](int i, const MPI_Status* s) {
    if (i < 0 || i >= n || t->snap[i] == MPI_REQUEST_NULL) return;
    const MPI_Request request = t->snap[i];
    const TrackedRequest* found = t->requests.find(request);
    if (!found) return;
    const TrackedRequest what = *found;  // erase() below may move the entry
    mpe::traffic::Message m;
    if (what.file_read)
      st.recv += static_cast<uint64_t>(mpe::status_bytes(s));
    else if (mpe::traffic::delivered(what.posted, s, &m)) {
      st.recv += m.bytes;
      ++st.messages;
    }
    if (mpe::traffic::ends_at_completion(what.posted.kind))
      t->requests.erase(request);  // a persistent one lives until freed
  };
  mpe::for_each_completed(c, one);
}

// Before a Wait/Test: remembers each request's handle, since MPI overwrites completed handles
// with MPI_REQUEST_NULL; completed_bytes() reads what the completed ones were after the call.
// Copying each request's entry here took ~45 instructions a request on every call, though most
// calls of a polling loop complete nothing (an MPI_Testany of 16: 750).
void snapshot(const Call& c, Table* t) noexcept {
  if (c.depth != 0 || !c.has(role::requests)) return;
  const int n = c.nreq() < kSnapMax ? c.nreq() : kSnapMax;
  std::memcpy(t->snap, c.requests, static_cast<size_t>(n > 0 ? n : 0) * sizeof(MPI_Request));
}

// What the traffic rule (mpe/traffic.h) says a point-to-point call moved, as byte counts.
struct TimeSink {
  Table* t;
  int64_t sent = 0, received = 0;
  uint32_t messages = 0;

  void send(const Call&, const mpe::traffic::Message& m, const MPI_Request*) {
    sent += static_cast<int64_t>(m.bytes);
    ++messages;
  }
  void recv(const Call&, const mpe::traffic::Message& m) {
    received += static_cast<int64_t>(m.bytes);
    ++messages;
  }
  void post(const Call&, MPI_Request r, const mpe::traffic::Posted& p) { follow(t, r, TrackedRequest{p}); }
  const mpe::traffic::Posted* find(MPI_Request r) {
    const TrackedRequest* p = t->requests.find(r);
    return p ? &p->posted : nullptr;
  }
  mpe::traffic::ProbedMessages& probed() { return t->probed; }
};

}  // namespace

__attribute__((noinline)) void count_bytes(const Call& c, Row& st, Table* t) noexcept {
  if (c.rc != MPI_SUCCESS) return;
  int64_t sent = 0, recv = 0;
  if (mpe::traffic::moves_messages(c.cls)) {
    TimeSink sink{t};
    mpe::traffic::visit(c, sink);
    sent = sink.sent;
    recv = sink.received;
    st.messages += sink.messages;
  } else if (mpe::completes_requests(c.cls)) {
    completed_bytes(c, st, t);
    return;
  } else if (mpe::is_collective(c.cls)) {
    const mpe::Bytes b = mpe::collective_bytes(c);
    sent = b.sent;
    recv = b.recv;
  } else if (c.cls == CallClass::kRma) {
    const mpe::Bytes b = mpe::rma_bytes(c);
    sent = b.sent;
    recv = b.recv;
  } else if (c.cls == CallClass::kFileRead) {
    if (c.mode == Mode::kBlocking)
      recv = mpe::status_bytes(mpe::status_of(c));
    else if (c.has(role::requests))
      follow(t, *c.requests,
             TrackedRequest{{mpe::traffic::RequestKind::kRecv, false, {}}, true});  // bytes at completion
  } else if (c.cls == CallClass::kFileWrite) {
    sent = c.sendcount * mpe::type_size(c.sendtype);
  }
  if (sent > 0) st.sent += static_cast<uint64_t>(sent);
  if (recv > 0) st.recv += static_cast<uint64_t>(recv);
}

namespace {

// Clears a row's counters; its routine stays (the owner thread may be claiming it right now).
void reset_row(Row& r) noexcept {
  r.calls = r.incl = r.nested = r.max = r.sent = r.recv = 0;
  r.messages = 0;
  r.min = kNoMin;
}

void reset_all() noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);  // rows and aliases grow under it
  for (Table* t = g_tables; t; t = t->next) {
    for (uint32_t i = 0; i < t->capacity; ++i) reset_row(t->rows[i]);
    for (Row& r : t->unknown) reset_row(r);
    for (uint32_t i = 0; t->aliases.slots && i <= t->aliases.mask; ++i)
      if (t->aliases.slots[i].key) reset_row(*t->aliases.slots[i].row);
  }
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

}  // namespace

void on_enter(Call& call) noexcept {
  Table* t = t_table;
  if (!t || g_paused.load(std::memory_order_relaxed)) return;
  if (mpe::completes_requests(call.cls))
    snapshot(call, t);
  else if (call.has(role::requests))
    t->requests.erase(*call.requests);
}

namespace {

// Grows a thread's rows to cover site `id`, under the mutex that reset_all and collect take;
// false when out of memory.
bool grow_rows(Table* t, uint32_t id) noexcept {
  if (id >= (1u << 24)) return false;  // 1 GiB of rows per thread: treat as out of memory
  uint32_t capacity = t->capacity < 64 ? 64 : t->capacity;
  while (capacity <= id) capacity *= 2;
  auto* fresh = static_cast<Row*>(std::malloc(sizeof(Row) * capacity));
  if (!fresh) return false;
  for (uint32_t i = t->capacity; i < capacity; ++i) fresh[i] = kFreshRow;
  Row* old;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::memcpy(fresh, t->rows, sizeof(Row) * t->capacity);
    old = t->rows;
    t->rows = fresh;
    t->capacity = capacity;
  }
  if (old != &t->row0) std::free(old);
  return true;
}

// The alias row of (id, fn), added when new; null when out of memory.
Row* alias_row(Table* t, uint32_t id, uint16_t fn) noexcept {
  Aliases& a = t->aliases;
  const uint64_t key = (uint64_t{id} << 16 | fn) + 1;
  auto probe = [](const Aliases& m, uint64_t k) {
    uint32_t i = static_cast<uint32_t>(k * 0x9E3779B97F4A7C15ull >> 32) & m.mask;
    while (m.slots[i].key && m.slots[i].key != k) i = (i + 1) & m.mask;
    return i;
  };
  if (a.slots) {
    const uint32_t i = probe(a, key);
    if (a.slots[i].key) return a.slots[i].row;
  }
  auto* row = static_cast<Row*>(std::malloc(sizeof(Row)));
  if (!row) return nullptr;
  *row = kFreshRow;
  row->fn = fn;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (2 * (a.used + 1) > (a.slots ? a.mask + 1 : 0)) {  // keep the load under a half
    const uint32_t capacity = a.slots ? 2 * (a.mask + 1) : 16;
    auto* slots = static_cast<Aliases::Slot*>(std::calloc(capacity, sizeof(Aliases::Slot)));
    if (!slots) {
      std::free(row);
      return nullptr;
    }
    Aliases bigger{slots, capacity - 1, a.used};
    for (uint32_t i = 0; a.slots && i <= a.mask; ++i)
      if (a.slots[i].key) bigger.slots[probe(bigger, a.slots[i].key)] = a.slots[i];
    std::free(a.slots);
    a = bigger;
  }
  a.slots[probe(a, key)] = Aliases::Slot{key, row};
  ++a.used;
  return row;
}

// The row of routine `fn` at site `id` (< t->capacity, or 0).
Row* row_of(Table* t, uint32_t id, uint16_t fn) noexcept {
  if (id == 0) return &t->unknown[fn];
  Row& r = t->rows[id];
  if (r.fn == fn) return &r;
  if (r.fn == kUnclaimed) {
    r.fn = fn;
    return &r;
  }
  if (Row* a = alias_row(t, id, fn)) return a;
  warn_sites_lost();
  return &t->unknown[fn];
}

}  // namespace

__attribute__((noinline)) void leave_slow(Call& call, Table* t, uint8_t traits) noexcept {
  if (!t && (t = new_table()) == nullptr) return;
  uint32_t id = mpe::core::callsite(call);
  if (id == 0) warn_sites_lost();  // the core ran out of memory
  if (id > t->max_id) t->max_id = id;
  if (id >= t->capacity && !grow_rows(t, id)) {
    warn_sites_lost();
    id = 0;
  }
  // The fast path may use the cache only while every id in it has a row (see Table::cache).
  t->cache = mpe::core::t_site_cache && t->max_id < t->capacity ? mpe::core::t_site_cache : &kNoCache;
  record(call, t, *row_of(t, id, static_cast<uint16_t>(call.fn)), traits);
}

__attribute__((noinline)) void leave_rare(Call& call, uint8_t traits) noexcept {
  const bool is_pcontrol = call.cls == CallClass::kPcontrol;
  if (is_pcontrol) pcontrol(call.has(role::level) ? call.level : -1);
  // The run starts when MPI_Init(_thread) is entered, so the init time is part of it.
  if (call.cls == CallClass::kInit) g_run_start.store(call.t_enter, std::memory_order_relaxed);
  if (g_paused.load(std::memory_order_relaxed) && !is_pcontrol) return;  // Pcontrol calls always count
  leave_slow(call, t_table, traits);
}

namespace {

const mpe::Tool kTool =
    mpe::core::solo_tool<Hooks>("time", nullptr, mpe::tools::time::tool::report_at_finalize);

__attribute__((constructor)) void register_time_tool() {
  if (mpe_core_register_tool(&kTool) != 0)
    mpe::config::warn("libmpetime: too many tools loaded; time is off");
}

}  // namespace
}  // namespace mpe::tools::time::tool
