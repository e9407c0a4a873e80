// libmpetime's counters per routine (MPE_TIME_PVARS): which MPI routine is responsible for a
// variable's growth (Caliper's question). Each variable is read at the entry and the exit of every
// application-level MPI call (on the call's communicator when the variable is bound to one,
// MPI_COMM_WORLD for calls without one); the difference is added to the routine, and for values
// (levels, sizes, percentages, watermarks) the largest value seen is kept. At finalize rank 0
// gathers every rank's sums and writes <prefix>.mpetime.pvars.txt and .json.
//
// A tool of its own, registered from libmpetime only when MPE_TIME_PVARS is set, so that the time
// path is unchanged otherwise. Cost per call: two shared-reader reads (the entry one shared with
// liblog and libumq when they read the same variable in the same call) and two atomic updates per
// variable. No lock, no allocation.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/mpit.h"

namespace {

using mpe::Call;
using mpe::PvarSemantics;
using mpe::PvarValueKind;

// One routine's figures for one variable on this rank. Deltas as double: they are summed across
// kinds (integers exactly up to 2^53).
struct Cell {
  std::atomic<uint64_t> calls{0};
  std::atomic<double> sum{0};
  std::atomic<double> max{-HUGE_VAL};
};

struct Var {
  int id = -1;
  std::unique_ptr<Cell[]> cells;  // one per MPI routine (mpe::Fn)
};

std::vector<Var> g_vars;  // set up at MPI_Init, then read-only
bool g_on = false;
bool g_started = false;

// The entry values of this thread's application-level call in progress.
__thread double t_enter_value[mpe::mpit::kMaxWatched];
__thread uint64_t t_enter_ok;  // bit i: variable i was read at the entry

void add_double(std::atomic<double>& a, double d) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + d, std::memory_order_relaxed)) {
  }
}

void raise_to(std::atomic<double>& a, double v) {
  double old = a.load(std::memory_order_relaxed);
  while (v > old && !a.compare_exchange_weak(old, v, std::memory_order_relaxed)) {
  }
}

inline MPI_Comm comm_of(const Call& c) {
  if (c.has(mpe::role::comm)) return c.comm;
  return MPI_COMM_WORLD;
}

void on_enter(Call& c) noexcept {
  if (!g_on || c.depth > 0) return;
  if (c.cls == mpe::CallClass::kCommFree && c.has(mpe::role::commptr) && c.commptr)
    mpe::mpit::comm_freed(*c.commptr);  // while it exists; MPI_Comm_free itself is not read
  uint64_t ok = 0;
  for (size_t i = 0; i < g_vars.size(); ++i) {
    mpe::mpit::Sample s;
    if (c.cls == mpe::CallClass::kCommFree || !mpe::mpit::read(g_vars[i].id, comm_of(c), &c, &s)) continue;
    t_enter_value[i] = mpe::mpit::as_double(mpe::mpit::watched(g_vars[i].id)->kind, s.total);
    ok |= uint64_t{1} << i;
  }
  t_enter_ok = ok;
}

void on_leave(Call& c) noexcept {
  if (!g_on || c.depth > 0) return;
  if (c.cls == mpe::CallClass::kCommCreate && c.rc == MPI_SUCCESS && c.has(mpe::role::newcomm) && c.newcomm &&
      c.mode == mpe::Mode::kBlocking)
    mpe::mpit::comm_created(*c.newcomm);
  const uint64_t ok = t_enter_ok;
  const auto fn = static_cast<size_t>(c.fn);
  for (size_t i = 0; i < g_vars.size(); ++i) {
    if (!(ok >> i & 1)) continue;
    mpe::mpit::Sample s;
    if (!mpe::mpit::read(g_vars[i].id, comm_of(c), nullptr, &s)) continue;
    const mpe::mpit::Watched* w = mpe::mpit::watched(g_vars[i].id);
    const double now = mpe::mpit::as_double(w->kind, s.total);
    Cell& cell = g_vars[i].cells[fn];
    cell.calls.fetch_add(1, std::memory_order_relaxed);
    add_double(cell.sum, now - t_enter_value[i]);
    if (w->semantics != PvarSemantics::kDelta) raise_to(cell.max, std::max(now, t_enter_value[i]));
  }
}

