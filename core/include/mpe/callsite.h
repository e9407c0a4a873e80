// Call sites: which line of the application made an MPI call. The one table every tool uses.
//
// Capture. Every generated wrapper stores its return address in Call::caller: the program counter
// in the code that called MPI (one load and one store). A tool that wants call sites asks for the
// call's id with callsite(call): a small number (1, 2, ...; 0 when unknown), the same for every
// call from the same place of this process, whatever the thread.
//
// Lookup, depth 1 (MPE_CALLSITE_DEPTH, default): a per-thread direct-mapped cache of 256
// (address, id) slots indexed by the address's low byte: ~6 instructions on a hit, no lock, no
// atomic. (The low byte, not a hash: the sites of one loop are a few bytes apart, so they never
// share a slot; two far-apart hot sites do with probability 1/256, and then both take the miss
// path below, which costs ~30 instructions and still no lock.)
// A miss (first call from a site on this thread, or two hot sites sharing a slot) probes the
// thread's own open-addressed map, still without a lock; only the first sighting of a site in
// the whole process takes the process-wide mutex.
//
// Depth N > 1 (for programs that reach MPI through a wrapper library): the key is the N return
// addresses from the call site outwards, taken with libunwind's unw_backtrace on every call (its
// cost is in docs/callsites.md), then hashed into the thread's map. The first hook of a call
// that asks pays the unwind; the call remembers its id (in Call::caller's high bits, beside the
// address) for the other tools' hooks.
//
// One table per process: the tool libraries each carry a copy of the core, but the registry is
// reached through exported functions (mpe_core_site_*), so the library the loader found first
// serves them all and an id means the same site in libmpetime, libumq and liblog.
//
// Names. At finalize, symbolize_callsites() turns the sites into frames against this process's
// own memory map (mpe/symbolizer.h). Sites of different ranks are the same site when
// callsite_key() of their frames is equal (mpe/frame.h: function, file and line of each frame),
// which is how every report and the logfile reader unify them.
//
// Python (mpe/python_frames.h): a call that returns into the code between the interpreter and
// MPI (mpi4py) is named by the calling thread's innermost Python frames instead, N of them at
// MPE_CALLSITE_DEPTH=N. Such a call never enters the direct cache (the same return address serves
// every Python line); it takes the miss path and carries its id in Call::caller, as a deep one.
//
// Failure: out of memory, a site gets id 0 ("unknown call site"); a call never fails.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/calls.h"
#include "mpe/symbolizer.h"
#include "mpe/tool.h"

extern "C" {
// The process-wide registry, exported so that every tool library uses the first-loaded one's.
// The id of the stack pcs[0..n) (hash: its hash, computed by the caller), registered at its first
// sighting; 0 when out of memory. Takes a mutex: for first sightings only.
MPE_EXPORT uint32_t mpe_core_site_id(const uintptr_t* pcs, int n, uint64_t hash);
// The number of sites registered (ids 1..count).
MPE_EXPORT uint32_t mpe_core_site_count();
// Copies up to max addresses of site id into out; returns how many (0 for an unknown id or a
// Python site).
MPE_EXPORT int mpe_core_site_pcs(uint32_t id, uintptr_t* out, int max);
// The id of a site in a Python program, by its frames as python::frames_text wrote them (hash:
// their hash), registered at its first sighting; 0 when out of memory.
MPE_EXPORT uint32_t mpe_core_python_site_id(const char* frames_text, uint64_t hash);
// The frames' text of a Python site; null for a C site or an unknown id.
MPE_EXPORT const char* mpe_core_site_python(uint32_t id);
}

namespace mpe::core {

inline constexpr int kMaxCallsiteDepth = 16;

// Addresses and ids in two arrays, so that both are reached with one scaled-index load.
inline constexpr int kSiteCacheSlots = 256;
struct SiteCache {
  uintptr_t pc[kSiteCacheSlots];
  uint32_t id[kSiteCacheSlots];
};

// The thread's cache, null until its first miss. (Each tool library carries a copy of the core,
// and so its own cache; the ids come from the one process-wide registry below.)
extern __thread SiteCache* t_site_cache MPE_HIDDEN __attribute__((tls_model("initial-exec")));

// A call whose deep site was resolved once carries its id in Call::caller's bits 47-62, tagged
// with bit 63 (user-space code addresses fit in 47 bits), so a second tool's lookup needs no
// second unwind; caller & kCallerAddress is still the address. Ids above kMaxTaggedId are not
// remembered this way (they are unwound again).
inline constexpr uintptr_t kResolvedSite = uintptr_t{1} << 63;
inline constexpr int kTaggedIdShift = 47;
inline constexpr uintptr_t kCallerAddress = (uintptr_t{1} << kTaggedIdShift) - 1;
inline constexpr uint32_t kMaxTaggedId = (1u << 16) - 1;

uint32_t callsite_miss(uintptr_t& caller) noexcept MPE_HIDDEN;

inline uint32_t cache_slot(uintptr_t pc) { return static_cast<uint8_t>(pc); }

// The thread's cache alone: true and *id when `caller` is in it. For a hook that keeps its common
// path free of calls (and so of saved registers) and handles a miss out of line.
inline bool cached_callsite(uintptr_t caller, uint32_t* id) noexcept {
  const SiteCache* cache = t_site_cache;
  if (__builtin_expect(cache == nullptr, 0)) return false;
  const uint32_t slot = cache_slot(caller);
  *id = cache->id[slot];
  return __builtin_expect(cache->pc[slot] == caller, 1);
}

// The call-site id of a code address `caller` (a return address into the code that called):
// what callsite(call) does for an MPI call, and what the MPE logging API does for its own
// callers. May replace `caller` by its tagged id.
inline uint32_t callsite_of(uintptr_t& caller) noexcept {
  uint32_t id;
  return cached_callsite(caller, &id) ? id : callsite_miss(caller);
}
inline uint32_t callsite(Call& call) noexcept { return callsite_of(call.caller); }

// MPE_CALLSITE_DEPTH, read once (1..kMaxCallsiteDepth).
int callsite_depth() noexcept MPE_HIDDEN;

// The id of the `depth` frames from `caller` outwards, whatever MPE_CALLSITE_DEPTH says: for a
// tool that wants longer stacks on rare events (libumq, above its threshold). Always unwinds
// (unw_backtrace), so never on a per-call path; no cache. The id is one of the same table's.
uint32_t callsite_deep(uintptr_t caller, int depth) noexcept MPE_HIDDEN;

}  // namespace mpe::core

namespace mpe {

// The frames of one call site, innermost (the line that called MPI) first.
struct SiteFrames {
  uint32_t id = 0;
  std::vector<Frame> frames;
};

// Symbolizes every call site of this process against its own memory map. Milliseconds per module
// (mpe/symbolizer.h): for finalize. Throws std::bad_alloc.
std::vector<SiteFrames> symbolize_callsites() MPE_HIDDEN;

// The frames of one site (empty for an unknown id), with a Symbolizer the caller keeps: for a
// tool that names a few sites (libumq's). Throws std::bad_alloc.
std::vector<Frame> symbolize_callsite(Symbolizer& symbolizer, uint32_t id) MPE_HIDDEN;

}  // namespace mpe
