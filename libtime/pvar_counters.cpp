// libmpetime's counters per routine (MPE_TIME_PVARS): which MPI routine is responsible for a
// variable's growth (Caliper's question). Each variable is read at the entry and the exit of every
// application-level MPI call (on the call's communicator when the variable is bound to one,
// MPI_COMM_WORLD for calls without one); the difference is added to the routine, and for values
// (levels, sizes, percentages, watermarks) the largest value seen is kept. The same figures are
// kept per call site (the core's site id of the call, for the first kMaxSites sites of the
// process). At finalize each rank symbolizes its sites, rank 0 gathers every rank's sums (in the
// tools' one gather encoding, mpe::ByteWriter) and writes <prefix>.mpetime.pvars.txt and .json
// through the one checked writer (mpe::io::write_file).
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
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "mpe/byte_codec.h"
#include "mpe/callsite.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/file_io.h"
#include "mpe/frame.h"
#include "mpe/mpit.h"
#include "mpe/symbolizer.h"

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

// One call site's figures: the routine called from there (the first one seen; a site that calls
// several routines through a function pointer keeps the first, the others count per routine only).
struct SiteCell {
  std::atomic<int> fn{-1};
  Cell cell;
};
inline constexpr uint32_t kMaxSites = 1024;  // sites with their own figures, per variable

struct Var {
  int id = -1;
  std::unique_ptr<Cell[]> cells;      // one per MPI routine (mpe::Fn)
  std::unique_ptr<SiteCell[]> sites;  // indexed by the core's call-site id, kMaxSites
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

void add_to(Cell& cell, double change, bool values, double value) {
  cell.calls.fetch_add(1, std::memory_order_relaxed);
  add_double(cell.sum, change);
  if (values) raise_to(cell.max, value);
}

// A cell in the gather encoding: calls (u64), the sum of changes (f64), whether a value was seen
// (u8) and the largest (f64).
void encode_cell(mpe::ByteWriter& out, const Cell& c) {
  const double max = c.max.load();
  out.u64(c.calls.load());
  out.f64(c.sum.load());
  out.u8(std::isfinite(max) ? 1 : 0);
  out.f64(std::isfinite(max) ? max : 0);
}

// One rank's cell as rank 0 decodes it.
struct CellValue {
  uint64_t calls = 0;
  double sum = 0;
  bool has_max = false;
  double max = 0;
};
constexpr size_t kCellBytes = 8 + 8 + 1 + 8;

bool decode_cell(mpe::ByteReader& in, CellValue* c) {
  uint8_t has_max = 0;
  if (!in.u64(&c->calls) || !in.f64(&c->sum) || !in.u8(&has_max) || !in.f64(&c->max) || has_max > 1)
    return false;
  c->has_max = has_max != 0;
  return true;
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
  if (!ok) return;
  const auto fn = static_cast<size_t>(c.fn);
  const uint32_t site = mpe::core::callsite(c);
  for (size_t i = 0; i < g_vars.size(); ++i) {
    if (!(ok >> i & 1)) continue;
    mpe::mpit::Sample s;
    if (!mpe::mpit::read(g_vars[i].id, comm_of(c), nullptr, &s)) continue;
    const mpe::mpit::Watched* w = mpe::mpit::watched(g_vars[i].id);
    const double now = mpe::mpit::as_double(w->kind, s.total);
    const bool values = w->semantics != PvarSemantics::kDelta;
    add_to(g_vars[i].cells[fn], now - t_enter_value[i], values, std::max(now, t_enter_value[i]));
    if (site < kMaxSites) {
      SiteCell& sc = g_vars[i].sites[site];
      int expected = -1;
      if (sc.fn.compare_exchange_strong(expected, static_cast<int>(fn), std::memory_order_relaxed) ||
          expected == static_cast<int>(fn))
        add_to(sc.cell, now - t_enter_value[i], values, std::max(now, t_enter_value[i]));
    }
  }
}

void after_init() noexcept {
  try {
    const std::string names = mpe::config::env_string("MPE_TIME_PVARS", "");
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
        if (ids.empty()) why = "all: this MPI library exports no performance variable";
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
        v.sites.reset(new SiteCell[kMaxSites]);
        g_vars.push_back(std::move(v));
      }
    }
    g_on = !g_vars.empty();
  } catch (const std::bad_alloc&) {
    g_vars.clear();
    mpe::config::warn("libmpetime: out of memory while setting up MPE_TIME_PVARS; no counter is read", false);
  }
}