void after_init() noexcept {
  const std::string names = mpe::config::env_string("MPE_TIME_PVARS", "");
  try {
    if (!mpe::mpit::start()) return;
    g_started = true;
    std::stringstream in(names);
    std::string name;
    while (std::getline(in, name, ',')) {
      if (name.empty()) continue;
      std::vector<int> ids;
      std::string why;
      if (name == "all") {
        ids = mpe::mpit::watch_all();
      } else if (name == "umq") {
        int id = -1;
        for (const char* known : mpe::mpit::kQueueLengthNames)
          if ((id = mpe::mpit::watch(known, &why)) >= 0) break;
        if (id < 0) why = "umq: this MPI library exports no unexpected-queue length";
        if (id >= 0) ids.push_back(id);
      } else if (const int id = mpe::mpit::watch(name, &why); id >= 0) {
        ids.push_back(id);
      }
      if (ids.empty())
        mpe::config::warn("libmpetime: MPE_TIME_PVARS: " + why + "; the other variables are read");
      for (const int id : ids) {
        if (std::any_of(g_vars.begin(), g_vars.end(), [&](const Var& v) { return v.id == id; })) continue;
        Var v;
        v.id = id;
        v.cells.reset(new Cell[mpe::kFnCount]);
        g_vars.push_back(std::move(v));
      }
    }
    g_on = !g_vars.empty();
  } catch (const std::bad_alloc&) {
    g_vars.clear();
    mpe::config::warn("libmpetime: out of memory while setting up MPE_TIME_PVARS; no counter is read", false);
  }
}

// This rank's cells as JSON: {"variables": [{name, class, routines: {routine: [calls, sum, max]}}]}.
std::string this_rank() {
  nlohmann::json vars = nlohmann::json::array();
  for (const Var& v : g_vars) {
    const mpe::mpit::Watched* w = mpe::mpit::watched(v.id);
    nlohmann::json routines = nlohmann::json::object();
    for (int f = 0; f < mpe::kFnCount; ++f) {
      const Cell& c = v.cells[static_cast<size_t>(f)];
      if (const uint64_t n = c.calls.load()) {
        const double max = c.max.load();
        routines[mpe::kFnInfo[f].name] = {n, c.sum.load(),
                                          std::isfinite(max) ? nlohmann::json(max) : nlohmann::json()};
      }
    }
    vars.push_back({{"name", w->name},
                    {"class", mpe::pvar_class_name(w->cls)},
                    {"semantics", mpe::pvar_semantics_name(w->semantics)},
                    {"routines", routines}});
  }
  return nlohmann::json{{"variables", vars}}.dump();
}

