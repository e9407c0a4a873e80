// liblog's life cycle: registration with the core, set-up after MPI_Init, the merge and its
// report at MPI_Finalize, and what the MPE user API asks of the recorder.
//
// The parts: log_state.h (per-thread logs, the inline record store), records.cpp (what each call
// writes), communicators.cpp, clock_sync.cpp, spill.cpp (the spill file and the signal flush),
// finalize_merge.cpp (the parallel merge, on merge/'s layout planner), otf2_finalize.cpp.
#include "log_tool.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "clock_sync.h"
#include "communicators.h"
#include "counters.h"
#include "finalize_merge.h"
#include "log_state.h"
#include "mpe/call_filter.h"
#include "mpe/callsite.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/log_layout.h"
#include "mpe/records.h"
#include "otf2_finalize.h"
#include "records.h"
#include "spill.h"

namespace mpe::tools::log {

std::atomic<bool> g_active{false};
std::atomic<bool> g_logging{true};
bool g_rank_recorded = true;
int g_rank = -1, g_size = 0;
MPI_Comm g_comm = MPI_COMM_NULL;
uint32_t g_buffer_records = 0;
int g_zstd_level = 1;
std::mutex g_mutex;
ThreadLog* g_threads = nullptr;
format::RankMeta g_meta;
__thread ThreadLog* t_log __attribute__((tls_model("initial-exec")));

namespace {

std::string g_finish_name;  // MPE_Finish_log's file name, if given; guarded by g_mutex

std::string part_path(int rank) {
  return config::temp_dir() + "/" + config::output_name() + ".mpelog." + std::to_string(rank) + ".part";
}

std::string final_path() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_finish_name.empty())
    return g_finish_name.ends_with(".mpelog") && g_finish_name.size() > 7 ? g_finish_name
                                                                          : g_finish_name + ".mpelog";
  return config::output_path(".mpelog");
}

format::Definitions base_definitions() {
  format::Definitions d;
  d.program = config::output_name();
  d.clock = mpe_clock_name();
  d.ticks_per_second = mpe_clock_ticks_per_second();
  std::vector<std::string> names;
  names.reserve(kFnCount);
  for (int i = 0; i < kFnCount; ++i) names.push_back(kFnInfo[i].name);
  d.categories = format::mpi_categories(names);
  return d;
}

// This rank's definitions as they stand at MPI_Init.
void define_rank() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_meta.rank = static_cast<uint32_t>(g_rank);
  g_meta.world_size = static_cast<uint32_t>(g_size);
  g_meta.pid = getpid();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  g_meta.host = host;
  g_meta.ticks_per_second = mpe_clock_ticks_per_second();
  g_meta.logging_at_start = g_logging.load();
  g_meta.filter = call_filter::text();
  define_builtin_comms();
}

void after_init() noexcept {
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
  collective::duplicate(MPI_COMM_WORLD, &g_comm);
  const int64_t buffer = config::env_int("MPE_LOG_BUFFER", 4 << 20, 4096, int64_t{1} << 31);
  g_buffer_records = static_cast<uint32_t>(buffer / static_cast<int64_t>(sizeof(format::Record)));
  g_zstd_level = static_cast<int>(config::env_int("MPE_LOG_ZSTD_LEVEL", 1, -5, 19));
  call_filter::load("liblog");
  g_rank_recorded = call_filter::records_rank(g_rank);
  // Logging starts at Pcontrol level 1, the MPI standard's default.
  g_logging.store(!config::env_bool("MPE_LOG_PAUSED", false) && g_rank_recorded &&
                  call_filter::records_at_level(1));
  // Every rank takes part in the clock synchronisation below, whether or not its set-up worked.
  bool ready = false;
  try {
    define_rank();
    counters::start();  // MPE_LOG_PVARS: before the first rank-meta chunk, which carries its definitions
    const Status s = open_spill(part_path(g_rank), base_definitions());
    if (s.ok())
      ready = true;
    else
      config::warn("liblog: " + s.message() + "; logging is off", false);
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while starting; logging is off", false);
  }
  sync_clocks(false);
  if (!ready) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    write_meta_locked();
  }
  if (config::env_bool("MPE_LOG_SIGNALS", true)) install_signal_flush();
  g_active.store(true);
}

// Symbolizes this rank's call sites into its definitions, against its own memory map, before the
// last rank-meta chunk and the merge carry them. Without names the records keep their ids, and
// readers show the sites as unknown.
void name_callsites() noexcept {
  try {
    std::vector<SiteFrames> sites = symbolize_callsites();
    std::lock_guard<std::mutex> lock(g_mutex);
    g_meta.callsites.clear();
    for (SiteFrames& s : sites) g_meta.callsites.push_back(format::CallSiteDef{s.id, std::move(s.frames)});
  } catch (const std::bad_alloc&) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_meta.callsites.clear();
    config::warn("liblog: out of memory while naming the call sites; the log shows them as unknown", false);
  }
}

