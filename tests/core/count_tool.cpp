// A test tool that counts the calls it sees per MPI function and writes them at finalize, so
// tests can check that several tools together each see every application call exactly once.
#include <atomic>
#include <cstdio>
#include <string>

#include "mpe/config.h"
#include "mpe/core.h"

namespace {

std::atomic<uint64_t> g_counts[mpe::kFnCount];
std::atomic<uint64_t> g_nested;

void on_enter(mpe::Call& call) noexcept {
  if (call.depth > 0) {
    g_nested.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  g_counts[static_cast<int>(call.fn)].fetch_add(1, std::memory_order_relaxed);
}

void write_counts() noexcept {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path =
      mpe::config::temp_dir() + "/count." COUNT_TOOL_NAME "." + std::to_string(rank) + ".txt";
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return;
  for (int i = 0; i < mpe::kFnCount; ++i)
    if (uint64_t n = g_counts[i].load())
      std::fprintf(f, "%s %llu\n", mpe::kFnInfo[i].name, (unsigned long long)n);
  std::fprintf(f, "nested %llu\n", (unsigned long long)g_nested.load());
  std::fclose(f);
}

const mpe::Tool kTool = {COUNT_TOOL_NAME, 0, on_enter, nullptr, nullptr, write_counts};

__attribute__((constructor)) void register_count_tool() { mpe_core_register_tool(&kTool); }

}  // namespace
