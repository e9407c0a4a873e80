// liblog's counter tracks: which variables (MPE_LOG_PVARS), where they are read
// (MPE_LOG_PVARS_AT), and the change test that decides whether a kCounter record is written.
// The reading itself (session, handles per communicator, per-peer sums, the read shared with
// libumq in one call) is the core's (mpe/mpit.h).
#include "counters.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "communicators.h"
#include "mpe/clock.h"
#include "mpe/config.h"
#include "mpe/mpit.h"
#include "mpe/records.h"

namespace mpe::tools::log::counters {

bool g_on = false;

namespace {

// What the change test keeps per handle (per communicator slot, or one for a process-wide
// variable): the last value read, and for watermarks the changes so far. Atomics: threads read
// the same handle.
struct Series {
  std::atomic<uint64_t> last{0};
  std::atomic<uint32_t> changes{0};
};

struct Var {
  int id = -1;         // the shared reader's
  uint16_t local = 0;  // this rank's counter id (Record::cat)
  PvarSemantics semantics = PvarSemantics::kValue;
  bool per_comm = false;
  std::unique_ptr<Series[]> series;  // mpit::kSlots when per communicator, else 1
  const mpit::Watched* watched = nullptr;
  // The fast path, while no other tool watches the variable (then the shared read, which reads
  // once for both, is taken): its own handle read straight (mpit::read_direct), the process-wide
  // one kept here, a communicator's in the thread's CommCache (the first kCachedVars variables
  // bound to communicators). The read then costs the MPI_T read + 4-10 ns
  // (docs/mpit.md, "Cost").
  bool has_direct = false;
  mpit::DirectHandle direct;
  int cache_index = -1;
};

// A thread's direct handles for the last communicator it read at, valid while no communicator
// has been freed since (mpit::comm_frees).
constexpr int kCachedVars = 4;
struct CommCache {
  MPI_Comm comm;
  uint32_t frees;
  uint32_t valid;  // bit i: h[i] is comm's handle of the variable with cache_index i
  mpit::DirectHandle h[kCachedVars];
};
__thread CommCache t_comm_cache __attribute__((tls_model("initial-exec")));
const std::atomic<uint32_t>* g_comm_frees = nullptr;

std::vector<Var> g_vars;  // set up before reading starts, then read-only
bool g_every = false;
bool g_started = false;

// The classes of the calls the variables are read at: receives, or every call (set by start()).
// MPI_Finalize too: the series end at their final value, not at the last receive's.
uint64_t g_read_classes = classes(CallClass::kFinalize, CallClass::kRecv, CallClass::kSendrecv,
                                  CallClass::kProbe, CallClass::kMprobe, CallClass::kMrecv);

bool reads_at(CallClass cls) { return g_read_classes >> static_cast<unsigned>(cls) & 1; }

}  // namespace

uint64_t g_enter = 0;

namespace {

// Reads v on comm: the fast path when no other tool watches v (see Var::has_direct).
__attribute__((always_inline)) inline bool read(Var& v, MPI_Comm comm, Call& c, mpit::Sample* s) {
  if (v.watched->users > 1) return mpit::read(v.id, comm, &c, s);
  if (!v.per_comm) return v.has_direct ? mpit::read_direct(v.direct, s) : mpit::read(v.id, comm, nullptr, s);
  if (v.cache_index < 0) return mpit::read(v.id, comm, nullptr, s);
  CommCache& k = t_comm_cache;
  const uint32_t frees = g_comm_frees->load(std::memory_order_acquire);
  if (k.comm != comm || k.frees != frees) {
    k.comm = comm;
    k.frees = frees;
    k.valid = 0;
  }
  const uint32_t bit = uint32_t{1} << v.cache_index;
  if (!(k.valid & bit)) {
    if (!mpit::direct_handle(v.id, comm, &k.h[v.cache_index])) return mpit::read(v.id, comm, nullptr, s);
    k.valid |= bit;
  }
  return mpit::read_direct(k.h[v.cache_index], s);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(item.substr(a, b - a + 1));
  }
  return out;
}

// The shared reader's ids of the variables `names` asks for; one line for each it cannot read.
std::vector<int> watch_names(const std::vector<std::string>& names) {
  std::vector<int> ids;
  for (const std::string& name : names) {
    if (name == "all") {
      const std::vector<int> all = mpit::watch_all();
      if (all.empty())
        config::warn("liblog: MPE_LOG_PVARS=all: this MPI library exports no readable performance variable");
      ids.insert(ids.end(), all.begin(), all.end());
      continue;
    }
    if (name == "umq") {  // the queue length, under whichever name this MPI gives it
      int id = -1;
      std::string why;
      for (const char* known : mpit::kQueueLengthNames)
        if ((id = mpit::watch(known, &why)) >= 0) break;
      if (id >= 0)
        ids.push_back(id);
      else
        config::warn(
            std::string("liblog: MPE_LOG_PVARS: umq: this MPI library exports no unexpected-queue length (") +
            mpit::kQueueLengthNames[0] + " or " + mpit::kQueueLengthNames[1] + "); not read");
      continue;
    }
    std::string why;
    const int id = mpit::watch(name, &why);
    if (id >= 0)
      ids.push_back(id);
    else
      config::warn("liblog: MPE_LOG_PVARS: " + why + "; the other variables are read");
  }
  return ids;
}

// Writes a kCounter record when sample s of v, read on comm, differs from the handle's last one.
void note(ThreadLog* t, Var& v, const mpit::Sample& s, MPI_Comm comm) {
  Series& series = v.series[v.per_comm ? s.slot : 0];
  // A plain load first: the common case (no change) then costs no locked instruction.
  if (series.last.load(std::memory_order_relaxed) == s.total) return;
  const uint64_t prev = series.last.exchange(s.total, std::memory_order_relaxed);
  if (prev == s.total) return;
  const mpit::Watched* w = mpit::watched(v.id);
  uint64_t value = s.total;
  int32_t changes = 0;
  if (v.semantics == PvarSemantics::kDelta) value = mpit::difference(w->kind, s.total, prev);
  if (v.semantics == PvarSemantics::kWatermark)
    changes = static_cast<int32_t>(series.changes.fetch_add(1, std::memory_order_relaxed) + 1);
  put(t, format::CounterRecord{mpe_clock_now(), v.local, v.per_comm ? comm_index(comm) : format::kUnknownComm,
                               s.top_peer, changes, value}
             .to_record());
}

}  // namespace

