// `mpe cut LOG -o OUT`: a smaller logfile of the ranks, times, Pcontrol regions or iterations asked
// for, written in a stream (log_cut.h); every command and upshot read it as they read the run's.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "commands.h"
#include "log_cut.h"
#include "mpe/interop.h"
#include "mpe/iterations.h"
#include "mpe/log_filter.h"
#include "mpe/log_summary.h"
#include "mpe/records.h"

namespace mpe::cli {

namespace {

struct CutOptions {
  std::string file, out;
  std::string ranks;          // "0-3,8,16-63:4"
  std::string from, to;       // seconds since the start of the run, or with a unit
  int pcontrol = 0;           // with has_pcontrol
  bool has_pcontrol = false;  // --pcontrol was given
  std::string iterations;     // "A-B" or "A"
  std::string filter;         // a filter file (mpe/log_filter.h)

  bool any() const {
    return !ranks.empty() || !from.empty() || !to.empty() || has_pcontrol || !iterations.empty() ||
           !filter.empty();
  }
};

Status bad(const std::string& what) { return Status(StatusCode::kInvalidArgument, what); }

// A whole number from the start of s (at least one digit); its end in *end.
bool parse_number(const std::string& s, size_t at, int64_t* out, size_t* end) {
  size_t i = at;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && v <= (INT64_MAX - 9) / 10) v = v * 10 + (s[i++] - '0');
  if (i == at || (i < s.size() && s[i] >= '0' && s[i] <= '9')) return false;
  *out = v;
  *end = i;
  return true;
}

// The ranks "0-3,8,16-63:4" selects (":K": every K-th rank of the range from its first), by the
// filter file's one rank-list rule (format::RankSet).
StatusOr<std::vector<bool>> parse_rank_list(const std::string& text, uint32_t world) {
  StatusOr<format::RankSet> set = format::RankSet::parse(text);
  if (!set.ok()) return bad("--ranks: " + set.status().message());
  if (set->largest_named() >= world)
    return bad("--ranks: rank " + std::to_string(set->largest_named()) + " is outside the run's " +
               std::to_string(world) + " ranks (0-" + std::to_string(world - 1) + ")");
  std::vector<bool> keep(world, false);
  for (uint32_t r = 0; r < world; ++r) keep[r] = set->contains(r);
  return keep;
}

// A time since the start of the run in ns: seconds, or a number with a unit (ns, us, ms, s).
StatusOr<int64_t> parse_time(const std::string& option, const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  const std::string unit = end ? std::string(end) : "";
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  if (end == s || scale == 0 || errno != 0 || !std::isfinite(v) || std::fabs(v * scale) > 9e18)
    return bad(option + ": '" + text +
               "' is not a time (seconds since the start of the run, or a number with ns, "
               "us, ms or s)");
  return static_cast<int64_t>(std::llround(v * scale));
}

// "A-B" or "A": the first and last iteration (numbered from 0, as `mpe diff` numbers them).
bool parse_iterations(const std::string& text, int64_t* first, int64_t* last) {
  size_t at;
  if (!parse_number(text, 0, first, &at)) return false;
  *last = *first;
  if (at == text.size()) return true;
  return text[at] == '-' && parse_number(text, at + 1, last, &at) && at == text.size() && *first <= *last;
}

// Narrows the selection's windows to `spans` ([world rank]).
void restrict_windows(CutSelection* sel, std::vector<TimeSpans> spans) {
  if (sel->windows.empty()) {
    sel->windows = std::move(spans);
    return;
  }
  for (size_t r = 0; r < sel->windows.size(); ++r) sel->windows[r] = intersect(sel->windows[r], spans[r]);
}

// --from/--to: times as `mpe print` and `mpe stat` show them, that is after the causality repair,
// so each rank's window is moved back by its shift into LogFile::to_ns's times.
Status add_time_window(const CutOptions& o, uint32_t world, CutSelection* sel) {
  int64_t from = INT64_MIN, to = INT64_MAX;
  for (auto [text, name, out] : {std::tuple(&o.from, "--from", &from), std::tuple(&o.to, "--to", &to)}) {
    if (text->empty()) continue;
    auto t = parse_time(name, *text);
    if (!t.ok()) return t.status();
    *out = *t;
  }
  if (from > to) return bad("--from " + o.from + " is after --to " + o.to);
  std::vector<TimeSpans> spans(world);
  for (uint32_t r = 0; r < world; ++r) {
    const int64_t shift = r < sel->causality_ns.size() ? sel->causality_ns[r] : 0;
    const int64_t end = to == INT64_MAX ? INT64_MAX : format::saturating_add(to, 1 - shift);
    spans[r] = {{from == INT64_MIN ? INT64_MIN : format::saturating_add(from, -shift), end}};
  }
  restrict_windows(sel, std::move(spans));
  return Status();
}

// Each rank's Pcontrol markers: (time, level), as the summary pass finds them.
using Markers = std::vector<std::vector<std::pair<int64_t, int32_t>>>;

format::ChunkConsumer marker_collector(const format::LogFile& file, Markers* markers) {
  markers->assign(file.definitions().world_size, {});
  return [&file, markers](const format::Chunk& c) {
    for (size_t i = 0; i < c.count; ++i)
      if (format::kind_of(c.records[i]) == format::RecordKind::kMarker)
        (*markers)[c.entry.rank].push_back({file.to_ns(c.entry.rank, c.records[i].time), c.records[i].a});
  };
}

// --pcontrol L: on each rank, from each marker that sets level L to the next that sets another.
// The spans of each rank where the last Pcontrol level is one `wanted` takes, open from the start
// of the run when `from_start` (a filter's `only pcontrol` counts the start as level 1, as liblog
// does); false when no rank has a wanted marker.
bool pcontrol_spans(Markers markers, const std::function<bool(int)>& wanted, bool from_start,
                    std::vector<TimeSpans>* spans) {
  spans->assign(markers.size(), {});
  bool any = false;
  for (size_t r = 0; r < markers.size(); ++r) {
    std::stable_sort(markers[r].begin(), markers[r].end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    TimeSpans& s = (*spans)[r];
    if (from_start) s.push_back({INT64_MIN, INT64_MAX});
    for (const auto& [t, l] : markers[r]) {
      const bool open = !s.empty() && s.back().end == INT64_MAX;
      if (wanted(l) && !open) s.push_back({t, INT64_MAX});
      if (!wanted(l) && open) s.back().end = t;
      any = any || wanted(l);
    }
  }
  return any || from_start;
}

Status add_pcontrol_window(int level, Markers markers, CutSelection* sel) {
  std::vector<TimeSpans> spans;
  if (!pcontrol_spans(
          std::move(markers), [level](int l) { return l == level; }, false, &spans))
    return bad("--pcontrol " + std::to_string(level) + ": no rank has an MPI_Pcontrol(" +
               std::to_string(level) + ") marker");
  restrict_windows(sel, std::move(spans));
  return Status();
}

// --iterations A-B: on each rank, from the start of iteration A to the end of iteration B.
Status add_iteration_window(const format::LogFile& file, const std::string& text, CutSelection* sel) {
  int64_t first, last;
  if (!parse_iterations(text, &first, &last))
    return bad("--iterations: '" + text + "' is not an iteration or a range A-B (numbered from 0)");
  auto found = analysis::find_iterations(file);
  if (!found.ok()) return found.status();
  const analysis::Iterations& it = *found;
  if (it.count() == 0) return bad("--iterations: no iterations found in the run (no repeating phase)");
  if (static_cast<uint64_t>(last) >= it.count())
    return bad("--iterations " + text + ": the run has " + std::to_string(it.count()) + " iterations (0-" +
               std::to_string(it.count() - 1) + ", cut by " + it.basis + ")");
  std::vector<TimeSpans> spans(file.definitions().world_size);
  for (uint32_t r = 0; r < it.ranks && r < spans.size(); ++r)
    spans[r] = {{it.start_ns[static_cast<size_t>(first)][r], it.end_ns[static_cast<size_t>(last)][r]}};
  restrict_windows(sel, std::move(spans));
  return Status();
}

// --filter FILE: its ranks and Pcontrol levels narrow the selection; its routines and sites become
// the per-record test (a left-out call's state goes; its messages too with `drop messages`).
Status add_filter(const format::LogFile& file, const format::LogFilter& f, Markers markers,
                  CutSelection* sel) {
  const uint32_t world = file.definitions().world_size;
  if (f.has_rank_rule()) {
    if (sel->ranks.empty()) sel->ranks.assign(world, true);
    for (uint32_t r = 0; r < world; ++r) sel->ranks[r] = sel->ranks[r] && f.records_rank(r);
  }
  if (f.has_pcontrol_rule()) {
    std::vector<TimeSpans> spans;
    pcontrol_spans(
        std::move(markers), [&f](int l) { return f.records_at_level(l); }, f.records_at_level(1), &spans);
    restrict_windows(sel, std::move(spans));
  }
  sel->filter = f.text();
  if (!f.has_routine_rules() && !f.has_site_rules()) return Status();
  auto left_out_cat = std::make_shared<std::unordered_map<uint32_t, bool>>();
  auto left_out_site = std::make_shared<std::unordered_map<uint32_t, bool>>();
  sel->keep = [f, left_out_cat, left_out_site](const format::LogFile& log, uint32_t rank,
                                               const format::Record& r) {
    const format::RecordKind kind = format::kind_of(r);
    const bool state = kind == format::RecordKind::kState;
    if (!state && !f.drops_messages()) return true;
    auto [cat, new_cat] = left_out_cat->try_emplace(r.cat, false);
    if (new_cat) cat->second = f.excludes_routine(log.category_name(r.cat));
    if (cat->second) return false;
    if (!state || !f.has_site_rules()) return true;
    const uint32_t site = log.callsite(rank, static_cast<uint32_t>(r.b));
    if (site == 0) return true;
    auto [verdict, new_site] = left_out_site->try_emplace(site, false);
    if (new_site) verdict->second = f.excludes_site(log.callsites()[site - 1].frames);
    return !verdict->second;
  };
  return Status();
}

// What the options select. Any selection runs the summary pass first: the causality shifts (the
// output's clocks take them) and, for --pcontrol, the markers.
StatusOr<CutSelection> build_selection(const format::LogFile& file, const CutOptions& o) {
  CutSelection sel;
  const uint32_t world = file.definitions().world_size;
  if (!o.ranks.empty()) {
    auto ranks = parse_rank_list(o.ranks, world);
    if (!ranks.ok()) return ranks.status();
    sel.ranks = std::move(*ranks);
  }
  int64_t first, last;
  if (!o.iterations.empty() && !parse_iterations(o.iterations, &first, &last))
    return bad("--iterations: '" + o.iterations + "' is not an iteration or a range A-B (numbered from 0)");
  if (!o.any()) return sel;
  std::optional<format::LogFilter> filter;
  if (!o.filter.empty()) {
    StatusOr<format::LogFilter> read = format::LogFilter::read(o.filter);
    if (!read.ok()) return bad("--filter: " + read.status().message());
    filter = std::move(*read);
  }
  Markers markers, filter_markers;
  std::vector<format::ChunkConsumer> feed;
  if (o.has_pcontrol) feed.push_back(marker_collector(file, &markers));
  if (filter && filter->has_pcontrol_rule()) feed.push_back(marker_collector(file, &filter_markers));
  auto summary = format::summarize(file, feed);
  if (!summary.ok()) return Status(summary.status().code(), o.file + ": " + summary.status().message());
  sel.causality_ns = summary->causality_shift_ns;
  if (!o.from.empty() || !o.to.empty()) MPE_RETURN_IF_ERROR(add_time_window(o, world, &sel));
  if (o.has_pcontrol) MPE_RETURN_IF_ERROR(add_pcontrol_window(o.pcontrol, std::move(markers), &sel));
  if (!o.iterations.empty()) MPE_RETURN_IF_ERROR(add_iteration_window(file, o.iterations, &sel));
  if (filter) MPE_RETURN_IF_ERROR(add_filter(file, *filter, std::move(filter_markers), &sel));
  return sel;
}

// A bound of --from/--to in words: seconds unless it has a unit.
std::string bound(const std::string& text, const char* none) {
  if (text.empty()) return none;
  return text.find_first_not_of("0123456789.+-eE") == std::string::npos ? text + " s" : text;
}

// The selection in words, for the line the command ends with.
std::string describe(const CutOptions& o) {
  std::string d;
  auto add = [&](const std::string& part) { d += (d.empty() ? "" : ", ") + part; };
  add(o.ranks.empty() ? "all ranks" : "ranks " + o.ranks);
  if (!o.from.empty() || !o.to.empty()) add("time " + bound(o.from, "start") + " to " + bound(o.to, "end"));
  if (o.has_pcontrol) add("pcontrol level " + std::to_string(o.pcontrol));
  if (!o.iterations.empty()) add("iterations " + o.iterations);
  if (!o.filter.empty()) add("filter " + o.filter);
  return d;
}

Status run_cut(const CutOptions& o) {
  if (o.out.empty()) return bad("no output: give -o OUT");
  // Bad times are refused before the log is opened (the ranks need its world size).
  for (const auto& [text, name] : {std::pair(&o.from, "--from"), std::pair(&o.to, "--to")})
    if (!text->empty() && !parse_time(name, *text).ok()) return parse_time(name, *text).status();
  auto opened = interop::OpenedLog::open(o.file);
  if (!opened.ok()) return opened.status();
  const format::LogFile& file = (*opened)->file();
  auto sel = build_selection(file, o);
  if (!sel.ok()) return sel.status();
  auto counts = cut_log(file, o.file, *sel, o.out);
  if (!counts.ok()) return counts.status();
  std::string halves;
  if (counts->half_messages_dropped)
    halves = "; " + std::to_string(counts->half_messages_dropped) +
             " message ends dropped with their partner, which the cut left out";
  if (counts->states_left_out)
    halves += "; " + std::to_string(counts->states_left_out) + " states left out by the filter";
  std::printf("mpe cut: wrote %s (%llu of %llu records; %s%s)\n", o.out.c_str(),
              static_cast<unsigned long long>(counts->records_out),
              static_cast<unsigned long long>(counts->records_in), describe(o).c_str(), halves.c_str());
  return Status();
}

}  // namespace

void add_cut_command(CLI::App& app) {
  auto opts = std::make_shared<CutOptions>();
  CLI::App* cmd = app.add_subcommand("cut",
                                     "Write a smaller logfile: some ranks, a time range, Pcontrol "
                                     "regions or iterations of a run");
  cmd->add_option("file", opts->file, "the .mpelog logfile, or an OTF2 archive")->required();
  cmd->add_option("-o,--output", opts->out, "the .mpelog to write")->required();
  cmd->add_option("--ranks", opts->ranks, "only these ranks: a list such as 0-3,8,16-63:4 (:K every K-th)");
  cmd->add_option("--from", opts->from,
                  "only from this time: seconds since the start of the run as `mpe stat` and `mpe print` "
                  "show them, or with a unit (250ms, 10us, 500ns)");
  cmd->add_option("--to", opts->to, "only up to this time (as --from)");
  CLI::Option* pcontrol = cmd->add_option("--pcontrol", opts->pcontrol,
                                          "only where the rank's last MPI_Pcontrol marker set this level");
  cmd->add_option("--iterations", opts->iterations,
                  "only iterations A-B (or A) as `mpe diff --iterations` finds and numbers them (from 0)");
  cmd->add_option("--filter", opts->filter,
                  "leave out what a filter file says (the rules of `mpe run --filter`, docs/filter.md)");
  set_first_process_action(cmd, [opts, pcontrol]() -> Status {
    opts->has_pcontrol = pcontrol->count() > 0;
    return run_cut(*opts);
  });
}

}  // namespace mpe::cli
