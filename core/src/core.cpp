// The tool registry and the core's life-cycle steps; the per-call path is inline in core.h.
#include "mpe/core.h"

#include <pthread.h>

#include <cstdlib>

#include "mpe/config.h"

namespace mpe::core {

Registry g_registry;
bool g_solo = false;
__thread ThreadState t_state;

namespace {
int g_world_rank = -1;
}  // namespace

namespace {

pthread_key_t g_scratch_key;
pthread_once_t g_scratch_key_once = PTHREAD_ONCE_INIT;

// Frees a thread's scratch buffers when it ends; a program that keeps starting threads would
// otherwise lose them with each thread.
void free_scratch(void*) {
  for (ScratchBuffer& b : t_state.scratch) {
    std::free(b.data);
    b = ScratchBuffer{};
  }
}

}  // namespace

void* scratch(ThreadState& ts, Scratch which, size_t bytes) noexcept {
  ScratchBuffer& b = ts.scratch[static_cast<int>(which)];
  if (bytes > b.capacity) {
    if (!b.data) {  // the thread's first buffer: free them all when it ends
      pthread_once(&g_scratch_key_once, [] { pthread_key_create(&g_scratch_key, free_scratch); });
      pthread_setspecific(g_scratch_key, &ts);
    }
    size_t capacity = b.capacity ? b.capacity : 1024;
    while (capacity < bytes) capacity *= 2;
    void* grown = std::realloc(b.data, capacity);
    if (!grown) return nullptr;
    b.data = grown;
    b.capacity = capacity;
  }
  return b.data;
}

MPI_Status* status_scratch(ThreadState& ts, int n) {
  void* p = scratch(ts, Scratch::kStatuses, sizeof(MPI_Status) * static_cast<size_t>(n > 0 ? n : 1));
  return p ? static_cast<MPI_Status*>(p) : MPI_STATUSES_IGNORE;
}

void call_rest(const HookList& hooks, Call& call) {
  for (int i = 1; i < hooks.n; ++i) hooks.hook[i](call);
}

void call_rest_reversed(const HookList& hooks, Call& call) {
  for (int i = hooks.n; --i > 0;) hooks.hook[i](call);
}

void after_init(ThreadState& ts) {
  suppress(ts);
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  for (int i = 0; i < g_registry.ntools; ++i)
    if (g_registry.tools[i]->after_init) g_registry.tools[i]->after_init();
  unsuppress(ts);
}

void before_finalize(ThreadState& ts) {
  suppress(ts);
  // Reverse order: the last tool to start is the first to stop.
  for (int i = g_registry.ntools; i-- > 0;)
    if (g_registry.tools[i]->before_finalize) g_registry.tools[i]->before_finalize();
  unsuppress(ts);
}

namespace {

// A process that started MPI without the core seeing MPI_Init (a binding the core does not wrap,
// or the MPI library found before the tools) has records of nothing: say so at exit instead of
// leaving the user with no output and no reason. Only the core the tools registered with speaks.
__attribute__((destructor)) void say_if_init_unseen() {
  if (g_registry.ntools == 0 || g_world_rank >= 0) return;
  int initialized = 0;
  if (PMPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;  // not an MPI program
  if (config::launcher_rank() > 0) return;  // one line per job, not per rank (it cannot ask MPI)
  config::warn(
      "the tools never saw MPI_Init in this program, so they recorded nothing; likely cause: it calls MPI "
      "through a binding they do not wrap (an mpi_f08 library missing when mpe-tools was built, MPI "
      "sessions), or it was linked with the MPI libraries before the tool libraries (put "
      "-lmpetime/-lumq/-llog "
      "first, or use `mpe run`)",
      false);
}

}  // namespace

}  // namespace mpe::core

using mpe::core::g_registry;

extern "C" int mpe_core_register_tool(const mpe::Tool* tool) {
  if (!tool || g_registry.ntools >= mpe::core::kMaxTools) return -1;
  for (int i = 0; i < g_registry.ntools; ++i)
    if (g_registry.tools[i] == tool) return 0;
  // Counts are published after their entries: the wrappers only read the first n of each.
  const auto add = [](mpe::core::HookList& list, mpe::Hook hook) {
    list.hook[list.n] = hook;
    ++list.n;
  };
  for (int cls = 0; cls < mpe::kCallClassCount; ++cls) {
    const uint64_t bit = uint64_t{1} << cls;
    if (tool->enter && (tool->enter_classes == mpe::kEveryClass || (tool->enter_classes & bit)))
      add(g_registry.enter[cls], tool->enter);
    if (tool->leave && (tool->leave_classes == mpe::kEveryClass || (tool->leave_classes & bit)))
      add(g_registry.leave[cls], tool->leave);
  }
  g_registry.needs |= tool->needs;
  g_registry.tools[g_registry.ntools] = tool;
  ++g_registry.ntools;
  mpe::core::g_solo = g_registry.ntools == 1 && mpe::core::solo_accepts(*tool);
  return 0;
}

extern "C" int mpe_core_world_rank() { return mpe::core::g_world_rank; }