uint64_t enter_classes(bool* every) noexcept {
  const char* names = std::getenv("MPE_LOG_PVARS");
  if (!names || !*names) return 0;
  const char* at = std::getenv("MPE_LOG_PVARS_AT");
  *every = at && std::string(at) == "every";
  if (*every) return kEveryClass;
  return classes(CallClass::kRecv, CallClass::kSendrecv, CallClass::kProbe, CallClass::kMprobe,
                 CallClass::kMrecv, CallClass::kCommFree);
}

void start() noexcept {
  const std::string names = config::env_string("MPE_LOG_PVARS", "");
  if (names.empty()) return;
  const std::string at = config::env_string("MPE_LOG_PVARS_AT", "receives");
  if (at != "receives" && at != "every")
    config::warn("liblog: MPE_LOG_PVARS_AT=" + at + " is neither receives nor every; reading at receives");
  g_every = at == "every";
  if (g_every) g_read_classes = ~uint64_t{0};
  g_enter = g_read_classes | classes(CallClass::kCommFree);
  try {
    if (!mpit::start()) return;
    g_started = true;
    const std::vector<int> ids = watch_names(split(names));
    g_comm_frees = mpit::comm_frees();
    int cached = 0;
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const int id : ids) {
      const mpit::Watched* w = mpit::watched(id);
      bool seen = false;
      for (const Var& v : g_vars) seen = seen || v.id == id;
      if (!w || seen) continue;
      Var v;
      v.id = id;
      v.local = static_cast<uint16_t>(g_vars.size());
      v.semantics = w->semantics;
      v.per_comm = w->per_comm;
      v.series.reset(new Series[w->per_comm ? mpit::kSlots : 1]);
      v.watched = w;
      if (!w->per_comm)
        v.has_direct = mpit::direct_handle(id, MPI_COMM_NULL, &v.direct);
      else if (cached < kCachedVars)
        v.cache_index = cached++;
      g_meta.counters.push_back(format::CounterDef{v.local, w->name, w->description, w->type_name, w->cls,
                                                   w->semantics, w->kind, w->per_comm});
      g_vars.push_back(std::move(v));
    }
    g_on = !g_vars.empty();
  } catch (const std::bad_alloc&) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_vars.clear();
    g_meta.counters.clear();
    config::warn("liblog: out of memory while setting up MPE_LOG_PVARS; no counter is recorded", false);
  }
}

void stop() noexcept {
  g_on = false;
  if (g_started) mpit::stop();
  g_started = false;
}

void on_enter(ThreadLog* t, Call& c) noexcept {
  if (c.cls == CallClass::kCommFree) {
    if (c.has(role::commptr) && c.commptr) mpit::comm_freed(*c.commptr);
    if (!g_every) return;
  }
  if (c.depth > 0 || !reads_at(c.cls) || !g_logging.load(std::memory_order_relaxed)) return;
  const MPI_Comm comm = c.has(role::comm) ? c.comm : MPI_COMM_WORLD;  // MPI_Mrecv has none
  for (Var& v : g_vars) {
    mpit::Sample s;
    if (read(v, comm, c, &s)) note(t, v, s, comm);
  }
}

void comm_created(MPI_Comm c) noexcept {
  if (g_on) mpit::comm_created(c);
}

}  // namespace mpe::tools::log::counters