// The calls the filter left out on this rank, summed over its threads, into its definitions.
void count_left_out() noexcept {
  try {
    std::vector<uint64_t> calls(kFnCount, 0);
    std::lock_guard<std::mutex> lock(g_mutex);
    for (ThreadLog* t = g_threads; t; t = t->next)
      if (t->left_out)
        for (int i = 0; i < kFnCount; ++i) calls[static_cast<size_t>(i)] += t->left_out[i];
    g_meta.left_out.clear();
    for (int i = 0; i < kFnCount; ++i)
      if (calls[static_cast<size_t>(i)])
        g_meta.left_out.push_back({static_cast<uint32_t>(i), calls[static_cast<size_t>(i)]});
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while counting the calls the filter left out", false);
  }
}

// Merges, converts to OTF2 when asked, removes what is no longer needed, and says what happened.
void finish_log() {
  const std::string out = final_path();
  const StatusOr<MergeTotals> merged = merge_at_finalize(out, base_definitions());
  const bool ok = merged.ok();
  const bool keep_parts = !ok || !config::env_bool("MPE_DELETE_LOCALFILE", true);
  const OutputFormats formats = output_formats();
  // OTF2 is written by every rank into one archive beside the logfile: it needs a directory that
  // every rank sees. Without one, the logfile (complete thanks to the relay) is kept instead.
  const bool shared = ok && merged->relayed_ranks == 0;
  if (ok && formats.otf2 && !shared && g_rank == 0)
    config::warn("liblog: no OTF2 archive: " + std::to_string(merged->relayed_ranks) +
                 " ranks do not see the directory of " + out + "; convert the logfile with `mpe convert`");
  const bool otf2_ok = shared && formats.otf2 && write_otf2(g_comm, out, otf2_path(out));
  const bool drop_mpelog = otf2_ok && !formats.mpelog;  // it was only the way to OTF2
  close_spill(!keep_parts);
  if (g_rank == 0 && drop_mpelog) ::unlink(out.c_str());
  if (ok && g_rank == 0 && !drop_mpelog)
    config::inform("liblog wrote " + out + " (" + std::to_string(merged->records) + " records, " +
                   std::to_string(merged->bytes) + " bytes" +
                   (shared ? std::string()
                           : "; " + std::to_string(merged->relayed_ranks) +
                                 " ranks that do not see this directory sent their chunks to ranks that do") +
                   ")");
  // Each rank whose own step failed says why; rank 0 speaks for the run.
  if (!ok && (g_rank == 0 || merged.status().message() != kAnotherRankFailed))
    config::warn("liblog: rank " + std::to_string(g_rank) + ": the merge into " + out + " failed (" +
                     merged.status().message() + "); the per-rank files " + config::temp_dir() + "/" +
                     config::output_name() + ".mpelog.<rank>.part are kept: run `mpe merge --recover`",
                 false);
}

void before_finalize() noexcept {
  if (!g_active.load()) return;
  ThreadLog* me = thread_log();
  const uint64_t entered = g_finalize_enter.load(std::memory_order_relaxed);
  if (me && g_logging.load() && entered)
    put(me, format::StateRecord{entered, static_cast<uint16_t>(Fn::MPI_Finalize), 0, g_finalize_site.load(),
                                mpe_clock_now() - entered}
                .to_record());
  sync_clocks(true);
  g_active.store(false);
  counters::stop();
  name_callsites();
  count_left_out();
  if (config::env_bool("MPE_LOG_SIGNALS", true)) remove_signal_flush();
  spill_all();
  try {
    finish_log();
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory at finalize; the per-rank files are kept: run `mpe merge --recover`",
                 false);
  }
  free_clock_layout();
  if (g_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_comm);
}

Tool kTool = core::solo_tool<Hooks>("log", after_init, before_finalize);

__attribute__((constructor)) void register_log_tool() {
  // MPE_LOG_PVARS reads variables at the entry of more calls than liblog otherwise sees there.
  bool every = false;
  if (const uint64_t more = counters::enter_classes(&every); more || every)
    kTool.enter_classes = every ? kEveryClass : kTool.enter_classes | more;
  if (mpe_core_register_tool(&kTool) != 0) config::warn("liblog: too many tools loaded; logging is off");
}

}  // namespace

bool active() noexcept { return g_active.load(std::memory_order_relaxed); }
bool logging() noexcept { return g_logging.load(std::memory_order_relaxed); }
void set_logging(bool on) noexcept { g_logging.store(on && g_rank_recorded, std::memory_order_relaxed); }

void put_record(const format::Record& r) noexcept {
  if (!g_active.load(std::memory_order_relaxed)) return;
  if (ThreadLog* t = thread_log()) put(t, r);
}

Status define_category(const format::Category& c) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& old : g_meta.user_categories)
      if (old.id == c.id) {
        old = c;
        write_meta_locked();
        return Status();
      }
    g_meta.user_categories.push_back(c);
    write_meta_locked();
    return Status();
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory();
  }
}

Status set_finish_name(const char* name) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_finish_name = name;
    return Status();
  } catch (const std::bad_alloc&) {
    return Status::out_of_memory();
  }
}

void flush_now() noexcept {
  if (g_active.load()) spill_all();
}

}  // namespace mpe::tools::log
