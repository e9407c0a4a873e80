// The tool registry and the core's life-cycle steps; the per-call path is inline in core.h.
#include "mpe/core.h"

#include <cstdlib>

namespace mpe::core {

Registry g_registry;
__thread ThreadState t_state;

namespace {
int g_world_rank = -1;
}  // namespace

MPI_Status* status_scratch(ThreadState& ts, int n) {
  if (n <= 0) n = 1;
  if (n > ts.scratch_capacity) {
    // Amortised: the buffer doubles, so a thread allocates O(log n) times in its life.
    int capacity = ts.scratch_capacity ? ts.scratch_capacity : 16;
    while (capacity < n) capacity *= 2;
    auto* grown = static_cast<MPI_Status*>(std::realloc(ts.scratch, sizeof(MPI_Status) * capacity));
    if (!grown) return MPI_STATUSES_IGNORE;  // out of memory: the tools just see no statuses
    ts.scratch = grown;
    ts.scratch_capacity = capacity;
  }
  return ts.scratch;
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
  return 0;
}

extern "C" int mpe_core_world_rank() { return mpe::core::g_world_rank; }