// This rank's cells in the tools' one gather encoding (mpe::ByteWriter): the variable count, then
// per variable its name, class and semantics, its routines (count, then name and cell each) and
// its call sites (count, then key, text, routine and cell each). Sites are symbolized here,
// against this rank's own memory map, and unified across ranks by their key (mpe/frame.h).
std::string this_rank() {
  mpe::ByteWriter out;
  mpe::Symbolizer symbolizer;
  out.u32(static_cast<uint32_t>(g_vars.size()));
  for (const Var& v : g_vars) {
    const mpe::mpit::Watched* w = mpe::mpit::watched(v.id);
    out.str(w->name);
    out.str(mpe::pvar_class_name(w->cls));
    out.str(mpe::pvar_semantics_name(w->semantics));
    uint32_t routines = 0;
    for (int f = 0; f < mpe::kFnCount; ++f) routines += v.cells[static_cast<size_t>(f)].calls.load() != 0;
    out.u32(routines);
    for (int f = 0; f < mpe::kFnCount; ++f) {
      const Cell& c = v.cells[static_cast<size_t>(f)];
      if (!c.calls.load()) continue;
      out.str(mpe::kFnInfo[f].name);
      encode_cell(out, c);
    }
    std::vector<uint32_t> used;
    for (uint32_t id = 0; id < kMaxSites; ++id)
      if (v.sites[id].cell.calls.load()) used.push_back(id);
    out.u32(static_cast<uint32_t>(used.size()));
    for (const uint32_t id : used) {
      const SiteCell& sc = v.sites[id];
      const std::vector<mpe::Frame> frames = mpe::symbolize_callsite(symbolizer, id);
      out.str(mpe::callsite_key(frames));
      out.str(mpe::callsite_text(frames));
      out.str(mpe::kFnInfo[sc.fn.load()].name);
      encode_cell(out, sc.cell);
    }
  }
  return std::move(out.data());
}

// One row of the report (a routine, or a call site and its routine), summed over the ranks.
struct Row {
  std::string site;  // the call site's text; empty for a routine's row
  std::string routine;
  uint64_t calls = 0;
  double sum = 0;
  double max = -HUGE_VAL;
  int max_rank = -1;
  nlohmann::json per_rank = nlohmann::json::array();

  // Adds one rank's cell.
  void add(const CellValue& cell, int rank) {
    calls += cell.calls;
    sum += cell.sum;
    if (cell.has_max && cell.max > max) {
      max = cell.max;
      max_rank = rank;
    }
    nlohmann::json& r = per_rank.emplace_back(nlohmann::json::object());  // in place (see ReportTree)
    r["rank"] = rank;
    r["calls"] = cell.calls;
    r["sum_of_changes"] = cell.sum;
    r["max"] = cell.has_max ? nlohmann::json(cell.max) : nlohmann::json();
  }
};

struct VariableRows {
  nlohmann::json head = nlohmann::json::object();  // name, class, semantics
  std::map<std::string, Row> routines;             // by routine name
  std::map<std::string, Row> sites;                // by call-site key and routine
};

// Empties a JSON value from the leaves up. nlohmann's destructor is noexcept yet allocates (a stack
// of the children) for a non-empty array or object, so destroying one while allocations fail ends
// the process (tests/core/test_alloc_failure.py); emptied this way, each value destroyed is a
// scalar or an empty container, which allocates nothing.
void empty_from_leaves(nlohmann::json& j) noexcept {
  if (!j.is_array() && !j.is_object()) return;
  for (nlohmann::json& child : j) empty_from_leaves(child);
  j.clear();
}

