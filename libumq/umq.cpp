// libumq: reads the MPI library's unexpected-message-queue length (an MPI_T performance
// variable) on every receive-family call, and when it is above MPE_UMQ_THRESHOLD records the
// call stack of the receive. At finalize each rank symbolizes its own stacks (libdw), rank 0
// gathers them on a private communicator and writes <prefix>.umq.txt and <prefix>.umq.json.
//
// Hot path (enter hook of a receive): one comm lookup in a fixed open-addressed table, one
// PMPI_T_pvar_read into a thread-local buffer, a sum. Above the threshold: unw_backtrace into a
// stack buffer and a lock-free insert/update in a fixed-size call-site table. No locks, no
// allocation (except the first receive on a communicator the tool has not seen, e.g. one from
// MPI_Comm_idup, which binds a handle lazily).
#define UNW_LOCAL_ONLY
#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <libunwind.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mpe/config.h"
#include "mpe/core.h"

namespace {

constexpr const char* kKnownNames[] = {"unexpected_recvq_length", "pml_ob1_unexpected_msgq_length"};
constexpr int kMaxFrames = 32;      // raw frames captured (tool + wrapper frames included)
constexpr int kSites = 1024;        // distinct call sites per rank
constexpr int kPeerSlots = 8;       // top peers remembered per call site
constexpr int kComms = 4096;        // communicators tracked at once (open addressing)
constexpr int kLabels = 1024;       // communicator descriptions kept for the report
constexpr int kLabelLen = 96;
constexpr int kReadBytes = 65536;   // per-thread pvar read buffer (16k MPI_UNSIGNED peers)

struct Site {
  std::atomic<int> state;  // 0 empty, 1 being filled, 2 ready
  uint64_t hash;
  int nframes;
  void* frames[kMaxFrames];
  std::atomic<uint64_t> occurrences;
  std::atomic<uint64_t> sum_length;
  std::atomic<uint64_t> max_length;
  std::atomic<int> label;  // communicator of the first occurrence
  std::atomic<int> peer[kPeerSlots];  // -1 empty
  std::atomic<uint64_t> peer_times[kPeerSlots];
  std::atomic<uint64_t> peer_max[kPeerSlots];
};

struct CommEntry {
  std::atomic<int> state;  // 0 empty, 1 live, 2 deleted
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
  std::string name;
  uint64_t threshold;
  int depth;
  bool print;
  int world_rank;
  MPI_T_pvar_session session;
  bool t_initialized;
  std::atomic<uint64_t> over;
  std::atomic<uint64_t> dropped;
  std::atomic<int> nlabels;
  std::atomic_flag lock = ATOMIC_FLAG_INIT;  // comm-table mutations only (never the read path)
};

State g;
Site g_sites[kSites];
CommEntry g_comms[kComms];
char g_labels[kLabels][kLabelLen];
__thread MPI_Comm t_pending_free;
__thread bool t_pending_valid;

inline uintptr_t comm_key(MPI_Comm c) {
  uintptr_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}
inline uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

struct SpinGuard {
  SpinGuard() { while (g.lock.test_and_set(std::memory_order_acquire)) {} }
  ~SpinGuard() { g.lock.clear(std::memory_order_release); }
};

CommEntry* comm_find(MPI_Comm c) {
  const uintptr_t k = comm_key(c);
  for (uint32_t i = mix(k), n = 0; n < kComms; ++i, ++n) {
    CommEntry& e = g_comms[i % kComms];
    const int s = e.state.load(std::memory_order_acquire);
    if (s == 0) return nullptr;
    if (s == 1 && e.key == k) return &e;
  }
  return nullptr;
}

int new_label(const char* text) {
  const int id = g.nlabels.fetch_add(1);
  if (id >= kLabels) return -1;
  std::snprintf(g_labels[id], kLabelLen, "%s", text);
  return id;
}

const char* label_text(int id) { return id >= 0 && id < kLabels ? g_labels[id] : "(untracked communicator)"; }

// Adds c to the table, binding a pvar handle when the variable is per communicator.
CommEntry* comm_add(MPI_Comm c, const char* how, MPI_Comm parent) {
  if (c == MPI_COMM_NULL) return nullptr;
  SpinGuard guard;
  if (CommEntry* e = comm_find(c)) return e;
  const uintptr_t k = comm_key(c);
  CommEntry* slot = nullptr;
  for (uint32_t i = mix(k), n = 0; n < kComms; ++i, ++n) {
    CommEntry& e = g_comms[i % kComms];
    if (e.state.load(std::memory_order_relaxed) == 0) { slot = &e; break; }
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
                  p ? label_text(p->label) : "?", size);
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
  slot->state.store(1, std::memory_order_release);
  return slot;
}

void comm_remove(MPI_Comm c) {
  SpinGuard guard;
  CommEntry* e = comm_find(c);
  if (!e) return;
  if (e->bound) {
    if (!g.continuous) PMPI_T_pvar_stop(g.session, e->handle);
    PMPI_T_pvar_handle_free(g.session, &e->handle);
    e->bound = false;
  }
  e->state.store(2, std::memory_order_release);
}

// The NO_OBJECT variable's one handle.
MPI_T_pvar_handle g_global_handle;
int g_global_count;

// Initial-exec: one %fs-relative access instead of a __tls_get_addr call per receive.
alignas(8) __thread unsigned char t_buf[kReadBytes] __attribute__((tls_model("initial-exec")));
// The communicator of this thread's last receive and its entry: most receives repeat it.
__thread MPI_Comm t_last_comm __attribute__((tls_model("initial-exec")));
__thread CommEntry* t_last_entry __attribute__((tls_model("initial-exec")));

void record(uint64_t length, int peer, uint64_t peer_value, int label) noexcept;

inline bool is_receive(mpe::CallClass cls) {
  return cls == mpe::CallClass::recv || cls == mpe::CallClass::sendrecv || cls == mpe::CallClass::probe ||
         cls == mpe::CallClass::mprobe || cls == mpe::CallClass::mrecv;
}

void on_receive(mpe::Call& call) noexcept {
  MPI_Comm comm = call.has(mpe::role::comm) ? call.comm : MPI_COMM_WORLD;  // Mrecv: no comm
  CommEntry* e = t_last_entry;
  if (comm != t_last_comm || !e || e->state.load(std::memory_order_relaxed) != 1 || e->key != comm_key(comm)) {
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
  uint64_t total = 0, top = 0;
  int top_peer = -1;
  if (g.width == 4) {
    const uint32_t* v = reinterpret_cast<const uint32_t*>(t_buf);
    for (int i = 0; i < count; ++i) {
      total += v[i];
      if (v[i] > top) { top = v[i]; top_peer = i; }
    }
  } else {
    const uint64_t* v = reinterpret_cast<const uint64_t*>(t_buf);
    for (int i = 0; i < count; ++i) {
      total += v[i];
      if (v[i] > top) { top = v[i]; top_peer = i; }
    }
  }
  if (total <= g.threshold) return;
  if (count == 1) top_peer = -1;  // a process-wide value names no peer
  record(total, top_peer, top, e ? e->label : -1);
}

void print_site(const Site& s, uint64_t length) noexcept;

void record(uint64_t length, int peer, uint64_t peer_value, int label) noexcept {
  g.over.fetch_add(1, std::memory_order_relaxed);
  void* frames[kMaxFrames];
  const int n = unw_backtrace(frames, g.depth);
  if (n <= 0) return;
  uint64_t h = 1469598103934665603ULL;
  for (int i = 0; i < n; ++i) h = (h ^ reinterpret_cast<uintptr_t>(frames[i])) * 1099511628211ULL;
  if (h == 0) h = 1;
  Site* site = nullptr;
  bool fresh = false;
  for (uint32_t i = mix(h), probes = 0; probes < kSites; ++i, ++probes) {
    Site& s = g_sites[i % kSites];
    int st = s.state.load(std::memory_order_acquire);
    if (st == 0) {
      int expected = 0;
      if (s.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
        s.hash = h;
        s.nframes = n;
        std::memcpy(s.frames, frames, sizeof(void*) * n);
        s.label.store(label, std::memory_order_relaxed);
        for (int p = 0; p < kPeerSlots; ++p) s.peer[p].store(-1, std::memory_order_relaxed);
        s.state.store(2, std::memory_order_release);
        site = &s;
        fresh = true;
        break;
      }
      st = s.state.load(std::memory_order_acquire);
    }
    if (st == 2 && s.hash == h && s.nframes == n && std::memcmp(s.frames, frames, sizeof(void*) * n) == 0) {
      site = &s;
      break;
    }
  }
  if (!site) {
    g.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  site->occurrences.fetch_add(1, std::memory_order_relaxed);
  site->sum_length.fetch_add(length, std::memory_order_relaxed);
  uint64_t m = site->max_length.load(std::memory_order_relaxed);
  while (length > m && !site->max_length.compare_exchange_weak(m, length, std::memory_order_relaxed)) {}
  if (peer >= 0) {
    for (int p = 0; p < kPeerSlots; ++p) {
      int cur = site->peer[p].load(std::memory_order_relaxed);
      if (cur == -1) {
        int expected = -1;
        if (site->peer[p].compare_exchange_strong(expected, peer)) cur = peer;
        else cur = expected;
      }
      if (cur == peer) {
        site->peer_times[p].fetch_add(1, std::memory_order_relaxed);
        uint64_t pm = site->peer_max[p].load(std::memory_order_relaxed);
        while (peer_value > pm &&
               !site->peer_max[p].compare_exchange_weak(pm, peer_value, std::memory_order_relaxed)) {}
        break;
      }
    }
  }
  if (fresh && g.print) print_site(*site, length);
}

// ---- symbolization (finalize, or MPE_UMQ_PRINT) ----

struct Frame {
  std::string function, file, module;
  int line = 0;
  uintptr_t offset = 0;  // address relative to its module
};

Dwfl* g_dwfl;
const Dwfl_Callbacks kCallbacks = {dwfl_linux_proc_find_elf, dwfl_standard_find_debuginfo, nullptr, nullptr};

Dwfl* dwfl() {
  if (!g_dwfl) {
    g_dwfl = dwfl_begin(&kCallbacks);
    if (!g_dwfl) return nullptr;
    dwfl_report_begin(g_dwfl);
    dwfl_linux_proc_report(g_dwfl, getpid());
    dwfl_report_end(g_dwfl, nullptr, nullptr);
  }
  return g_dwfl;
}

std::string demangle(const char* name) {
  if (!name) return "";
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : name;
  std::free(d);
  return out;
}

Frame symbolize(void* addr, bool return_address) {
  Frame f;
  Dwfl* d = dwfl();
  // Return addresses point after the call; look up the call instruction itself.
  Dwarf_Addr a = reinterpret_cast<uintptr_t>(addr) - (return_address ? 1 : 0);
  Dwfl_Module* m = d ? dwfl_addrmodule(d, a) : nullptr;
  if (!m) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, static_cast<uintptr_t>(a));
    f.function = buf;
    return f;
  }
  Dwarf_Addr start = 0;
  const char* mainfile = nullptr;
  const char* modname = dwfl_module_info(m, nullptr, &start, nullptr, nullptr, nullptr, &mainfile, nullptr);
  f.module = mainfile ? mainfile : (modname ? modname : "");
  f.offset = a - start;
  f.function = demangle(dwfl_module_addrname(m, a));
  if (Dwfl_Line* line = dwfl_module_getsrc(m, a)) {
    int lineno = 0;
    const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr);
    if (file) f.file = file;
    f.line = lineno;
  }
  if (f.function.empty()) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, static_cast<uintptr_t>(f.offset));
    f.function = buf;
  }
  return f;
}

