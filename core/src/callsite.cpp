// The call-site table: the miss path behind callsite_of() (mpe/callsite.h), the process-wide
// registry of sites, and their symbolization at finalize.
#define UNW_LOCAL_ONLY
#include "mpe/callsite.h"

#include <libunwind.h>
#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "mpe/config.h"
#include "mpe/fnv.h"
#include "mpe/python_frames.h"

namespace mpe::core {

__thread SiteCache* t_site_cache;

// The return addresses of one site, innermost first; or, for a site in a Python program, its
// frames as text (python::frames_text), never freed.
struct SiteEntry {
  int n;
  uintptr_t pcs[kMaxCallsiteDepth];
  char* python;
};

namespace {

uint64_t hash_pcs(const uintptr_t* pcs, int n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the addresses
  for (int i = 0; i < n; ++i) h = (h ^ pcs[i]) * 1099511628211ull;
  return h ? h : 1;  // 0 marks an empty slot
}

// A Python site's text (python::frames_text) hashed for the registry; 0 marks an empty slot.
uint64_t hash_text(const std::string& text) {
  const uint64_t h = fnv1a(text);
  return h ? h : 1;
}

// Remembers a resolved site's id in the call's caller (callsite.h: kResolvedSite), so that the
// other tools' hooks of the same call find it without resolving it again.
void tag(uintptr_t& caller, uint32_t id) {
  if (id <= kMaxTaggedId) caller |= kResolvedSite | (uintptr_t{id} << kTaggedIdShift);
}

// An open-addressed map from a 64-bit key (an address, or a stack's hash) to a site id, grown by
// doubling at half load. calloc'd: the hooks run without exceptions.
struct IdMap {
  struct Slot {
    uint64_t key;
    uint32_t id;
  };
  Slot* slots = nullptr;
  uint32_t mask = 0;  // capacity - 1
  uint32_t used = 0;

