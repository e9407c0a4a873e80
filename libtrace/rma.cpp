// The window registry and the RMA records (see rma.h).
#include "rma.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include "communicators.h"
#include "mpe/bytes.h"
#include "mpe/config.h"
#include "mpe/handle_map.h"
#include "mpe/records.h"

namespace mpe::tools::log {

namespace {

// Window handle -> (window index << 32 | communicator index), read lock-free on every RMA call
// (~5 ns). Inserts happen under g_mutex and publish the value before the key; the entry of a
// freed window is overwritten when MPI reuses its handle.
constinit HandleMap<MPI_Win, 1024> g_win_slots;
uint32_t g_windows = 0;                  // windows created so far (under g_mutex)
std::map<uint32_t, int32_t> g_ordinals;  // communicator index -> windows created on it (under g_mutex)

void win_insert(MPI_Win w, uint64_t value) {
  if (g_win_slots.put(w, value)) return;
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    config::warn("liblog: more windows than the registry holds; RMA on them is not recorded");
}

// The window's (index, communicator index); false for a window liblog did not see created.
bool win_find(MPI_Win w, uint32_t* index, uint32_t* comm) {
  uint64_t v;
  if (!g_win_slots.find(w, &v)) return false;
  *index = static_cast<uint32_t>(v >> 32);
  *comm = static_cast<uint32_t>(v);
  return true;
}

}  // namespace

void register_window(const Call& c, ThreadLog* t) noexcept {
  if (!c.has(role::newwin) || !c.newwin || *c.newwin == MPI_WIN_NULL) return;
  const uint32_t comm = c.has(role::comm) ? comm_index(c.comm) : format::kUnknownComm;
  MPI_Aint* size = nullptr;
  int flag = 0;
  PMPI_Win_get_attr(*c.newwin, MPI_WIN_SIZE, &size, &flag);
  const uint64_t bytes = flag && size && *size > 0 ? static_cast<uint64_t>(*size) : 0;
  uint32_t index;
  int32_t ordinal;
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    ordinal = g_ordinals[comm]++;
    index = g_windows++;
    win_insert(*c.newwin, static_cast<uint64_t>(index) << 32 | comm);
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while recording a new window; RMA on it is not recorded", false);
    return;
  }
  if (t)
    put(t, format::WinCreateRecord{c.t_leave, static_cast<uint16_t>(c.fn), index,
                                   static_cast<uint32_t>(ordinal), comm, bytes}
               .to_record());
}

void put_rma_op(ThreadLog* t, const Call& c) noexcept {
  const int target = c.has(role::dest) ? c.dest : c.has(role::source) ? c.source : MPI_PROC_NULL;
  uint32_t index, comm;
  if (target == MPI_PROC_NULL || !c.has(role::win) || !win_find(c.win, &index, &comm)) return;
  const mpe::Bytes b = mpe::rma_bytes(c);
  put(t, format::RmaOpRecord{c.t_enter, static_cast<uint16_t>(c.fn), target, index,
                             static_cast<uint64_t>(b.sent),
                             static_cast<int32_t>(std::min<int64_t>(b.recv, INT32_MAX))}
             .to_record());
}

void put_rma_complete(ThreadLog* t, const Call& c) noexcept {
  int32_t target = -1;
  switch (c.fn) {
    case Fn::MPI_Win_unlock:
    case Fn::MPI_Win_flush:
      if (c.dest == MPI_PROC_NULL) return;  // MPICH's MPI_PROC_NULL is -1, "every target" here
      target = c.dest;
      break;
    case Fn::MPI_Win_fence:
    case Fn::MPI_Win_unlock_all:
    case Fn::MPI_Win_flush_all:
    case Fn::MPI_Win_complete:
      break;
    default:  // lock, lock_all, post, start, wait: they complete no operation of this rank
      return;
  }
  uint32_t index, comm;
  if (!c.has(role::win) || !win_find(c.win, &index, &comm)) return;
  put(t, format::RmaCompleteRecord{c.t_leave, static_cast<uint16_t>(c.fn), target, index}.to_record());
}

}  // namespace mpe::tools::log
