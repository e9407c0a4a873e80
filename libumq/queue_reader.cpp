// libumq's queue reads: the MPI_T variable, the per-communicator handles, the receive hook.
//
// Hot path (enter hook of a receive): one comm lookup in a fixed open-addressed table (skipped
// when the thread's last receive used the same communicator), one PMPI_T_pvar_read into a
// thread-local buffer, a sum. Above the threshold: record() (call_sites.cpp). No locks, no
// allocation (except the first receive on a communicator the tool has not seen, e.g. one from
// MPI_Comm_idup, which binds a handle lazily).
#include "queue_reader.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "call_sites.h"
#include "mpe/config.h"
#include "table_hash.h"

namespace mpe::libumq {

namespace {

constexpr int kComms = 4096;   // communicators tracked at once (open addressing)
constexpr int kLabels = 1024;  // communicator descriptions kept for the report
constexpr int kLabelLen = 96;
constexpr int kReadBytes = 65536;  // per-thread pvar read buffer (16k MPI_UNSIGNED peers)

// A slot of the communicator table.
enum : int { kEmpty = 0, kLive = 1, kDeleted = 2 };

struct CommEntry {
  std::atomic<int> state;  // kEmpty, kLive or kDeleted
  uintptr_t key;
  int label;
  int count;
  bool bound;
  MPI_T_pvar_handle handle;
};

struct State {
  bool active;
  bool comm_bound;
  bool continuous;
  int width;  // bytes per element: 4 or 8
  int index;
  uint64_t threshold;
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  bool t_initialized;
  bool global_bound;  // g_global_handle allocated
  std::atomic<int> nlabels;
  std::atomic_flag lock = ATOMIC_FLAG_INIT;  // comm-table mutations only (never the read path)
};

constinit State g{};  // constinit: ready before any constructor registers the tool
VariableInfo g_variable;
CommEntry g_comms[kComms];
char g_labels[kLabels][kLabelLen];

// The NO_OBJECT variable's one handle.
MPI_T_pvar_handle g_global_handle;
int g_global_count;

// Initial-exec: one %fs-relative access instead of a __tls_get_addr call per receive.
alignas(8) __thread unsigned char t_buf[kReadBytes] __attribute__((tls_model("initial-exec")));
// The communicator of this thread's last receive and its entry: most receives repeat it.
__thread MPI_Comm t_last_comm __attribute__((tls_model("initial-exec")));
__thread CommEntry* t_last_entry __attribute__((tls_model("initial-exec")));

inline uintptr_t comm_key(MPI_Comm c) {
  uintptr_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}

// Serializes changes to the communicator table; readers never take it.
struct SpinGuard {
  SpinGuard() {
    while (g.lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  ~SpinGuard() { g.lock.clear(std::memory_order_release); }
};

CommEntry* comm_find(MPI_Comm c) {
  const uintptr_t k = comm_key(c);
  for (uint32_t i = table_hash(k), n = 0; n < kComms; ++i, ++n) {
    CommEntry& e = g_comms[i % kComms];
    const int s = e.state.load(std::memory_order_acquire);
    if (s == kEmpty) return nullptr;
    if (s == kLive && e.key == k) return &e;
  }
  return nullptr;
}

int new_label(const char* text) {
  const int id = g.nlabels.fetch_add(1);
  if (id >= kLabels) return -1;
  std::snprintf(g_labels[id], kLabelLen, "%s", text);
  return id;
}

// Adds c to the table, binding a pvar handle when the variable is per communicator. Takes only
// empty slots, never deleted ones: on_receive relies on a slot keeping its key.
CommEntry* comm_add(MPI_Comm c, const char* how, MPI_Comm parent) {
  if (c == MPI_COMM_NULL) return nullptr;
  SpinGuard guard;
  if (CommEntry* e = comm_find(c)) return e;
  const uintptr_t k = comm_key(c);
  CommEntry* slot = nullptr;
  for (uint32_t i = table_hash(k), n = 0; n < kComms; ++i, ++n) {
    CommEntry& e = g_comms[i % kComms];
    if (e.state.load(std::memory_order_relaxed) == kEmpty) {
      slot = &e;
      break;
    }
  }
  if (!slot) return nullptr;
  int size = 0;
  PMPI_Comm_size(c, &size);
  char text[kLabelLen];
  if (c == MPI_COMM_WORLD) {
    std::snprintf(text, sizeof text, "MPI_COMM_WORLD");
  } else {
    const CommEntry* p = parent != MPI_COMM_NULL ? comm_find(parent) : nullptr;
    std::snprintf(text, sizeof text, "comm#%d from %s of %s (size %d)", g.nlabels.load(), how,
                  p ? communicator_label(p->label) : "?", size);
  }
  slot->key = k;
  slot->label = new_label(text);
  slot->bound = false;
  slot->count = 0;
  if (g.comm_bound) {
    MPI_Comm obj = c;
    int count = 0;
    if (PMPI_T_pvar_handle_alloc(g.session, g.index, &obj, &slot->handle, &count) == MPI_SUCCESS) {
      if (count * g.width <= kReadBytes && count > 0 &&
          (g.continuous || PMPI_T_pvar_start(g.session, slot->handle) == MPI_SUCCESS)) {
        slot->bound = true;
        slot->count = count;
      } else {
        PMPI_T_pvar_handle_free(g.session, &slot->handle);
      }
    }
  }
  slot->state.store(kLive, std::memory_order_release);
  return slot;
}

// Stops and frees one handle (a communicator's or the process-wide one).
void free_handle(MPI_T_pvar_handle* handle) {
  if (!g.continuous) PMPI_T_pvar_stop(g.session, *handle);
  PMPI_T_pvar_handle_free(g.session, handle);
}

void comm_remove(MPI_Comm c) {
  SpinGuard guard;
  CommEntry* e = comm_find(c);
  if (!e) return;
  if (e->bound) {
    free_handle(&e->handle);
    e->bound = false;
  }
  e->state.store(kDeleted, std::memory_order_release);
}

inline bool is_receive(mpe::CallClass cls) {
  return cls == mpe::CallClass::kRecv || cls == mpe::CallClass::kSendrecv || cls == mpe::CallClass::kProbe ||
         cls == mpe::CallClass::kMprobe || cls == mpe::CallClass::kMrecv;
}

// The queue over all peers, and the peer with the largest share.
struct QueueSum {
  uint64_t total = 0;
  uint64_t top = 0;
  int top_peer = -1;
};

// Sums the values MPI_T_pvar_read wrote, 4 or 8 bytes each.
template <typename Value>
inline QueueSum sum_queue(const Value* v, int count) {
  QueueSum q;
  for (int i = 0; i < count; ++i) {
    q.total += v[i];
    if (v[i] > q.top) {
      q.top = v[i];
      q.top_peer = i;
    }
  }
  return q;
}

void on_receive(mpe::Call& call) noexcept {
  MPI_Comm comm = call.has(mpe::role::comm) ? call.comm : MPI_COMM_WORLD;  // Mrecv: no comm
  CommEntry* e = t_last_entry;
  // The thread's last entry is still comm's while it is live: a slot's key never changes, since
  // comm_add takes only empty slots (a freed communicator's slot stays deleted).
  if (comm != t_last_comm || !e || e->state.load(std::memory_order_relaxed) != kLive) {
    e = comm_find(comm);
    if (!e && comm != MPI_COMM_NULL) e = comm_add(comm, "(first use)", MPI_COMM_NULL);  // idup etc.
    t_last_comm = comm;
    t_last_entry = e;
  }
  MPI_T_pvar_handle h;
  int count;
  if (g.comm_bound) {
    if (!e || !e->bound) return;
    h = e->handle;
    count = e->count;
  } else {
    h = g_global_handle;
    count = g_global_count;
  }
  if (PMPI_T_pvar_read(g.session, h, t_buf) != MPI_SUCCESS) return;
  const QueueSum q = g.width == 4 ? sum_queue(reinterpret_cast<const uint32_t*>(t_buf), count)
                                  : sum_queue(reinterpret_cast<const uint64_t*>(t_buf), count);
  if (q.total <= g.threshold) return;
  // The entry again from the thread's cache (it is e): keeping e live across the read as well as
  // the call would cost the common path a register.
  const CommEntry* last = t_last_entry;
  record(call, q.total, count == 1 ? -1 : q.top_peer, q.top,
         last ? last->label : -1);  // count 1: process-wide, no peer
}

void no_variable_line(const std::string& looked_for) {
  mpe::config::inform("umq: looked for the MPI_T performance variable " + looked_for +
                      " (unexpected-message queue length); this MPI library exports none, so libumq "
                      "is inactive. To get one, use MPICH configured with --enable-mpit-pvars=recvq "
                      "(scripts/build-mpich-pvars) or Open MPI with its ob1 PML.");
}

bool acceptable_type(MPI_Datatype t, int* width) {
  if (t != MPI_UNSIGNED && t != MPI_UNSIGNED_LONG && t != MPI_UNSIGNED_LONG_LONG) return false;
  int size = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS || (size != 4 && size != 8)) return false;
  *width = size;
  return true;
}

// Finds the first of `names` that libumq can read and fills g and g_variable from it. Returns
// false after the line saying why not.
bool find_variable(const std::vector<std::string>& names) {
  std::string looked_for;
  for (size_t i = 0; i < names.size(); ++i) looked_for += (i ? " or " : "") + names[i];
  int num = 0;
  if (PMPI_T_pvar_get_num(&num) != MPI_SUCCESS) num = 0;
  std::string rejected;
  for (const std::string& want : names) {
    for (int i = 0; i < num; ++i) {
      char name[256], desc[1024];
      int name_len = sizeof name, desc_len = sizeof desc;
      int verbosity, var_class, bind, readonly, continuous, atomic;
      MPI_Datatype type;
      MPI_T_enum enumtype;
      if (PMPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc, &desc_len,
                               &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
        continue;  // e.g. Open MPI: an unloaded component's variable
      if (want != name) continue;
      int width = 0;
      const bool class_ok = var_class == MPI_T_PVAR_CLASS_LEVEL || var_class == MPI_T_PVAR_CLASS_SIZE;
      const bool bind_ok = bind == MPI_T_BIND_NO_OBJECT || bind == MPI_T_BIND_MPI_COMM;
      if (!class_ok || !bind_ok || !acceptable_type(type, &width)) {
        rejected += " " + want + " (unsupported class, type or binding)";
        continue;
      }
      g.index = i;
      g.width = width;
      g.comm_bound = bind == MPI_T_BIND_MPI_COMM;
      g.continuous = continuous != 0;
      g_variable.name = want;
      g_variable.per_communicator = g.comm_bound;
      return true;
    }
  }
  if (!rejected.empty()) {
    mpe::config::warn("umq: found but cannot use:" + rejected + "; libumq is inactive");
  } else {
    no_variable_line(looked_for);
  }
  return false;
}

}  // namespace

bool start_reading(const std::vector<std::string>& names, uint64_t threshold) {
  g.threshold = threshold;
  g_variable.threshold = threshold;
  int provided = 0;
  if (PMPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    mpe::config::warn("umq: MPI_T_init_thread failed; libumq is inactive");
    return false;
  }
  g.t_initialized = true;
  if (!find_variable(names)) return false;
  if (PMPI_T_pvar_session_create(&g.session) != MPI_SUCCESS) {
    mpe::config::warn("umq: MPI_T_pvar_session_create failed; libumq is inactive");
    return false;
  }
  if (!g.comm_bound) {
    g.global_bound = PMPI_T_pvar_handle_alloc(g.session, g.index, nullptr, &g_global_handle,
                                              &g_global_count) == MPI_SUCCESS;
    if (!g.global_bound || g_global_count <= 0 || g_global_count * g.width > kReadBytes ||
        (!g.continuous && PMPI_T_pvar_start(g.session, g_global_handle) != MPI_SUCCESS)) {
      mpe::config::warn("umq: cannot read " + g_variable.name + "; libumq is inactive");
      return false;  // close_reader frees what was allocated
    }
  }
  comm_add(MPI_COMM_WORLD, "", MPI_COMM_NULL);
  comm_add(MPI_COMM_SELF, "", MPI_COMM_NULL);
  if (const CommEntry* self = comm_find(MPI_COMM_SELF); self && self->label >= 0)
    std::snprintf(g_labels[self->label], kLabelLen, "MPI_COMM_SELF");
  return true;
}

void set_reading(bool on) noexcept { g.active = on; }

bool reading() noexcept { return g.active; }

void close_reader() noexcept {
  g.active = false;
  if (!g.t_initialized) return;
  for (CommEntry& e : g_comms)
    if (e.state.load() == kLive && e.bound) {
      free_handle(&e.handle);
      e.bound = false;
    }
  if (g.session != MPI_T_PVAR_SESSION_NULL) {
    if (g.global_bound) free_handle(&g_global_handle);
    g.global_bound = false;
    PMPI_T_pvar_session_free(&g.session);
  }
  PMPI_T_finalize();
  g.t_initialized = false;
}

const VariableInfo& variable() noexcept { return g_variable; }

const char* communicator_label(int label) noexcept {
  return label >= 0 && label < kLabels ? g_labels[label] : "(untracked communicator)";
}

void on_enter(mpe::Call& call) noexcept {
  if (!g.active || call.depth > 0) return;
  if (is_receive(call.cls)) {
    on_receive(call);
  } else if (call.cls == mpe::CallClass::kCommFree && call.has(mpe::role::commptr) && call.commptr) {
    // Free the handle while the communicator still exists.
    comm_remove(*call.commptr);
  }
}

void on_leave(mpe::Call& call) noexcept {
  if (!g.active || call.depth > 0 || call.rc != MPI_SUCCESS) return;
  if (call.cls == mpe::CallClass::kCommCreate && call.has(mpe::role::newcomm) && call.newcomm &&
      call.mode != mpe::Mode::kNonblocking) {  // idup: the handle is valid only at completion; bound lazily
    const char* fn = mpe::info(call.fn).name;
    comm_add(*call.newcomm, fn, call.has(mpe::role::comm) ? call.comm : MPI_COMM_NULL);
  }
}

}  // namespace mpe::libumq
