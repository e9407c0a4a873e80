// libumq's lock-free table of call sites: recording on the receive path, symbolizing at finalize.
// The sites themselves (their stacks, their ids) are the core's; this table only adds libumq's
// statistics to them.
#include "call_sites.h"

#include <atomic>
#include <memory>
#include <mutex>

#include "mpe/config.h"
#include "mpe/symbolizer.h"

namespace mpe::tools::umq {

namespace {

constexpr int kSites = 1024;   // distinct call sites per rank
constexpr int kPeerSlots = 8;  // top peers remembered per call site

// A slot of the site table. Zero is empty everywhere, so the zero-initialized table needs no set-up
// and claiming a slot is one compare-and-swap of its key.
struct Site {
  std::atomic<uint64_t> key;  // site_key(): 0 empty
  std::atomic<int> label;     // communicator of the first occurrence
  std::atomic<uint64_t> occurrences;
  std::atomic<uint64_t> sum_length;
  std::atomic<uint64_t> max_length;
  std::atomic<int> peer_plus1[kPeerSlots];  // peer + 1; 0 empty
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

// The table's key: the core's site id (never 0) and the MPI routine. The routine is part of it
// because a return address alone can stand for several routines when a wrapper library
// tail-calls them; the report merges by the same pair.
inline uint64_t site_key(uint32_t id, Fn fn) { return uint64_t{static_cast<uint16_t>(fn)} << 32 | id; }
inline uint32_t key_site(uint64_t key) { return static_cast<uint32_t>(key); }
inline Fn key_fn(uint64_t key) { return static_cast<Fn>(key >> 32); }

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

// The frames of core site `id`, innermost first, from the core's table; the caller holds
// g_symbolizer_mutex. Not symbolize_callsites(): that symbolizes every site of the process (every
// MPI call site liblog or libmpetime saw too), and a new-site line needs just one. Throws
// std::bad_alloc.
std::vector<Frame> site_frames(uint32_t id) { return symbolize_callsite(symbolizer(), id); }

// The MPE_UMQ_PRINT line of a new call site.
void print_site(uint64_t key, uint64_t length) noexcept {
  try {
    std::vector<Frame> stack;
    {
      std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
      stack = site_frames(key_site(key));
    }
    mpe::config::warn("umq: rank " + std::to_string(mpe_core_world_rank()) +
                          ": new call site: " + info(key_fn(key)).name + " met an unexpected queue of " +
                          std::to_string(length) + " at " + callsite_text(stack),
                      false);
  } catch (const std::exception&) {  // no memory for the names: nothing else throws here
    mpe::config::warn("umq: out of memory; a new call site was not printed", false);
  }
}

}  // namespace

void configure_call_sites(int depth, bool print) noexcept {
  g_depth = depth < 1 ? 1 : (depth > kMaxDepth ? kMaxDepth : depth);
  g_print = print;
}

void record(const Call& call, uint64_t length, int peer, uint64_t peer_value, int label) noexcept {
  const uint32_t id = core::callsite_deep(call.caller, g_depth);
  if (id == 0) {  // the core had no memory for a new site
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const uint64_t key = site_key(id, call.fn);
  Site* site = nullptr;
  bool fresh = false;
  // Ids are small and dense: starting at id % kSites, distinct sites rarely probe further.
  for (uint32_t i = id, probes = 0; probes < kSites; ++i, ++probes) {
    Site& s = g_sites[i % kSites];
    uint64_t k = s.key.load(std::memory_order_acquire);
    if (k == 0) {
      if (s.key.compare_exchange_strong(k, key, std::memory_order_acq_rel)) {
        s.label.store(label, std::memory_order_relaxed);
        site = &s;
        fresh = true;
        break;
      }
      // Lost the race for the slot: k is now the winner's key.
    }
    if (k == key) {
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
      int cur = site->peer_plus1[p].load(std::memory_order_relaxed);
      if (cur == 0) {
        int expected = 0;
        cur = site->peer_plus1[p].compare_exchange_strong(expected, peer + 1) ? peer + 1 : expected;
      }
      if (cur == peer + 1) {
        site->peer_times[p].fetch_add(1, std::memory_order_relaxed);
        raise_to(site->peer_max[p], peer_value);
        break;
      }
    }
  }
  if (fresh && g_print) print_site(key, length);
}

std::vector<SiteRecord> symbolized_sites(const char* (*describe_communicator)(int label)) {
  std::vector<SiteRecord> out;
  std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
  for (const Site& s : g_sites) {
    const uint64_t key = s.key.load();
    if (key == 0 || s.occurrences.load() == 0) continue;
    SiteRecord r;
    r.mpi_function = info(key_fn(key)).name;
    r.stack = site_frames(key_site(key));
    r.communicator = describe_communicator(s.label.load());
    r.occurrences = s.occurrences.load();
    r.sum_length = s.sum_length.load();
    r.max_length = s.max_length.load();
    for (int p = 0; p < kPeerSlots; ++p)
      if (const int peer_plus1 = s.peer_plus1[p].load())
        r.peers.push_back({peer_plus1 - 1, s.peer_times[p].load(), s.peer_max[p].load()});
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t dropped_occurrences() noexcept { return g_dropped.load(); }

void release_symbolizer() noexcept {
  std::lock_guard<std::mutex> lock(g_symbolizer_mutex);
  g_symbolizer.reset();
}

}  // namespace mpe::tools::umq