// Everything the report builds, each JSON value built in place inside it (no JSON temporary, no
// JSON copy) and emptied from the leaves up when it is destroyed, after success or a failed
// allocation alike.
struct ReportTree {
  std::deque<VariableRows> vars;  // a deque: growing it never moves or copies a variable's rows
  nlohmann::json out = nlohmann::json::object();

  ~ReportTree() {
    for (VariableRows& v : vars) {
      empty_from_leaves(v.head);
      for (auto* rows : {&v.routines, &v.sites})
        for (auto& [key, row] : *rows) empty_from_leaves(row.per_rank);
    }
    empty_from_leaves(out);
  }
};

// Rows by summed change, largest growth first.
std::vector<Row*> by_growth(std::map<std::string, Row>& rows) {
  std::vector<Row*> order;
  for (auto& [key, row] : rows) order.push_back(&row);
  std::stable_sort(order.begin(), order.end(), [](const Row* a, const Row* b) { return a->sum > b->sum; });
  return order;
}

// Appends a table of rows (routines, or call sites with their routine) to the text, and to *out (a
// JSON array in the ReportTree) with each row's per-rank figures moved in.
void table(const std::vector<Row*>& rows, bool values, bool sites, std::string& text, nlohmann::json* out) {
  char line[1024];
  std::snprintf(line, sizeof line, "  %-40s %-16s %12s %18s %14s %8s\n", sites ? "Call site" : "Routine",
                sites ? "Routine" : "", "Calls", "Sum of changes", values ? "Max" : "",
                values ? "Max rank" : "");
  text += line;
  for (Row* row : rows) {
    const bool has_max = std::isfinite(row->max);
    std::snprintf(line, sizeof line, "  %-40s %-16s %12llu %18.6g %14s %8s\n",
                  (sites ? row->site : row->routine).c_str(), sites ? row->routine.c_str() : "",
                  static_cast<unsigned long long>(row->calls), row->sum,
                  has_max ? std::to_string(static_cast<long long>(row->max)).c_str() : "",
                  has_max ? std::to_string(row->max_rank).c_str() : "");
    text += line;
    nlohmann::json& j = out->emplace_back(nlohmann::json::object());
    j["routine"] = row->routine;
    j["calls"] = row->calls;
    j["sum_of_changes"] = row->sum;
    j["max"] = has_max ? nlohmann::json(row->max) : nlohmann::json();
    j["max_rank"] = has_max ? nlohmann::json(row->max_rank) : nlohmann::json();
    j["ranks"] = std::move(row->per_rank);
    if (sites) j["site"] = row->site;
  }
}

// Adds one rank's encoded cells (this_rank) to the rows of each variable; false on bytes
// this_rank did not write (what was read before stays).
bool add_rank(const std::string& bytes, int rank, std::deque<VariableRows>* vars) {
  mpe::ByteReader in(bytes.data(), bytes.size());
  uint32_t nvars = 0;
  if (!in.count(&nvars, 5 * 4)) return false;
  for (uint32_t i = 0; i < nvars; ++i) {
    std::string name, cls, semantics;
    uint32_t n = 0;
    if (!in.str(&name) || !in.str(&cls) || !in.str(&semantics) || !in.count(&n, 4 + kCellBytes)) return false;
    auto it = std::find_if(vars->begin(), vars->end(), [&](const auto& x) { return x.head["name"] == name; });
    if (it == vars->end()) {
      VariableRows& added = vars->emplace_back();  // in place (see ReportTree)
      added.head["name"] = name;
      added.head["class"] = cls;
      added.head["semantics"] = semantics;
      it = vars->end() - 1;
    }
    for (uint32_t k = 0; k < n; ++k) {
      std::string routine;
      CellValue cell;
      if (!in.str(&routine) || !decode_cell(in, &cell)) return false;
      Row& row = it->routines[routine];
      row.routine = routine;
      row.add(cell, rank);
    }
    if (!in.count(&n, 3 * 4 + kCellBytes)) return false;
    for (uint32_t k = 0; k < n; ++k) {
      std::string key, text, routine;
      CellValue cell;
      if (!in.str(&key) || !in.str(&text) || !in.str(&routine) || !decode_cell(in, &cell)) return false;
      Row& row = it->sites[key + "\t" + routine];
      row.site = text;
      row.routine = routine;
      row.add(cell, rank);
    }
  }
  return in.left() == 0;
}