// The report over every rank: per variable, the routines by summed change (largest growth first).
void write_report(const std::vector<std::string>& ranks) {
  struct Row {
    uint64_t calls = 0;
    double sum = 0;
    double max = -HUGE_VAL;
    int max_rank = -1;
    nlohmann::json per_rank = nlohmann::json::array();
  };
  std::vector<std::pair<nlohmann::json, std::map<std::string, Row>>> vars;  // (header, routine -> row)
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto j = nlohmann::json::parse(ranks[r], nullptr, false);
    if (j.is_discarded()) continue;
    for (const auto& v : j["variables"]) {
      auto it =
          std::find_if(vars.begin(), vars.end(), [&](const auto& x) { return x.first["name"] == v["name"]; });
      if (it == vars.end()) {
        vars.push_back({{{"name", v["name"]}, {"class", v["class"]}, {"semantics", v["semantics"]}}, {}});
        it = vars.end() - 1;
      }
      for (const auto& [routine, cell] : v["routines"].items()) {
        Row& row = it->second[routine];
        row.calls += cell[0].get<uint64_t>();
        row.sum += cell[1].get<double>();
        if (!cell[2].is_null() && cell[2].get<double>() > row.max) {
          row.max = cell[2].get<double>();
          row.max_rank = static_cast<int>(r);
        }
        row.per_rank.push_back(
            {{"rank", r}, {"calls", cell[0]}, {"sum_of_changes", cell[1]}, {"max", cell[2]}});
      }
    }
  }
  nlohmann::json out = {{"variables", nlohmann::json::array()}};
  std::string text = "libmpetime: MPI_T variables per MPI routine (MPE_TIME_PVARS)\n";
  char line[512];
  for (auto& [head, rows] : vars) {
    std::vector<std::pair<std::string, Row*>> order;
    for (auto& [name, row] : rows) order.push_back({name, &row});
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.second->sum > b.second->sum; });
    const bool values = head["semantics"] != "delta";
    text += "\n" + head["name"].get<std::string>() + " (" + head["class"].get<std::string>() +
            "): change during the calls, summed over calls and ranks" +
            (values ? "; largest value seen" : "") + "\n";
    std::snprintf(line, sizeof line, "  %-28s %12s %18s %14s %8s\n", "Routine", "Calls", "Sum of changes",
                  values ? "Max" : "", values ? "Max rank" : "");
    text += line;
    nlohmann::json routines = nlohmann::json::array();
    for (const auto& [name, row] : order) {
      const bool has_max = std::isfinite(row->max);
      std::snprintf(line, sizeof line, "  %-28s %12llu %18.6g %14s %8s\n", name.c_str(),
                    static_cast<unsigned long long>(row->calls), row->sum,
                    has_max ? std::to_string(static_cast<long long>(row->max)).c_str() : "",
                    has_max ? std::to_string(row->max_rank).c_str() : "");
      text += line;
      routines.push_back({{"routine", name},
                          {"calls", row->calls},
                          {"sum_of_changes", row->sum},
                          {"max", has_max ? nlohmann::json(row->max) : nlohmann::json()},
                          {"max_rank", has_max ? nlohmann::json(row->max_rank) : nlohmann::json()},
                          {"ranks", row->per_rank}});
    }
    head["routines"] = routines;
    out["variables"].push_back(head);
  }
  const std::string base = mpe::config::output_path(".mpetime.pvars");
  std::ofstream(base + ".txt") << text;
  std::ofstream(base + ".json") << out.dump(1);
  mpe::config::inform("libmpetime: MPI_T variables per routine in " + base + ".txt and " + base + ".json");
}

void before_finalize() noexcept {
  if (!g_started) return;  // MPE_TIME_PVARS set on every rank or none: the same branch everywhere
  g_on = false;
  try {
    const std::string mine = this_rank();
    MPI_Comm comm;
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS) {
      auto gathered = mpe::collective::gather_to_root(mine, 0, comm);
      int rank = 0;
      PMPI_Comm_rank(comm, &rank);
      PMPI_Comm_free(&comm);
      if (!gathered.ok())
        mpe::config::warn("libmpetime: cannot gather the MPI_T variables (" + gathered.status().to_string() +
                          ")");
      else if (rank == 0)
        write_report(*gathered);
    }
  } catch (const std::exception&) {
    mpe::config::warn("libmpetime: the MPI_T variables report failed");
  }
  mpe::mpit::stop();
  g_started = false;
}

const mpe::Tool kTool = {"time-pvars", mpe::kNeedsTime, on_enter, on_leave, after_init, before_finalize};

__attribute__((constructor)) void register_time_pvars_tool() {
  const char* names = std::getenv("MPE_TIME_PVARS");
  if (!names || !*names) return;
  if (mpe_core_register_tool(&kTool) != 0)
    mpe::config::warn("libmpetime: too many tools loaded; MPE_TIME_PVARS is off");
}

}  // namespace