  uint32_t find(uint64_t key) const {
    if (!slots) return 0;
    for (uint32_t i = static_cast<uint32_t>(key * 0x9E3779B97F4A7C15ull >> 32) & mask;; i = (i + 1) & mask) {
      if (slots[i].key == key) return slots[i].id;
      if (slots[i].key == 0) return 0;
    }
  }
  // False when out of memory.
  bool insert(uint64_t key, uint32_t id) {
    if (2 * (used + 1) > mask + 1 && !grow()) return false;
    for (uint32_t i = static_cast<uint32_t>(key * 0x9E3779B97F4A7C15ull >> 32) & mask;; i = (i + 1) & mask)
      if (slots[i].key == 0) {
        slots[i] = Slot{key, id};
        ++used;
        return true;
      }
  }
  bool grow() {
    const uint32_t capacity = slots ? 2 * (mask + 1) : 64;
    auto* fresh = static_cast<Slot*>(std::calloc(capacity, sizeof(Slot)));
    if (!fresh) return false;
    IdMap bigger;
    bigger.slots = fresh;
    bigger.mask = capacity - 1;
    for (uint32_t i = 0; slots && i <= mask; ++i)
      if (slots[i].key) bigger.insert(slots[i].key, slots[i].id);
    std::free(slots);
    *this = bigger;
    return true;
  }
};

// A thread's cache and maps, freed when the thread ends (a program that keeps starting threads
// would otherwise lose ~4 KiB per thread); a call after that, from another thread-exit
// destructor, just allocates them again.
struct ThreadSites {
  SiteCache cache;
  IdMap map;
  IdMap bridges;          // in a Python process: return address -> kBridge or kNotBridge (python::is_bridge)
  uintptr_t last_bridge;  // the last address found a bridge: a loop's calls, without the map
};
constexpr uint32_t kBridge = 1, kNotBridge = 2;
__thread ThreadSites* t_sites __attribute__((tls_model("initial-exec")));

pthread_key_t g_sites_key;
pthread_once_t g_sites_key_once = PTHREAD_ONCE_INIT;

void free_thread_sites(void* p) {
  auto* t = static_cast<ThreadSites*>(p);
  if (t_sites == t) {
    t_sites = nullptr;
    t_site_cache = nullptr;
  }
  std::free(t->map.slots);
  std::free(t->bridges.slots);
  std::free(t);
}

// The process-wide registry: sites by id (entry id - 1), and a map from a stack's hash to id.
// Only the first-loaded tool library's copy is used (see mpe_core_site_id below).
std::mutex g_mutex;
SiteEntry* g_entries = nullptr;
uint32_t g_count = 0, g_capacity = 0;
IdMap g_by_hash;
int g_depth = 0;  // 0 until read

// Frames of ours that can sit above the wrapper's return address: this file's two, the tool's
// hook and the helpers it calls, the core's call_rest when several tools are loaded, the wrapper,
// with room to spare.
constexpr int kOwnFrames = 12;

// The frames from `caller` outwards, at most `depth`: our own frames come first, and the site
// starts at the wrapper's return address. Just the caller when it is not found (a tail call).
// Unwinds no more frames than it can use.
SiteEntry unwind_from(uintptr_t caller, int depth) {
  SiteEntry e;
  e.n = 1;
  e.pcs[0] = caller;
  void* raw[kOwnFrames + kMaxCallsiteDepth];
  const int got = unw_backtrace(raw, kOwnFrames + depth);
  for (int i = 0; i < got; ++i)
    if (reinterpret_cast<uintptr_t>(raw[i]) == caller) {
      e.n = got - i < depth ? got - i : depth;
      for (int k = 0; k < e.n; ++k) e.pcs[k] = reinterpret_cast<uintptr_t>(raw[i + k]);
      break;
    }
  return e;
}

ThreadSites* thread_sites() {
  if (!t_sites) {
    t_sites = static_cast<ThreadSites*>(std::calloc(1, sizeof(ThreadSites)));
    if (!t_sites) return nullptr;
    pthread_once(&g_sites_key_once, [] { pthread_key_create(&g_sites_key, free_thread_sites); });
    pthread_setspecific(g_sites_key, t_sites);  // runs free_thread_sites when the thread ends
  }
  return t_sites;
}

}  // namespace

int callsite_depth() noexcept {
  if (!g_depth) g_depth = static_cast<int>(config::env_int("MPE_CALLSITE_DEPTH", 1, 1, kMaxCallsiteDepth));
  return g_depth;
}

namespace {

uint64_t hash_frames(const python::FrameRef* frames, int n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(n);  // not an address stack's hash
  for (int i = 0; i < n; ++i)
    h = ((h ^ frames[i].code) * 1099511628211ull ^ frames[i].lasti) * 1099511628211ull;
  return h ? h : 1;
}

// Whether `caller` is between Python and MPI (python::is_bridge), asked once per address per thread.
bool bridge(ThreadSites* t, uintptr_t caller) {
  if (caller == t->last_bridge) return true;
  if (!python::detect()) return false;
  uint32_t known = t->bridges.find(caller);
  if (!known) {
    known = python::is_bridge(caller) ? kBridge : kNotBridge;
    t->bridges.insert(caller, known);  // out of memory: asked again next time
  }
  if (known == kBridge) t->last_bridge = caller;
  return known == kBridge;
}

// The site of the calling thread's innermost `depth` Python frames; 0 when it has none (mpi4py's
// MPI_Finalize from an exit handler) or out of memory. The thread's map keys the frames' code and
// instruction; the registry keys their text, so the calls of one line share one id. (A code object
// freed and another made at the same address would share the first's sites in this thread's map:
// code objects of functions and modules live until the interpreter ends.)
uint32_t python_site(ThreadSites* t, int depth) noexcept {
  python::FrameRef frames[kMaxCallsiteDepth];
  const int n = python::current_frames(frames, depth);
  if (n == 0) return 0;
  const uint64_t key = hash_frames(frames, n);
  if (const uint32_t id = t->map.find(key)) return id;
  try {
    const std::string text = python::frames_text(frames, n);
    const uint32_t id = mpe_core_python_site_id(text.c_str(), hash_text(text));
    if (id) t->map.insert(key, id);
    return id;
  } catch (...) {
    return 0;
  }
}

// The id of a C site (the stack from `caller`), kept in the thread's direct cache at depth 1
// unless `cacheable` is false (an address whose calls come from Python lines).
uint32_t c_site(ThreadSites* t, uintptr_t& caller, bool cacheable) {
  const int depth = callsite_depth();
  SiteEntry e;
  uint64_t key = caller;  // depth 1: the address itself keys the thread's map
  if (depth > 1) {
    e = unwind_from(caller, depth);
    key = hash_pcs(e.pcs, e.n);
  } else {
    e.n = 1;
    e.pcs[0] = caller;
  }
  uint32_t id = t->map.find(key);
  if (!id) {
    id = mpe_core_site_id(e.pcs, e.n, hash_pcs(e.pcs, e.n));
    if (!id || !t->map.insert(key, id)) return id;  // out of memory: asked again next time
  }
  if (depth > 1 || !cacheable) {
    tag(caller, id);
  } else {
    const uint32_t slot = cache_slot(caller);
    t->cache.pc[slot] = caller;
    t->cache.id[slot] = id;
    t_site_cache = &t->cache;
  }
  return id;
}

}  // namespace

uint32_t callsite_miss(uintptr_t& caller) noexcept {
  if (caller & kResolvedSite) return static_cast<uint32_t>((caller & ~kResolvedSite) >> kTaggedIdShift);
  ThreadSites* t = thread_sites();
  if (!t) return 0;
  // A call from Python never enters the direct cache: its return address is the same for every line.
  const bool from_python = bridge(t, caller);
  if (from_python)
    if (const uint32_t id = python_site(t, callsite_depth())) {
      tag(caller, id);
      return id;
    }
  return c_site(t, caller, !from_python);
}

uint32_t callsite_deep(uintptr_t caller, int depth) noexcept {
  if (depth > kMaxCallsiteDepth) depth = kMaxCallsiteDepth;
  if (depth < 1) depth = 1;
  ThreadSites* t = python::detect() ? thread_sites() : nullptr;
  if (t && bridge(t, caller & kCallerAddress))
    if (const uint32_t id = python_site(t, depth)) return id;
  const SiteEntry e = unwind_from(caller & kCallerAddress, depth);
  return mpe_core_site_id(e.pcs, e.n, hash_pcs(e.pcs, e.n));
}

}  // namespace mpe::core