// The report over every rank: per variable, the routines and the call sites by summed change
// (largest growth first). A rank whose bytes are empty (it could not build them) or unreadable
// is left out, with one line.
void write_report(const std::vector<std::string>& ranks) {
  ReportTree tree;
  std::deque<VariableRows>& vars = tree.vars;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (ranks[r].empty() || !add_rank(ranks[r], static_cast<int>(r), &vars))
      mpe::config::warn("libmpetime: rank " + std::to_string(r) +
                        "'s MPI_T counters are missing or unreadable; they are left out of the report");
  nlohmann::json& out = tree.out;
  out["variables"] = nlohmann::json::array();
  std::string text = "libmpetime: MPI_T variables per MPI routine and call site (MPE_TIME_PVARS)\n";
  for (VariableRows& var : vars) {
    const bool values = var.head["semantics"] != "delta";
    text += "\n" + var.head["name"].get<std::string>() + " (" + var.head["class"].get<std::string>() +
            "): change during the calls, summed over calls and ranks" +
            (values ? "; largest value seen" : "") + "\n";
    table(by_growth(var.routines), values, false, text, &(var.head["routines"] = nlohmann::json::array()));
    text += "\n";
    table(by_growth(var.sites), values, true, text, &(var.head["callsites"] = nlohmann::json::array()));
    out["variables"].push_back(std::move(var.head));  // on failure var.head stays in the tree
  }
  const std::string base = mpe::config::output_path(".mpetime.pvars");
  const std::string txt = base + ".txt", json = base + ".json";
  mpe::Status written = mpe::io::write_file(txt, text);
  if (written.ok()) written = mpe::io::write_file(json, out.dump(1));
  if (!written.ok()) {
    mpe::config::warn("libmpetime: the MPI_T counters were not written: " + written.message() +
                      "; check that the output directory exists, is writable and has room (MPE_LOG_DIR, "
                      "MPE_LOGFILE_PREFIX)");
    return;
  }
  mpe::config::inform("libmpetime: MPI_T variables per routine and call site in " + base + ".txt and " +
                      base + ".json");
}

// This rank's encoded cells, or empty (said on stderr) when it could not build them: it still
// joins the gather, so that no rank is left waiting in it.
std::string this_rank_or_empty() noexcept {
  try {
    return this_rank();
  } catch (const std::exception&) {
    mpe::config::warn("libmpetime: out of memory while collecting the MPI_T counters; this rank's are lost",
                      false);
    return {};
  }
}

void before_finalize() noexcept {
  if (!g_started) return;  // MPE_TIME_PVARS set on every rank or none: the same branch everywhere
  g_on = false;
  const std::string mine = this_rank_or_empty();
  MPI_Comm comm;
  if (mpe::collective::duplicate(MPI_COMM_WORLD, &comm) == MPI_SUCCESS) {
    auto gathered = mpe::collective::gather_to_root(mine, 0, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_free(&comm);
    try {
      if (!gathered.ok())
        mpe::config::warn("libmpetime: cannot gather the MPI_T variables (" + gathered.status().to_string() +
                          ")");
      else if (rank == 0)
        write_report(*gathered);
    } catch (const std::exception&) {
      mpe::config::warn("libmpetime: out of memory while writing the MPI_T variables report; it is missing");
    }
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
