// The shared MPI_T reader: one session, the watched variables, a handle per (communicator,
// variable) for variables bound to communicators, and the read with its per-call cache.
//
// Hot path (read): the thread's last communicator slot (a compare; else one lookup in a fixed
// open-addressed table), one PMPI_T_pvar_read into a thread-local buffer, a sum keeping the
// largest element. No locks, no allocation. Changes to the communicator table (creation, free)
// take a spin lock that reads never take; a slot keeps its key for life (freed slots stay
// deleted), so a reader holding a slot pointer never sees another communicator's handles.
//
// The per-call cache: when two or more tools watch a variable, the first read in a call stamps
// the call (Call::t_enter, which the core overwrites with the entry time right after the enter
// hooks) with a per-thread marker that has its top bit set, which no clock value has; a later
// read in the same call that finds the marker returns the cached sample. Every tool that shares a
// variable with another asks the core for time (liblog, libmpetime), so the stamp never outlives
// its call.
#include "mpe/mpit.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "mpe/config.h"
#include "mpe/core.h"

namespace mpe::mpit {

namespace {

constexpr int kReadBytes = 65536;  // per-thread read buffer: 8k 8-byte elements

enum : int { kEmpty = 0, kLive = 1, kDeleted = 2 };

// A watched variable, as the read needs it.
struct Var {
  int index;
  int width;  // bytes per element: 4 or 8
  bool continuous;
  MPI_T_pvar_handle global;  // !per_comm: the one handle
  int global_count;          // its elements (0: not bound)
};

struct CommSlot {
  std::atomic<int> state;
  uintptr_t key;
  MPI_Comm comm;
  MPI_T_pvar_handle handle[kMaxWatched];
  int count[kMaxWatched];  // elements of each handle; 0 when not bound
};

struct State {
  int starts = 0;  // start() calls not yet matched by stop()
  bool t_initialized = false;
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  std::atomic<int> nwatched{0};
  std::atomic<uint32_t> frees{0};  // communicators freed (comm_frees)
  std::atomic_flag lock = ATOMIC_FLAG_INIT;
};

State g;
Var g_vars[kMaxWatched];
Watched g_watched[kMaxWatched];
// constinit: zero pages the kernel maps on demand. A dynamic initializer (what GCC emits for the
// atomics without it) would touch all 3.1 MiB in every process that loads a tool, reading MPI_T or not.
constinit CommSlot g_slots[kSlots] = {};

// The read buffer, allocated at a thread's first read: every tool library carries this file, and
// a static 64 KiB per thread per library would cost threads that never read.
__thread unsigned char* t_buf __attribute__((tls_model("initial-exec")));
__thread MPI_Comm t_last_comm __attribute__((tls_model("initial-exec")));
__thread CommSlot* t_last_slot __attribute__((tls_model("initial-exec")));
__thread uint64_t t_marker __attribute__((tls_model("initial-exec")));
struct Cached {  // plain data (a Sample's fields), so that __thread needs no constructor
  uint64_t marker;
  MPI_Comm comm;
  uint64_t total, top;
  int top_peer, count, slot;
};
__thread Cached t_cache[kMaxWatched] __attribute__((tls_model("initial-exec")));

struct SpinGuard {
  SpinGuard() {
    while (g.lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() { g.lock.clear(std::memory_order_release); }
};

inline uintptr_t comm_key(MPI_Comm c) {
  uintptr_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}

inline uint32_t slot_hash(uintptr_t k) {
  uint64_t x = static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(x >> 40);
}

CommSlot* slot_find(MPI_Comm c) {
  const uintptr_t k = comm_key(c);
  for (uint32_t i = slot_hash(k), n = 0; n < kSlots; ++i, ++n) {
    CommSlot& s = g_slots[i % kSlots];
    const int st = s.state.load(std::memory_order_acquire);
    if (st == kEmpty) return nullptr;
    if (st == kLive && s.key == k) return &s;
  }
  return nullptr;
}

void free_handle(const Var& v, MPI_T_pvar_handle* h) {
  if (!v.continuous) PMPI_T_pvar_stop(g.session, *h);
  PMPI_T_pvar_handle_free(g.session, h);
}

// Allocates (and starts, unless continuous) a handle for variable id on object obj (null: no
// object); returns its element count, or 0 when it cannot be read.
int bind(int id, void* obj, MPI_T_pvar_handle* h) {
  const Var& v = g_vars[id];
  int count = 0;
  if (PMPI_T_pvar_handle_alloc(g.session, v.index, obj, h, &count) != MPI_SUCCESS) return 0;
  if (count <= 0 || count * v.width > kReadBytes ||
      (!v.continuous && PMPI_T_pvar_start(g.session, *h) != MPI_SUCCESS)) {
    PMPI_T_pvar_handle_free(g.session, h);
    return 0;
  }
  return count;
}

// Binds the per-communicator variables first..last-1 on slot s. Under the lock.
void bind_slot(CommSlot& s, int first, int last) {
  for (int id = first; id < last; ++id) {
    s.count[id] = 0;
    if (!g_watched[id].per_comm) continue;
    MPI_Comm obj = s.comm;
    s.count[id] = bind(id, &obj, &s.handle[id]);
  }
}

void unbind_slot(CommSlot& s) {
  const int n = g.nwatched.load(std::memory_order_relaxed);
  for (int id = 0; id < n; ++id)
    if (s.count[id] > 0) {
      free_handle(g_vars[id], &s.handle[id]);
      s.count[id] = 0;
    }
}

CommSlot* slot_add(MPI_Comm c) {
  if (c == MPI_COMM_NULL || !g.t_initialized) return nullptr;
  SpinGuard guard;
  if (CommSlot* s = slot_find(c)) return s;
  const uintptr_t k = comm_key(c);
  for (uint32_t i = slot_hash(k), n = 0; n < kSlots; ++i, ++n) {
    CommSlot& s = g_slots[i % kSlots];
    if (s.state.load(std::memory_order_relaxed) != kEmpty) continue;
    s.key = k;
    s.comm = c;
    bind_slot(s, 0, g.nwatched.load(std::memory_order_relaxed));
    s.state.store(kLive, std::memory_order_release);
    return &s;
  }
  return nullptr;  // table full: this communicator is not read
}

// The value kind and width of a datatype we can read; false for any other.
bool readable_type(MPI_Datatype t, PvarValueKind* kind, int* width) {
  if (t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG) {
    *kind = PvarValueKind::kUnsigned;
  } else if (t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_COUNT) {
    *kind = PvarValueKind::kSigned;
  } else if (t == MPI_DOUBLE) {
    *kind = PvarValueKind::kDouble;
  } else {
    return false;
  }
  const int size = type_size(t);
  if (size != 4 && size != 8) return false;
  if (*kind == PvarValueKind::kDouble && size != 8) return false;
  *width = size;
  return true;
}

// Why we cannot read v, or "" when we can.
std::string unreadable_reason(const PvarInfo& v, PvarValueKind* kind, int* width) {
  if (!v.unsafe.empty()) return v.unsafe;
  if (!v.known_class) return "a class the MPI standard does not define";
  if (v.bind != MPI_T_BIND_NO_OBJECT && v.bind != MPI_T_BIND_MPI_COMM)
    return std::string("bound to a ") + bind_name(v.bind) + ", not a communicator";
  if (!readable_type(v.type, kind, width)) return "datatype " + type_name(v.type);
  return "";
}

// Adds v as watched variable (under the lock); -1 when full or its handle fails.
int add_watched(const PvarInfo& v, PvarValueKind kind, int width, std::string* why) {
  const int id = g.nwatched.load(std::memory_order_relaxed);
  if (id >= kMaxWatched) {
    *why = "more than " + std::to_string(kMaxWatched) + " variables";
    return -1;
  }
  Var& var = g_vars[id];
  var.index = v.index;
  var.width = width;
  var.continuous = v.continuous;
  var.global_count = 0;
  Watched& w = g_watched[id];
  w.name = v.name;
  w.description = v.description;
  w.type_name = type_name(v.type);
  w.cls = v.cls;
  w.semantics = pvar_semantics(v.cls);
  w.kind = kind;
  w.per_comm = v.bind == MPI_T_BIND_MPI_COMM;
  w.users = 1;
  if (!w.per_comm && (var.global_count = bind(id, nullptr, &var.global)) == 0) {
    *why = "its handle cannot be allocated or started";
    return -1;
  }
  g.nwatched.store(id + 1, std::memory_order_release);
  // Bind it on the communicators followed so far.
  if (w.per_comm)
    for (CommSlot& s : g_slots)
      if (s.state.load(std::memory_order_relaxed) == kLive) bind_slot(s, id, id + 1);
  return id;
}

}  // namespace

bool start() noexcept {
  if (g.starts++ > 0) return g.t_initialized;
  // MPI_T at the application's thread level: the tools read in their hooks of its MPI calls, so
  // from the threads that level lets call MPI. Below MPI_THREAD_MULTIPLE, MPICH's MPI_T then takes
  // no lock per read (67 instructions fewer, callgrind). Before MPI_Init (mpe mpit): MULTIPLE.
  int level = MPI_THREAD_MULTIPLE, initialized = 0, finalized = 0, provided = 0;
  if (PMPI_Initialized(&initialized) == MPI_SUCCESS && initialized &&
      PMPI_Finalized(&finalized) == MPI_SUCCESS && !finalized && PMPI_Query_thread(&level) != MPI_SUCCESS)
    level = MPI_THREAD_MULTIPLE;
  if (PMPI_T_init_thread(level, &provided) != MPI_SUCCESS) {
    config::warn("MPI_T_init_thread failed; no MPI_T variable is read");
    return false;
  }
  if (PMPI_T_pvar_session_create(&g.session) != MPI_SUCCESS) {
    config::warn("MPI_T_pvar_session_create failed; no MPI_T variable is read");
    PMPI_T_finalize();
    return false;
  }
  g.t_initialized = true;
  slot_add(MPI_COMM_WORLD);
  slot_add(MPI_COMM_SELF);
  return true;
}

void stop() noexcept {
  if (g.starts <= 0 || --g.starts > 0 || !g.t_initialized) return;
  SpinGuard guard;
  for (CommSlot& s : g_slots)
    if (s.state.load(std::memory_order_relaxed) == kLive) {
      unbind_slot(s);
      s.state.store(kDeleted, std::memory_order_release);
    }
  const int n = g.nwatched.load(std::memory_order_relaxed);
  for (int id = 0; id < n; ++id)
    if (g_vars[id].global_count > 0) {
      free_handle(g_vars[id], &g_vars[id].global);
      g_vars[id].global_count = 0;
    }
  PMPI_T_pvar_session_free(&g.session);
  PMPI_T_finalize();
  g.t_initialized = false;
}

int watch(const std::string& name, std::string* why) {
  if (!g.t_initialized) {
    *why = "MPI_T is not started";
    return -1;
  }
  SpinGuard guard;
  const int n = g.nwatched.load(std::memory_order_relaxed);
  for (int id = 0; id < n; ++id)
    if (g_watched[id].name == name) {
      ++g_watched[id].users;
      return id;
    }
  PvarInfo v;
  if (!find_pvar(name, &v)) {
    *why = "this MPI library exports no performance variable " + name;
    return -1;
  }
  PvarValueKind kind;
  int width = 0;
  if (std::string r = unreadable_reason(v, &kind, &width); !r.empty()) {
    *why = name + ": " + r;
    return -1;
  }
  return add_watched(v, kind, width, why);
}

namespace {

// Says once per process (whichever tools ask for every variable) which variables are not bound
// because binding them would harm the program, and why: one line.
void say_unsafe_skipped(const std::vector<PvarInfo>& vars) {
  static std::atomic<bool> said{false};
  std::string names, why;
  int n = 0;
  for (const PvarInfo& v : vars)
    if (!v.unsafe.empty()) {
      names += (n++ ? ", " : "") + v.name;
      if (why.find(v.unsafe) == std::string::npos) why += (why.empty() ? "" : "; ") + v.unsafe;
    }
  if (n == 0 || said.exchange(true)) return;
  config::warn("MPI_T: " + std::to_string(n) + " performance variable" + (n > 1 ? "s" : "") + " not read (" +
               names + "): " + why);
}

}  // namespace

std::vector<int> watch_all() {
  std::vector<int> ids;
  if (!g.t_initialized) return ids;
  const std::vector<PvarInfo> vars = performance_variables(MPI_T_PVAR_SESSION_NULL);
  say_unsafe_skipped(vars);
  for (const PvarInfo& v : vars) {
    PvarValueKind kind;
    int width = 0;
    if (!unreadable_reason(v, &kind, &width).empty()) continue;
    std::string why;
    const int id = watch(v.name, &why);
    if (id >= 0) ids.push_back(id);
    if (g.nwatched.load() >= kMaxWatched) break;
  }
  return ids;
}

const Watched* watched(int id) noexcept {
  return id >= 0 && id < g.nwatched.load(std::memory_order_acquire) ? &g_watched[id] : nullptr;
}

void comm_created(MPI_Comm c) noexcept { slot_add(c); }

int comm_slot(MPI_Comm c) noexcept {
  CommSlot* s = slot_find(c);
  if (!s) s = slot_add(c);
  return s ? static_cast<int>(s - g_slots) : -1;
}

void comm_freed(MPI_Comm c) noexcept {
  if (!g.t_initialized) return;
  SpinGuard guard;
  CommSlot* s = slot_find(c);
  if (!s) return;
  unbind_slot(*s);
  s->state.store(kDeleted, std::memory_order_release);
  g.frees.fetch_add(1, std::memory_order_release);
}

bool direct_handle(int id, MPI_Comm c, DirectHandle* out) noexcept {
  const Watched* w = watched(id);
  if (!w || !g.t_initialized) return false;
  const Var& v = g_vars[id];
  DirectHandle h{g.session, v.global, w->kind, v.width, v.global_count, -1};
  if (w->per_comm) {
    CommSlot* s = slot_find(c == MPI_COMM_NULL ? MPI_COMM_WORLD : c);
    if (!s) s = slot_add(c == MPI_COMM_NULL ? MPI_COMM_WORLD : c);
    if (!s) return false;
    h.handle = s->handle[id];
    h.count = s->count[id];
    h.slot = static_cast<int>(s - g_slots);
  }
  if (h.count <= 0 || h.count * h.width > kDirectBytes) return false;
  *out = h;
  return true;
}

const std::atomic<uint32_t>* comm_frees() noexcept { return &g.frees; }

// Aligned to a cache line: where this hot function happened to start changed libumq's cost per
// receive on the pvar MPICH by 6 ns (bench_umq, same code, 10 runs each).
__attribute__((aligned(64))) bool read(int id, MPI_Comm c, Call* call, Sample* out) noexcept {
  if (static_cast<unsigned>(id) >= static_cast<unsigned>(g.nwatched.load(std::memory_order_relaxed)) ||
      !g.t_initialized)
    return false;
  const Watched& w = g_watched[id];
  if (c == MPI_COMM_NULL) c = MPI_COMM_WORLD;
  const bool shared = call && w.users > 1;
  if (shared && t_marker != 0 && call->t_enter == t_marker && t_cache[id].marker == t_marker &&
      t_cache[id].comm == c) {
    const Cached& k = t_cache[id];  // another tool read it in this call
    out->total = k.total;
    out->top = k.top;
    out->top_peer = k.top_peer;
    out->count = k.count;
    out->slot = k.slot;
    return true;
  }
  const Var& v = g_vars[id];
  MPI_T_pvar_handle h;
  int count;
  int slot = -1;
  if (w.per_comm) {
    CommSlot* s = t_last_slot;
    if (c != t_last_comm || !s || s->state.load(std::memory_order_relaxed) != kLive) {
      s = slot_find(c);
      if (!s) s = slot_add(c);  // a communicator we did not see created (MPI_Comm_idup, ...)
      t_last_comm = c;
      t_last_slot = s;
    }
    if (!s || s->count[id] <= 0) return false;
    h = s->handle[id];
    count = s->count[id];
    slot = static_cast<int>(s - g_slots);
  } else {
    h = v.global;
    count = v.global_count;
  }
  if (__builtin_expect(!t_buf, 0) && !(t_buf = static_cast<unsigned char*>(std::malloc(kReadBytes))))
    return false;
  if (PMPI_T_pvar_read(g.session, h, t_buf) != MPI_SUCCESS) return false;
  sum(w.kind, v.width, t_buf, count, out);
  out->slot = slot;
  if (shared) {
    if (call->t_enter != t_marker || t_marker == 0) {
      t_marker = ((t_marker + 1) & ~(uint64_t{1} << 63)) | (uint64_t{1} << 63);
      call->t_enter = t_marker;
    }
    t_cache[id] = Cached{t_marker, c, out->total, out->top, out->top_peer, out->count, out->slot};
  }
  return true;
}

double as_double(PvarValueKind kind, uint64_t v) {
  switch (kind) {
    case PvarValueKind::kDouble: {
      double d;
      std::memcpy(&d, &v, 8);
      return d;
    }
    case PvarValueKind::kSigned:
      return static_cast<double>(static_cast<int64_t>(v));
    default:
      return static_cast<double>(v);
  }
}

uint64_t difference(PvarValueKind kind, uint64_t a, uint64_t b) {
  if (kind != PvarValueKind::kDouble) return a - b;  // two's complement covers both integer kinds
  double x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  const double d = x - y;
  uint64_t r;
  std::memcpy(&r, &d, 8);
  return r;
}

}  // namespace mpe::mpit
