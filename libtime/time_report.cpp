// libmpetime at MPI_Finalize: every thread's rows summed into this process's profile, the
// per-process file, and the run's report from rank 0. Each rank's profile travels to rank 0 in the
// one gather encoding of the tools (profile.h: encode_profile, mpe::ByteWriter); the per-process
// file and the reports are written by the one checked writer (mpe::io::write_file), so that a
// failed write leaves no half file under its name and costs one `mpe-tools:` line.
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "mpe/callsite.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/file_io.h"
#include "profile.h"
#include "time_table.h"

namespace mpe::tools::time::tool {

namespace {

using mpe::CallClass;

std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!all.empty() && all.back() == '\0') all.pop_back();
  for (char& c : all)
    if (c == '\0') c = ' ';
  return all;
}

// One (site, routine) pair summed over threads, in ticks.
struct Sum {
  uint64_t calls = 0, incl = 0, nested = 0, min = kNoMin, max = 0, sent = 0, recv = 0, messages = 0;
  void add(const Row& r) {
    calls += r.calls;
    incl += r.incl;
    nested += r.nested;
    min = r.min < min ? r.min : min;
    max = r.max > max ? r.max : max;
    sent += r.sent;
    recv += r.recv;
    messages += r.messages;
  }
  void add(const Sum& r) {
    Row row{r.calls, r.incl, r.nested, r.min, r.max, r.sent, r.recv, 0, 0};
    add(row);
    messages += r.messages;
  }
  // Nested calls lie inside their parent's span; the clamp guards a clock that is not monotonic.
  uint64_t excl() const { return incl > nested ? incl - nested : 0; }
};

// The frames of every call site of this process, by id (index id - 1); empty when out of memory,
// after saying so: the sites are still counted, under no name.
std::vector<mpe::SiteFrames> site_names() {
  try {
    return mpe::symbolize_callsites();
  } catch (const std::bad_alloc&) {
    mpe::config::warn("libmpetime: out of memory while naming the call sites; they are left unnamed", false);
    return {};
  }
}

// This process's profile: every thread's rows summed, ticks turned into nanoseconds; each
// routine's figures are the sums of its sites.
RankProfile collect(uint64_t end, int rank, int size) {
  const double ns_per_tick = 1e9 / mpe_clock_ticks_per_second();
  auto ns = [&](uint64_t ticks) {
    return static_cast<uint64_t>(std::llround(static_cast<double>(ticks) * ns_per_tick));
  };
  // A routine's or a site's sum, in nanoseconds: the one conversion both tables use.
  auto stats = [&](const Sum& sum) {
    mpe::tools::time::CallStats c;
    c.calls = sum.calls;
    c.incl_ns = ns(sum.incl);
    c.excl_ns = ns(sum.excl());
    c.min_ns = ns(sum.min);
    c.max_ns = ns(sum.max);
    c.bytes_sent = sum.sent;
    c.bytes_recv = sum.recv;
    c.messages = sum.messages;
    return c;
  };
  mpe::tools::time::RankProfile p;
  p.rank = rank;
  p.size = size;
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.command = command_line();
  p.mpi = MPE_MPI_NAME;
  p.timer = mpe_clock_name();
  uint64_t paused = g_paused_ticks.load();
  if (g_paused.load()) paused += end - g_pause_start.load();
  const uint64_t span = end - g_run_start.load();
  p.run_ns = ns(span > paused ? span - paused : 0);
  std::vector<mpe::SiteFrames> names = site_names();

  std::map<std::pair<uint32_t, int>, Sum> sites;  // (site id, routine)
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    p.threads = g_nthreads ? g_nthreads : 1;
    for (Table* t = g_tables; t; t = t->next) {
      for (uint32_t id = 1; id < t->capacity; ++id)
        if (const Row& r = t->rows[id]; r.calls) sites[{id, r.fn}].add(r);
      for (int f = 0; f < mpe::kFnCount; ++f)
        if (t->unknown[f].calls) sites[{0, f}].add(t->unknown[f]);
      for (uint32_t i = 0; t->aliases.slots && i <= t->aliases.mask; ++i)
        if (const Aliases::Slot& a = t->aliases.slots[i]; a.key && a.row->calls)
          sites[{static_cast<uint32_t>((a.key - 1) >> 16), a.row->fn}].add(*a.row);
    }
  }

  std::vector<Sum> routines(mpe::kFnCount);
  for (const auto& [key, sum] : sites) {
    routines[static_cast<size_t>(key.second)].add(sum);
    mpe::tools::time::SiteStats c;
    c.id = key.first;
    c.routine = mpe::kFnInfo[key.second].name;
    if (key.first >= 1 && key.first <= names.size() && names[key.first - 1].id == key.first)
      c.frames = names[key.first - 1].frames;
    static_cast<mpe::tools::time::CallStats&>(c) = stats(sum);
    p.sites.push_back(std::move(c));
  }
  for (int f = 0; f < mpe::kFnCount; ++f) {
    Sum sum = routines[static_cast<size_t>(f)];
    const auto& info = mpe::kFnInfo[f];
    if (info.cls == CallClass::kFinalize) sum = Sum{1, 0, 0, 0, 0, 0, 0};  // timed span ends as it starts
    if (!sum.calls) continue;
    mpe::tools::time::RoutineStats r;
    r.name = info.name;
    static_cast<mpe::tools::time::CallStats&>(r) = stats(sum);
    p.mpi_ns += r.excl_ns;
    p.routines.push_back(std::move(r));
  }
  return p;
}