using mpe::core::g_by_hash;
using mpe::core::g_capacity;
using mpe::core::g_count;
using mpe::core::g_entries;
using mpe::core::g_mutex;

namespace {

// A new entry keyed by `hash`, its id in *id; null when out of memory. Under g_mutex.
mpe::core::SiteEntry* new_entry(uint64_t hash, uint32_t* id) {
  if (g_count == g_capacity) {
    const uint32_t capacity = g_capacity ? 2 * g_capacity : 256;
    auto* grown = static_cast<mpe::core::SiteEntry*>(std::realloc(g_entries, capacity * sizeof *g_entries));
    if (!grown) return nullptr;
    g_entries = grown;
    g_capacity = capacity;
  }
  *id = g_count + 1;
  if (!g_by_hash.insert(hash, *id)) return nullptr;
  mpe::core::SiteEntry* e = &g_entries[g_count++];
  e->n = 0;
  e->python = nullptr;
  return e;
}

}  // namespace

extern "C" uint32_t mpe_core_site_id(const uintptr_t* pcs, int n, uint64_t hash) {
  if (n < 1 || n > mpe::core::kMaxCallsiteDepth) return 0;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (const uint32_t id = g_by_hash.find(hash)) return id;  // a 64-bit hash: collisions are ignored
  uint32_t id = 0;
  mpe::core::SiteEntry* e = new_entry(hash, &id);
  if (!e) return 0;
  e->n = n;
  std::memcpy(e->pcs, pcs, sizeof(uintptr_t) * static_cast<size_t>(n));
  return id;
}

extern "C" uint32_t mpe_core_python_site_id(const char* frames_text, uint64_t hash) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (const uint32_t id = g_by_hash.find(hash)) return id;
  char* text = strdup(frames_text);
  if (!text) return 0;
  uint32_t id = 0;
  mpe::core::SiteEntry* e = new_entry(hash, &id);
  if (!e) {
    std::free(text);
    return 0;
  }
  e->python = text;
  return id;
}

extern "C" const char* mpe_core_site_python(uint32_t id) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return id >= 1 && id <= g_count ? g_entries[id - 1].python : nullptr;
}

extern "C" uint32_t mpe_core_site_count() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_count;
}

extern "C" int mpe_core_site_pcs(uint32_t id, uintptr_t* out, int max) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (id < 1 || id > g_count) return 0;
  const mpe::core::SiteEntry& e = g_entries[id - 1];
  const int n = e.n < max ? e.n : max;
  std::memcpy(out, e.pcs, sizeof(uintptr_t) * static_cast<size_t>(n));
  return n;
}

namespace mpe {

std::vector<Frame> symbolize_callsite(Symbolizer& symbolizer, uint32_t id) {
  if (const char* python = mpe_core_site_python(id)) return core::python::parse_frames_text(python);
  uintptr_t pcs[core::kMaxCallsiteDepth];
  const int n = mpe_core_site_pcs(id, pcs, core::kMaxCallsiteDepth);
  std::vector<Frame> frames;
  frames.reserve(static_cast<size_t>(n > 0 ? n : 0));
  for (int i = 0; i < n; ++i) frames.push_back(symbolizer.symbolize(pcs[i], true));  // return addresses all
  return frames;
}

std::vector<SiteFrames> symbolize_callsites() {
  std::vector<SiteFrames> out;
  Symbolizer symbolizer;
  const uint32_t count = mpe_core_site_count();
  out.reserve(count);
  for (uint32_t id = 1; id <= count; ++id) out.push_back(SiteFrames{id, symbolize_callsite(symbolizer, id)});
  return out;
}

}  // namespace mpe
