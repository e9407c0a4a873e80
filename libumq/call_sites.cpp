// libumq's lock-free call-site table: recording on the receive path, symbolizing at finalize.
#define UNW_LOCAL_ONLY
#include "call_sites.h"

#include <libunwind.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>

#include "mpe/config.h"
#include "table_hash.h"

namespace mpe::libumq {

namespace {

constexpr int kSites = 1024;   // distinct call sites per rank
constexpr int kPeerSlots = 8;  // top peers remembered per call site

// A slot of the site table.
enum : int { kEmpty = 0, kFilling = 1, kReady = 2 };

struct Site {
  std::atomic<int> state;  // kEmpty, kFilling or kReady
  uint64_t hash;
  int nframes;
  void* frames[kMaxFrames];
  std::atomic<uint64_t> occurrences;
  std::atomic<uint64_t> sum_length;
  std::atomic<uint64_t> max_length;
  std::atomic<int> label;             // communicator of the first occurrence
  std::atomic<int> peer[kPeerSlots];  // -1 empty
  std::atomic<uint64_t> peer_times[kPeerSlots];
  std::atomic<uint64_t> peer_max[kPeerSlots];
};

Site g_sites[kSites];
std::atomic<uint64_t> g_dropped;
int g_depth = kDefaultDepth;
bool g_print;

// A Symbolizer serves one thread at a time, and new-site lines may come from several threads.
std::mutex g_symbolizer_mutex;
std::unique_ptr<Symbolizer> g_symbolizer;

// Raises an atomic maximum.
inline void raise_to(std::atomic<uint64_t>& max, uint64_t value) {
  uint64_t m = max.load(std::memory_order_relaxed);
  while (value > m && !max.compare_exchange_weak(m, value, std::memory_order_relaxed)) {
  }
}

// The symbolizer, made at first use; the caller holds g_symbolizer_mutex. Throws std::bad_alloc.
Symbolizer& symbolizer() {
  if (!g_symbolizer) g_symbolizer = std::make_unique<Symbolizer>();
  return *g_symbolizer;
}

bool is_mpi_entry(const std::string& fn) {
  return fn.rfind("MPI_", 0) == 0 || fn.rfind("mpi_", 0) == 0 || fn.rfind("PMPI_", 0) == 0;
}

// The application's part of a stack: the frames below the MPI entry point (the tool's own and
// the core's wrapper frames are dropped). Also returns the MPI function's name.
std::vector<Frame> app_stack(const Site& s, Symbolizer& symbolizer, std::string* mpi_fn) {
  std::vector<Frame> all;
  for (int i = 0; i < s.nframes; ++i)
    all.push_back(symbolizer.symbolize(reinterpret_cast<uintptr_t>(s.frames[i]), i > 0));
  size_t first = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (is_mpi_entry(all[i].function)) {
      first = i + 1;
      *mpi_fn = all[i].function;
      break;
    }
  return std::vector<Frame>(all.begin() + static_cast<long>(first), all.end());
}

// The MPE_UMQ_PRINT line of a new call site.
void print_site(const Site& s, uint64_t length) noexcept {
  try {
    std::string mpi_fn = "MPI call";
    std::vector<Frame> stack;
    {
      std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
      stack = app_stack(s, symbolizer(), &mpi_fn);
    }
    std::string text = "umq: rank " + std::to_string(mpe_core_world_rank()) + ": new call site: " + mpi_fn +
                       " met an unexpected queue of " + std::to_string(length) + " at ";
    for (size_t i = 0; i < stack.size(); ++i) text += (i ? " <- " : "") + frame_text(stack[i]);
    mpe::config::warn(text, false);
  } catch (const std::exception&) {  // no memory for the names: nothing else throws here
    mpe::config::warn("umq: out of memory; a new call site was not printed", false);
  }
}

}  // namespace

void configure_call_sites(int depth, bool print) noexcept {
  g_depth = depth < 1 ? 1 : (depth > kMaxFrames ? kMaxFrames : depth);
  g_print = print;
}

void record(uint64_t length, int peer, uint64_t peer_value, int label) noexcept {
  void* frames[kMaxFrames];
  const int n = unw_backtrace(frames, g_depth);
  if (n <= 0) return;
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the return addresses
  for (int i = 0; i < n; ++i) h = (h ^ reinterpret_cast<uintptr_t>(frames[i])) * 1099511628211ULL;
  if (h == 0) h = 1;
  Site* site = nullptr;
  bool fresh = false;
  for (uint32_t i = table_hash(h), probes = 0; probes < kSites; ++i, ++probes) {
    Site& s = g_sites[i % kSites];
    int st = s.state.load(std::memory_order_acquire);
    if (st == kEmpty) {
      int expected = kEmpty;
      if (s.state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) {
        s.hash = h;
        s.nframes = n;
        std::memcpy(s.frames, frames, sizeof(void*) * n);
        s.label.store(label, std::memory_order_relaxed);
        for (int p = 0; p < kPeerSlots; ++p) s.peer[p].store(-1, std::memory_order_relaxed);
        s.state.store(kReady, std::memory_order_release);
        site = &s;
        fresh = true;
        break;
      }
      st = s.state.load(std::memory_order_acquire);
    }
    if (st == kReady && s.hash == h && s.nframes == n &&
        std::memcmp(s.frames, frames, sizeof(void*) * n) == 0) {
      site = &s;
      break;
    }
  }
  if (!site) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  site->occurrences.fetch_add(1, std::memory_order_relaxed);
  site->sum_length.fetch_add(length, std::memory_order_relaxed);
  raise_to(site->max_length, length);
  if (peer >= 0) {
    for (int p = 0; p < kPeerSlots; ++p) {
      int cur = site->peer[p].load(std::memory_order_relaxed);
      if (cur == -1) {
        int expected = -1;
        cur = site->peer[p].compare_exchange_strong(expected, peer) ? peer : expected;
      }
      if (cur == peer) {
        site->peer_times[p].fetch_add(1, std::memory_order_relaxed);
        raise_to(site->peer_max[p], peer_value);
        break;
      }
    }
  }
  if (fresh && g_print) print_site(*site, length);
}

std::vector<SiteRecord> symbolized_sites(const char* (*describe_communicator)(int label)) {
  std::vector<SiteRecord> out;
  std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
  for (const Site& s : g_sites) {
    if (s.state.load() != kReady || s.occurrences.load() == 0) continue;
    SiteRecord r;
    r.mpi_function = "?";
    r.stack = app_stack(s, symbolizer(), &r.mpi_function);
    r.communicator = describe_communicator(s.label.load());
    r.occurrences = s.occurrences.load();
    r.sum_length = s.sum_length.load();
    r.max_length = s.max_length.load();
    for (int p = 0; p < kPeerSlots; ++p)
      if (s.peer[p].load() >= 0)
        r.peers.push_back({s.peer[p].load(), s.peer_times[p].load(), s.peer_max[p].load()});
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t dropped_occurrences() noexcept { return g_dropped.load(); }

void release_symbolizer() noexcept {
  std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
  g_symbolizer.reset();
}

}  // namespace mpe::libumq
