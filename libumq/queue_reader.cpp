// libumq's queue reads over the core's shared MPI_T reader (mpe/mpit.h): the variable, the
// communicator labels the report names, the receive hook.
//
// Hot path (enter hook of a receive): mpit::read (the thread's last communicator, one
// PMPI_T_pvar_read, ~27 ns on Open MPI, a sum keeping the top peer; shared with liblog when it
// reads the same variable in the same call), one compare with the threshold. Above the
// threshold: the communicator's label (a lookup in a fixed open-addressed table) and record()
// (call_sites.cpp). No locks, no allocation (except the first receive on a communicator the tool
// has not seen, e.g. one from MPI_Comm_idup, which is followed lazily).
#include "queue_reader.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "call_sites.h"
#include "mpe/config.h"
#include "mpe/mpit.h"
#include "table_hash.h"

namespace mpe::libumq {

namespace {

constexpr int kComms = 4096;   // communicators labelled at once (open addressing)
constexpr int kLabels = 1024;  // communicator descriptions kept for the report
constexpr int kLabelLen = 96;

// A slot of the communicator table.
enum : int { kEmpty = 0, kLive = 1, kDeleted = 2 };

struct CommEntry {
  std::atomic<int> state;  // kEmpty, kLive or kDeleted
  uintptr_t key;
  int label;
};

struct State {
  bool active;
  bool started;  // mpit::start() succeeded: stop() at close
  int var;       // the shared reader's id of the variable
  uint64_t threshold;
  std::atomic<int> nlabels;
  std::atomic_flag lock = ATOMIC_FLAG_INIT;  // comm-table mutations only (never the read path)
};

constinit State g{};  // constinit: ready before any constructor registers the tool
VariableInfo g_variable;
CommEntry g_comms[kComms];
char g_labels[kLabels][kLabelLen];

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

// Labels c ("comm#2 from MPI_Comm_dup of MPI_COMM_WORLD (size 3)") and has the shared reader
// follow it. Takes only empty slots, never deleted ones, so a slot keeps its key.
CommEntry* comm_add(MPI_Comm c, const char* how, MPI_Comm parent) {
  if (c == MPI_COMM_NULL) return nullptr;
  mpit::comm_created(c);
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
  slot->state.store(kLive, std::memory_order_release);
  return slot;
}

void comm_remove(MPI_Comm c) {
  mpit::comm_freed(c);
  SpinGuard guard;
  if (CommEntry* e = comm_find(c)) e->state.store(kDeleted, std::memory_order_release);
}

inline bool is_receive(mpe::CallClass cls) {
  return cls == mpe::CallClass::kRecv || cls == mpe::CallClass::kSendrecv || cls == mpe::CallClass::kProbe ||
         cls == mpe::CallClass::kMprobe || cls == mpe::CallClass::kMrecv;
}

void on_receive(mpe::Call& call) noexcept {
  const MPI_Comm comm = call.has(mpe::role::comm) ? call.comm : MPI_COMM_WORLD;  // Mrecv: no comm
  mpit::Sample q;
  if (!mpit::read(g.var, comm, &call, &q) || q.total <= g.threshold) return;
  const CommEntry* e = comm_find(comm);
  if (!e && comm != MPI_COMM_NULL) e = comm_add(comm, "(first use)", MPI_COMM_NULL);  // idup etc.
  record(call, q.total, q.top_peer, q.top, e ? e->label : -1);  // top_peer -1: process-wide
}

void no_variable_line(const std::string& looked_for) {
  mpe::config::inform("umq: looked for the MPI_T performance variable " + looked_for +
                      " (unexpected-message queue length); this MPI library exports none, so libumq "
                      "is inactive. To get one, use MPICH configured with --enable-mpit-pvars=recvq "
                      "(scripts/build-mpich-pvars) or Open MPI with its ob1 PML, or rebuild the queue from "
                      "a liblog run (-llog) with `mpe umq <log>.mpelog` (docs/umq.md).");
}

// Watches the first of `names` that libumq can read (a queue length: class level or size,
// unsigned) and fills g and g_variable from it. Returns false after the line saying why not.
bool find_variable(const std::vector<std::string>& names) {
  std::string looked_for, rejected;
  for (size_t i = 0; i < names.size(); ++i) looked_for += (i ? " or " : "") + names[i];
  bool exported = false;
  for (const std::string& want : names) {
    std::string why;
    const int id = mpit::watch(want, &why);
    if (id < 0) {
      if (why.find("exports no performance variable") == std::string::npos) {
        exported = true;
        rejected += " " + why;
      }
      continue;
    }
    const mpit::Watched* w = mpit::watched(id);
    if ((w->cls != PvarClass::kLevel && w->cls != PvarClass::kSize) || w->kind != PvarValueKind::kUnsigned) {
      exported = true;
      rejected += " " + want + " (class " + pvar_class_name(w->cls) + ", " + w->type_name + ")";
      continue;
    }
    g.var = id;
    g_variable.name = want;
    g_variable.per_communicator = w->per_comm;
    return true;
  }
  if (exported) {
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
  if (!mpit::start()) return false;  // said why
  g.started = true;
  if (!find_variable(names)) return false;
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
  if (g.started) mpit::stop();
  g.started = false;
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
    // Free the handles while the communicator still exists.
    comm_remove(*call.commptr);
  }
}

void on_leave(mpe::Call& call) noexcept {
  if (!g.active || call.depth > 0 || call.rc != MPI_SUCCESS) return;
  if (call.cls == mpe::CallClass::kCommCreate && call.has(mpe::role::newcomm) && call.newcomm &&
      call.mode !=
          mpe::Mode::kNonblocking) {  // idup: the handle is valid only at completion; followed lazily
    const char* fn = mpe::info(call.fn).name;
    comm_add(*call.newcomm, fn, call.has(mpe::role::comm) ? call.comm : MPI_COMM_NULL);
  }
}

}  // namespace mpe::libumq