// What a user whose output could not be written should check.
constexpr const char* kCheckOutput =
    "check that the output directory exists, is writable and has room (MPE_LOG_DIR, MPE_LOGFILE_PREFIX)";

// This rank's contribution to the report: one byte that says whether it could write its own file
// (1) or not (0), then its profile in the gather encoding (encode_profile); empty when it could
// not even build the profile. Never throws, so that every rank reaches the gather.
std::string contribution(uint64_t end, int rank, int size, const std::string& base) noexcept {
  try {
    const RankProfile profile = collect(end, rank, size);
    const std::string mine = base + "." + std::to_string(rank) + ".txt";
    const Status written = io::write_file(mine, serialize(profile));
    if (!written.ok())
      config::warn("libmpetime: no per-process file: " + written.message() + "; " + kCheckOutput, false);
    return (written.ok() ? '\1' : '\0') + encode_profile(profile);
  } catch (const std::bad_alloc&) {
    config::warn("libmpetime: out of memory while building this rank's profile; it is left out", false);
    return std::string();
  }
}

// Rank 0's part: the gathered profiles decoded, checked and written as the run's report.
void write_run_report(const std::vector<std::string>& gathered, const std::string& base) {
  const int size = static_cast<int>(gathered.size());
  std::vector<RankProfile> profiles;
  profiles.reserve(gathered.size());
  int files = 0;
  for (int i = 0; i < size; ++i) {
    const std::string& blob = gathered[static_cast<size_t>(i)];
    if (blob.empty()) {
      config::warn("libmpetime: rank " + std::to_string(i) + " could not build its profile; no report");
      return;
    }
    files += blob[0] == '\1';
    auto profile = decode_profile(std::string_view(blob).substr(1));
    if (!profile.ok()) {
      config::warn("libmpetime: rank " + std::to_string(i) +
                   " sent a bad profile: " + profile.status().message());
      return;
    }
    profiles.push_back(std::move(profile.value()));
  }
  if (const Status s = check_run(&profiles); !s.ok()) {
    config::warn("libmpetime: " + s.message());
    return;
  }
  const std::string txt = base + ".txt", json = base + ".json";
  Status written = io::write_file(txt, text_report(profiles));
  if (written.ok()) written = io::write_file(json, json_report(profiles));
  if (!written.ok()) {
    config::warn("libmpetime: the report was not written: " + written.message() + "; " + kCheckOutput);
    return;
  }
  config::inform("libmpetime: report in " + txt + " and " + json + "; " + std::to_string(files) + " of " +
                 std::to_string(size) + " per-process files in " + base + ".<rank>.txt");
}

void finalize() {
  const uint64_t end = mpe_clock_now();
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  // Nothing before the gather may throw, or the other ranks would wait in it.
  std::string base, mine;
  try {
    base = config::output_path(".mpetime");
  } catch (const std::bad_alloc&) {
    // An empty contribution: rank 0 then names this rank as the one without a profile.
  }
  if (!base.empty()) mine = contribution(end, rank, size, base);

  // Gather every rank's contribution on rank 0 over a private communicator.
  MPI_Comm comm;
  if (collective::duplicate(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
    config::warn("libmpetime: cannot create a communicator for the report; per-process files only");
    return;
  }
  auto gathered = collective::gather_to_root(mine, 0, comm);
  PMPI_Comm_free(&comm);
  if (!gathered.ok()) {
    config::warn("libmpetime: cannot gather the report (" + gathered.status().to_string() +
                 "); per-process files only");
    return;
  }
  if (rank == 0) write_run_report(gathered.value(), base);
}

}  // namespace

void report_at_finalize() noexcept {
  try {
    finalize();
  } catch (const std::bad_alloc&) {
    config::warn("libmpetime: out of memory at finalize; the report is incomplete or missing");
  } catch (const std::exception&) {
    config::warn("libmpetime: the report failed");
  }
}

}  // namespace mpe::tools::time::tool