bool is_mpi_entry(const std::string& fn) {
  return fn.rfind("MPI_", 0) == 0 || fn.rfind("mpi_", 0) == 0 || fn.rfind("PMPI_", 0) == 0;
}

// The application's part of a stack: the frames below the MPI entry point (the tool's own and
// the core's wrapper frames are dropped). Also returns the MPI function's name.
std::vector<Frame> app_stack(const Site& s, std::string* mpi_fn) {
  std::vector<Frame> all;
  for (int i = 0; i < s.nframes; ++i) all.push_back(symbolize(s.frames[i], i > 0));
  size_t first = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (is_mpi_entry(all[i].function)) {
      first = i + 1;
      if (mpi_fn) *mpi_fn = all[i].function;
      break;
    }
  return std::vector<Frame>(all.begin() + static_cast<long>(first), all.end());
}

std::string basename_of(const std::string& p) {
  const size_t k = p.rfind('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

std::string frame_text(const Frame& f) {
  std::string t = f.function;
  if (!f.file.empty()) t += " at " + f.file + ":" + std::to_string(f.line);
  if (!f.module.empty()) t += " (" + basename_of(f.module) + ")";
  return t;
}

void print_site(const Site& s, uint64_t length) noexcept {
  try {
    std::string mpi_fn = "MPI call";
    const std::vector<Frame> st = app_stack(s, &mpi_fn);
    std::string text = "umq: rank " + std::to_string(g.world_rank) + ": new call site: " + mpi_fn +
                       " met an unexpected queue of " + std::to_string(length) + " at ";
    for (size_t i = 0; i < st.size(); ++i) text += (i ? " <- " : "") + frame_text(st[i]);
    mpe::config::warn(text, false);
  } catch (...) {
  }
}

// ---- init / finalize ----

void no_variable_line(const std::string& looked_for) {
  mpe::config::warn("umq: looked for the MPI_T performance variable " + looked_for +
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

void after_init() noexcept {
  try {
    PMPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
    g.threshold = static_cast<uint64_t>(mpe::config::env_int("MPE_UMQ_THRESHOLD", 5, 0, INT64_MAX));
    g.depth = static_cast<int>(mpe::config::env_int("MPE_UMQ_DEPTH", 24, 1, kMaxFrames));
    g.print = mpe::config::env_bool("MPE_UMQ_PRINT", false);
    const std::string override_name = mpe::config::env_string("MPE_UMQ_PVAR", "");
    std::vector<std::string> names;
    if (!override_name.empty()) names.push_back(override_name);
    else names.assign(std::begin(kKnownNames), std::end(kKnownNames));
    std::string looked_for;
    for (size_t i = 0; i < names.size(); ++i) looked_for += (i ? " or " : "") + names[i];

    int provided = 0;
    if (PMPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      mpe::config::warn("umq: MPI_T_init_thread failed; libumq is inactive");
      return;
    }
    g.t_initialized = true;
    int num = 0;
    if (PMPI_T_pvar_get_num(&num) != MPI_SUCCESS) num = 0;
    int found = -1;
    std::string rejected;
    for (const std::string& want : names) {
      for (int i = 0; i < num && found < 0; ++i) {
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
        found = i;
        g.index = i;
        g.name = want;
        g.width = width;
        g.comm_bound = bind == MPI_T_BIND_MPI_COMM;
        g.continuous = continuous != 0;
      }
      if (found >= 0) break;
    }
    if (found < 0) {
      if (!rejected.empty()) {
        mpe::config::warn("umq: found but cannot use:" + rejected + "; libumq is inactive");
      } else {
        no_variable_line(looked_for);
      }
      return;
    }
    if (PMPI_T_pvar_session_create(&g.session) != MPI_SUCCESS) {
      mpe::config::warn("umq: MPI_T_pvar_session_create failed; libumq is inactive");
      return;
    }
    if (!g.comm_bound) {
      if (PMPI_T_pvar_handle_alloc(g.session, g.index, nullptr, &g_global_handle, &g_global_count) != MPI_SUCCESS ||
          g_global_count <= 0 || g_global_count * g.width > kReadBytes ||
          (!g.continuous && PMPI_T_pvar_start(g.session, g_global_handle) != MPI_SUCCESS)) {
        mpe::config::warn("umq: cannot read " + g.name + "; libumq is inactive");
        return;
      }
    }
    comm_add(MPI_COMM_WORLD, "", MPI_COMM_NULL);
    comm_add(MPI_COMM_SELF, "", MPI_COMM_NULL);
    std::snprintf(g_labels[comm_find(MPI_COMM_SELF)->label], kLabelLen, "MPI_COMM_SELF");
    g.active = true;
  } catch (...) {
    g.active = false;
  }
}

void on_enter(mpe::Call& call) noexcept {
  if (!g.active || call.depth > 0) return;
  if (is_receive(call.cls)) {
    on_receive(call);
  } else if (call.cls == mpe::CallClass::comm_free && call.has(mpe::role::commptr) && call.commptr) {
    // Free the handle while the communicator still exists.
    comm_remove(*call.commptr);
  }
}

void on_leave(mpe::Call& call) noexcept {
  if (!g.active || call.depth > 0 || call.rc != MPI_SUCCESS) return;
  if (call.cls == mpe::CallClass::comm_create && call.has(mpe::role::newcomm) && call.newcomm &&
      call.mode != mpe::Mode::Nonblocking) {  // idup: the handle is valid only at completion; bound lazily
    const char* fn = mpe::info(call.fn).name;
    comm_add(*call.newcomm, fn, call.has(mpe::role::comm) ? call.comm : MPI_COMM_NULL);
  }
}

// Serialized per-rank sites: "S occ sum max label\n" "P peer times max\n"* "F text\n"* "E\n".
std::string serialize_sites() {
  std::string out;
  for (const Site& s : g_sites) {
    if (s.state.load() != 2 || s.occurrences.load() == 0) continue;
    std::string mpi_fn = "?";
    const std::vector<Frame> st = app_stack(s, &mpi_fn);
    out += "S\t" + std::to_string(s.occurrences.load()) + "\t" + std::to_string(s.sum_length.load()) + "\t" +
           std::to_string(s.max_length.load()) + "\t" + label_text(s.label.load()) + "\t" + mpi_fn + "\n";
    for (int p = 0; p < kPeerSlots; ++p)
      if (s.peer[p].load() >= 0)
        out += "P\t" + std::to_string(s.peer[p].load()) + "\t" + std::to_string(s.peer_times[p].load()) + "\t" +
               std::to_string(s.peer_max[p].load()) + "\n";
    for (const Frame& f : st)
      out += "F\t" + f.function + "\t" + f.file + "\t" + std::to_string(f.line) + "\t" + f.module + "\n";
    out += "E\n";
  }
  return out;
}

struct Peer {
  uint64_t times = 0, max = 0;
};
struct Merged {
  uint64_t occurrences = 0, sum = 0, max = 0;
  std::set<int> ranks;
  std::set<std::string> comms;
  std::string mpi_fn;
  std::map<std::pair<int, int>, Peer> peers;  // (rank, peer) -> counts
  std::vector<Frame> stack;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = s.find(sep, b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += static_cast<char>(c); }
    else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += static_cast<char>(c);
  }
  return o + "\"";
}

void write_report(const std::vector<std::string>& blobs, int nranks) {
  std::map<std::string, Merged> by_stack;
  for (int r = 0; r < static_cast<int>(blobs.size()); ++r) {
    Merged cur;
    std::string key;
    int label_unused = 0;
    (void)label_unused;
    for (const std::string& line : split(blobs[r], '\n')) {
      if (line.empty()) continue;
      const std::vector<std::string> f = split(line, '\t');
      if (f[0] == "S" && f.size() >= 6) {
        cur = Merged();
        key.clear();
        cur.occurrences = std::strtoull(f[1].c_str(), nullptr, 10);
        cur.sum = std::strtoull(f[2].c_str(), nullptr, 10);
        cur.max = std::strtoull(f[3].c_str(), nullptr, 10);
        cur.comms.insert(f[4]);
        cur.mpi_fn = f[5];
        cur.ranks.insert(r);
      } else if (f[0] == "P" && f.size() >= 4) {
        Peer& p = cur.peers[{r, std::atoi(f[1].c_str())}];
        p.times += std::strtoull(f[2].c_str(), nullptr, 10);
        p.max = std::max<uint64_t>(p.max, std::strtoull(f[3].c_str(), nullptr, 10));
      } else if (f[0] == "F" && f.size() >= 5) {
        Frame fr;
        fr.function = f[1];
        fr.file = f[2];
        fr.line = std::atoi(f[3].c_str());
        fr.module = f[4];
        key += f[1] + "|" + f[2] + ":" + f[3] + "|" + basename_of(f[4]) + "\n";
        cur.stack.push_back(fr);
      } else if (f[0] == "E") {
        key = cur.mpi_fn + "\n" + key;
        Merged& m = by_stack[key];
        if (m.stack.empty()) { m.stack = cur.stack; m.mpi_fn = cur.mpi_fn; }
        m.occurrences += cur.occurrences;
        m.sum += cur.sum;
        m.max = std::max(m.max, cur.max);
        m.ranks.insert(cur.ranks.begin(), cur.ranks.end());
        m.comms.insert(cur.comms.begin(), cur.comms.end());
        for (const auto& [k, p] : cur.peers) {
          Peer& q = m.peers[k];
          q.times += p.times;
          q.max = std::max(q.max, p.max);
        }
      }
    }
  }
  std::vector<const Merged*> sites;
  for (const auto& [k, m] : by_stack) sites.push_back(&m);
  std::stable_sort(sites.begin(), sites.end(), [](const Merged* a, const Merged* b) {
    return a->occurrences != b->occurrences ? a->occurrences > b->occurrences : a->max > b->max;
  });

  auto location = [](const Merged& m) {
    for (const Frame& f : m.stack)
      if (!f.file.empty()) return basename_of(f.file) + ":" + std::to_string(f.line);
    return std::string("?");
  };
  auto sorted_peers = [](const Merged& m) {
    std::vector<std::pair<std::pair<int, int>, Peer>> v(m.peers.begin(), m.peers.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second.times > b.second.times; });
    return v;
  };

  const std::string txt_path = mpe::config::output_path(".umq.txt");
  const std::string json_path = mpe::config::output_path(".umq.json");
  if (FILE* f = std::fopen(txt_path.c_str(), "w")) {
    std::fprintf(f, "libumq report: receives that met a long unexpected-message queue\n");
    std::fprintf(f, "variable: %s (%s)   threshold: > %" PRIu64 "   ranks: %d   call sites: %zu\n\n",
                 g.name.c_str(), g.comm_bound ? "per communicator, per peer" : "process-wide",
                 g.threshold, nranks, sites.size());
    int n = 0;
    for (const Merged* m : sites) {
      std::fprintf(f, "#%d  %s at %s\n", ++n, m->mpi_fn.c_str(), location(*m).c_str());
      std::fprintf(f, "    occurrences: %" PRIu64 "   max length: %" PRIu64 "   mean length: %.1f\n", m->occurrences,
                   m->max, m->occurrences ? static_cast<double>(m->sum) / m->occurrences : 0.0);
      std::string ranks;
      for (int r : m->ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
      std::fprintf(f, "    ranks: %s\n", ranks.c_str());
      for (const std::string& c : m->comms) std::fprintf(f, "    communicator: %s\n", c.c_str());
      const auto peers = sorted_peers(*m);
      if (peers.empty()) std::fprintf(f, "    top sending peers: unknown (the variable is process-wide)\n");
      for (const auto& [k, p] : peers)
        std::fprintf(f, "    top sending peer: rank %d (in the communicator) queued up to %" PRIu64
                        " to rank %d, top peer %" PRIu64 " times\n",
                     k.second, p.max, k.first, p.times);
      std::fprintf(f, "    stack:\n");
      for (const Frame& fr : m->stack) std::fprintf(f, "      %s\n", frame_text(fr).c_str());
      std::fprintf(f, "\n");
    }
    std::fclose(f);
  }
  if (FILE* f = std::fopen(json_path.c_str(), "w")) {
    std::fprintf(f, "{\"tool\":\"umq\",\"variable\":%s,\"per_communicator\":%s,\"threshold\":%" PRIu64
                    ",\"ranks\":%d,\"sites\":[",
                 json_str(g.name).c_str(), g.comm_bound ? "true" : "false", g.threshold, nranks);
    bool first = true;
    for (const Merged* m : sites) {
      std::fprintf(f, "%s\n{\"mpi_function\":%s,\"location\":%s,\"occurrences\":%" PRIu64
                      ",\"max_length\":%" PRIu64 ",\"mean_length\":%.3f,\"ranks\":[",
                   first ? "" : ",", json_str(m->mpi_fn).c_str(), json_str(location(*m)).c_str(), m->occurrences,
                   m->max, m->occurrences ? static_cast<double>(m->sum) / m->occurrences : 0.0);
      first = false;
      bool c1 = true;
      for (int r : m->ranks) { std::fprintf(f, "%s%d", c1 ? "" : ",", r); c1 = false; }
      std::fprintf(f, "],\"communicators\":[");
      c1 = true;
      for (const std::string& c : m->comms) { std::fprintf(f, "%s%s", c1 ? "" : ",", json_str(c).c_str()); c1 = false; }
      std::fprintf(f, "],\"top_peers\":[");
      c1 = true;
      for (const auto& [k, p] : sorted_peers(*m)) {
        std::fprintf(f, "%s{\"rank\":%d,\"peer\":%d,\"times_top\":%" PRIu64 ",\"max_queued\":%" PRIu64 "}",
                     c1 ? "" : ",", k.first, k.second, p.times, p.max);
        c1 = false;
      }
      std::fprintf(f, "],\"stack\":[");
      c1 = true;
      for (const Frame& fr : m->stack) {
        std::fprintf(f, "%s{\"function\":%s,\"file\":%s,\"line\":%d,\"module\":%s}", c1 ? "" : ",",
                     json_str(fr.function).c_str(), json_str(fr.file).c_str(), fr.line, json_str(fr.module).c_str());
        c1 = false;
      }
      std::fprintf(f, "]}");
    }
    std::fprintf(f, "\n]}\n");
    std::fclose(f);
  }
}

void before_finalize() noexcept {
  if (!g.t_initialized) return;
  try {
    if (g.active) {
      g.active = false;
      std::string blob = serialize_sites();
      MPI_Comm priv;
      PMPI_Comm_dup(MPI_COMM_WORLD, &priv);
      int rank = 0, nranks = 1;
      PMPI_Comm_rank(priv, &rank);
      PMPI_Comm_size(priv, &nranks);
      int len = static_cast<int>(blob.size());
      std::vector<int> lens(rank == 0 ? nranks : 0), displs(rank == 0 ? nranks : 0);
      PMPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, priv);
      std::string all;
      if (rank == 0) {
        int total = 0;
        for (int i = 0; i < nranks; ++i) { displs[i] = total; total += lens[i]; }
        all.resize(static_cast<size_t>(total));
      }
      PMPI_Gatherv(blob.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, priv);
      PMPI_Comm_free(&priv);
      if (rank == 0) {
        std::vector<std::string> blobs;
        for (int i = 0; i < nranks; ++i) blobs.push_back(all.substr(displs[i], lens[i]));
        write_report(blobs, nranks);
      }
      if (g.dropped.load())
        mpe::config::warn("umq: rank " + std::to_string(g.world_rank) + ": call-site table full, " +
                          std::to_string(g.dropped.load()) + " occurrences not recorded", false);
      // Handles and the session.
      for (CommEntry& e : g_comms)
        if (e.state.load() == 1 && e.bound) {
          if (!g.continuous) PMPI_T_pvar_stop(g.session, e.handle);
          PMPI_T_pvar_handle_free(g.session, &e.handle);
          e.bound = false;
        }
      if (!g.comm_bound) {
        if (!g.continuous) PMPI_T_pvar_stop(g.session, g_global_handle);
        PMPI_T_pvar_handle_free(g.session, &g_global_handle);
      }
    }
    if (g.session != MPI_T_PVAR_SESSION_NULL) PMPI_T_pvar_session_free(&g.session);
    PMPI_T_finalize();
    g.t_initialized = false;
    if (g_dwfl) { dwfl_end(g_dwfl); g_dwfl = nullptr; }
  } catch (...) {
  }
}

const mpe::Tool kTool = {"umq", 0, on_enter, on_leave, after_init, before_finalize};

__attribute__((constructor)) void register_umq_tool() {
  g.session = MPI_T_PVAR_SESSION_NULL;
  mpe_core_register_tool(&kTool);
}

}  // namespace
