// libumq's queue reads over the core's shared MPI_T reader (mpe/mpit.h): the variable, the
// communicator labels the report names, the receive hook.
//
// Hot path (enter hook of a receive): mpit::read (the thread's last communicator, one
// PMPI_T_pvar_read, ~27 ns on Open MPI, a sum keeping the top peer; shared with liblog when it
// reads the same variable in the same call), one compare with the threshold. Above the
// threshold: the communicator's label (by its slot in the shared reader's table) and record()
// (call_sites.cpp). No locks, no allocation (except the first receive on a communicator the tool
// has not seen, e.g. one from MPI_Comm_idup, which is followed lazily).
#include "queue_reader.h"

#include <atomic>
#include <cstdio>
#include <cstring>

#include "call_sites.h"
#include "mpe/config.h"
#include "mpe/mpit.h"

namespace mpe::tools::umq {

namespace {

constexpr int kLabels = 1024;  // communicator descriptions kept for the report
constexpr int kLabelLen = 96;

struct State {
  bool started;  // mpit::start() succeeded: stop() at close
  int var;       // the shared reader's id of the variable
  uint64_t threshold;
  std::atomic<int> nlabels;
};

constinit State g{};  // constinit: ready before any constructor registers the tool
VariableInfo g_variable;
char g_labels[kLabels][kLabelLen];
// Each communicator's label by its slot in the shared reader's table (mpit::comm_slot, which
// never gives a freed communicator's slot to another): 0 for none yet, else the label + 1.
std::atomic<int> g_slot_label[mpit::kSlots];

// c's label, -1 when it has none.
int label_of(MPI_Comm c) {
  const int slot = mpit::comm_slot(c);
  return slot < 0 ? -1 : g_slot_label[slot].load(std::memory_order_acquire) - 1;
}

int new_label(const char* text) {
  const int id = g.nlabels.fetch_add(1);
  if (id >= kLabels) return -1;
  std::snprintf(g_labels[id], kLabelLen, "%s", text);
  return id;
}

// Labels c ("comm#2 from MPI_Comm_dup of MPI_COMM_WORLD (size 3)") and has the shared reader
// follow it; returns its label (the first one given when two threads label it at once).
int comm_add(MPI_Comm c, const char* how, MPI_Comm parent) {
  if (c == MPI_COMM_NULL) return -1;
  mpit::comm_created(c);
  const int slot = mpit::comm_slot(c);
  if (slot < 0) return -1;
  if (const int known = g_slot_label[slot].load(std::memory_order_acquire)) return known - 1;
  int size = 0;
  PMPI_Comm_size(c, &size);
  char text[kLabelLen];
  if (c == MPI_COMM_WORLD) {
    std::snprintf(text, sizeof text, "MPI_COMM_WORLD");
  } else {
    std::snprintf(text, sizeof text, "comm#%d from %s of %s (size %d)", g.nlabels.load(), how,
                  parent != MPI_COMM_NULL ? communicator_label(label_of(parent)) : "?", size);
  }
  const int label = new_label(text);
  int expected = 0;
  if (!g_slot_label[slot].compare_exchange_strong(expected, label + 1, std::memory_order_acq_rel))
    return expected - 1;
  return label;
}

}  // namespace

bool g_reading = false;

void on_receive(mpe::Call& call) noexcept {
  const MPI_Comm comm = call.has(mpe::role::comm) ? call.comm : MPI_COMM_WORLD;  // Mrecv: no comm
  mpit::Sample q;
  if (!mpit::read(g.var, comm, &call, &q) || q.total <= g.threshold) return;
  int label = label_of(comm);
  if (label < 0 && comm != MPI_COMM_NULL) label = comm_add(comm, "(first use)", MPI_COMM_NULL);  // idup etc.
  record(call, q.total, q.top_peer, q.top, label);  // top_peer -1: process-wide
}

namespace {

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
  if (const int self = comm_add(MPI_COMM_SELF, "", MPI_COMM_NULL); self >= 0)
    std::snprintf(g_labels[self], kLabelLen, "MPI_COMM_SELF");
  return true;
}

void set_reading(bool on) noexcept { g_reading = on; }

bool reading() noexcept { return g_reading; }

void close_reader() noexcept {
  g_reading = false;
  if (g.started) mpit::stop();
  g.started = false;
}

const VariableInfo& variable() noexcept { return g_variable; }

const char* communicator_label(int label) noexcept {
  return label >= 0 && label < kLabels ? g_labels[label] : "(untracked communicator)";
}

void on_comm_freed(mpe::Call& call) noexcept {
  if (call.has(mpe::role::commptr) && call.commptr) mpit::comm_freed(*call.commptr);
}

void on_comm_created(mpe::Call& call) noexcept {
  if (call.rc != MPI_SUCCESS || !call.has(mpe::role::newcomm) || !call.newcomm ||
      call.mode == mpe::Mode::kNonblocking)  // idup: the handle is valid only at completion; followed lazily
    return;
  const char* fn = mpe::info(call.fn).name;
  comm_add(*call.newcomm, fn, call.has(mpe::role::comm) ? call.comm : MPI_COMM_NULL);
}

}  // namespace mpe::tools::umq
