// `mpe diff A B`: what changed between two runs (two libmpetime profiles or two logs): the whole
// run per rank, routines, call sites matched across rebuilds, wait states and regions, B - A.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "diff_runs.h"

namespace mpe::cli {

namespace {

using Json = nlohmann::ordered_json;  // keeps the keys in the order written
using diff::Run;

double sec(double ns) { return ns * 1e-9; }
// B - A as a percentage of A; NaN when A is 0.
double pct_change(double a, double b) { return a != 0 ? 100.0 * (b - a) / a : NAN; }
Json num(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

// min (its rank), mean, max (its rank) of per-rank values; imbalance as libmpetime's:
// (max - mean) / max, in percent.
struct Spread {
  double min = 0, mean = 0, max = 0, imbalance = 0;
  uint32_t min_rank = 0, max_rank = 0;
};
Spread spread(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.min = s.max = v[0];
  double sum = 0;
  for (uint32_t r = 0; r < v.size(); ++r) {
    if (v[r] < s.min) s.min = v[r], s.min_rank = r;
    if (v[r] > s.max) s.max = v[r], s.max_rank = r;
    sum += v[r];
  }
  s.mean = sum / static_cast<double>(v.size());
  s.imbalance = s.max > 0 ? 100.0 * (s.max - s.mean) / s.max : 0.0;
  return s;
}
double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
std::vector<double> outside_mpi(const Run& r) {
  std::vector<double> v(r.ranks);
  for (uint32_t k = 0; k < r.ranks; ++k) v[k] = std::max(0.0, r.wall_per_rank[k] - r.mpi_per_rank[k]);
  return v;
}

// One row of a compared table: a measure of A and of B (already scaled), and what it is.
struct Row {
  std::string name;  // routine, site location, pattern, region
  std::string routine;
  std::string note;  // "moved from L1 to L2", "only in A", "only in B"
  uint64_t calls_a = 0, calls_b = 0;
  double ns_a = 0, ns_b = 0;
  double bytes_a = 0, bytes_b = 0;
  double calls_as = 0, calls_bs = 0;  // calls scaled
  int64_t rank = -1;                  // the rank whose time here changed most (same rank counts)
  double rank_delta = 0;
  std::vector<double> rank_deltas;  // B - A per rank (same rank counts), ns
  std::string pattern;              // wait rows
  double delta() const { return ns_b - ns_a; }
};

void sort_by_change(std::vector<Row>* rows) {
  std::stable_sort(rows->begin(), rows->end(),
                   [](const Row& x, const Row& y) { return std::fabs(x.delta()) > std::fabs(y.delta()); });
}

// The comparison of two runs, in scaled units: with different rank counts every sum over ranks
// is divided by the run's ranks (a per-rank mean), so that A and B compare.
struct Comparison {
  Comparison(const Run& run_a, const Run& run_b) : a(run_a), b(run_b) {}
  const Run& a;
  const Run& b;
  bool scaled = false;
  double fa = 1, fb = 1;
  std::vector<Row> routines, sites, waits, site_waits, regions;
  size_t common_sites = 0, moved_sites = 0, known_sites_a = 0, known_sites_b = 0;
  std::map<std::string, size_t> pair_of_a, pair_of_b;  // site key -> index in sites
};

void fill_per_rank_change(Row* row, const diff::Measure* ma, const diff::Measure* mb, uint32_t ranks) {
  double best = 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    const double va = ma && r < ma->per_rank.size() ? ma->per_rank[r] : 0;
    const double vb = mb && r < mb->per_rank.size() ? mb->per_rank[r] : 0;
    row->rank_deltas.push_back(vb - va);
    if (row->rank < 0 || std::fabs(vb - va) > std::fabs(best)) row->rank = r, best = vb - va;
  }
  row->rank_delta = best;
}

Row measure_row(const Comparison& c, const std::string& name, const diff::Measure* ma,
                const diff::Measure* mb) {
  Row row;
  row.name = name;
  if (ma)
    row.calls_a = ma->calls, row.ns_a = ma->ns * c.fa, row.bytes_a = static_cast<double>(ma->bytes) * c.fa;
  if (mb)
    row.calls_b = mb->calls, row.ns_b = mb->ns * c.fb, row.bytes_b = static_cast<double>(mb->bytes) * c.fb;
  row.calls_as = static_cast<double>(row.calls_a) * c.fa;
  row.calls_bs = static_cast<double>(row.calls_b) * c.fb;
  if (!c.scaled) fill_per_rank_change(&row, ma, mb, c.a.ranks);
  return row;
}

void compare_measures(const Comparison& c, const std::map<std::string, diff::Measure>& a,
                      const std::map<std::string, diff::Measure>& b, std::vector<Row>* out) {
  std::set<std::string> names;
  for (const auto& [n, m] : a) names.insert(n);
  for (const auto& [n, m] : b) names.insert(n);
  for (const auto& n : names) {
    const auto ia = a.find(n);
    const auto ib = b.find(n);
    Row row = measure_row(c, n, ia == a.end() ? nullptr : &ia->second, ib == b.end() ? nullptr : &ib->second);
    if (ia == a.end()) row.note = "only in B";
    if (ib == b.end()) row.note = "only in A";
    out->push_back(std::move(row));
  }
  sort_by_change(out);
}

// Call sites: the same routine at the same file:line in the same function first; then, among
// the rest, the same routine in the same file and function, paired in line order ("moved").
void match_sites(Comparison* c) {
  std::vector<std::pair<const diff::Site*, const diff::Site*>> pairs;
  std::vector<std::string> key_a, key_b;
  std::set<std::string> used_b;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> rest_a, rest_b;
  auto loose = [](const diff::Site& s) { return std::make_tuple(s.routine, s.file, s.function); };
  for (const auto& [k, s] : c->a.sites) {
    if (s.location != "?") ++c->known_sites_a;
    const auto it = c->b.sites.find(k);
    if (it != c->b.sites.end()) {
      pairs.emplace_back(&s, &it->second);
      key_a.push_back(k);
      key_b.push_back(k);
      used_b.insert(k);
      if (s.location != "?") ++c->common_sites;
    } else {
      rest_a[loose(s)].push_back(k);
    }
  }
  for (const auto& [k, s] : c->b.sites) {
    if (s.location != "?") ++c->known_sites_b;
    if (!used_b.count(k)) rest_b[loose(s)].push_back(k);
  }
  std::vector<std::string> moved_note(pairs.size());
  for (auto& [lk, ka] : rest_a) {
    auto ib = rest_b.find(lk);
    if (ib == rest_b.end() || std::get<2>(lk).empty()) continue;
    auto& kb = ib->second;
    auto by_line = [](const std::map<std::string, diff::Site>& sites) {
      return [&sites](const std::string& x, const std::string& y) {
        return sites.at(x).line < sites.at(y).line;
      };
    };
    std::sort(ka.begin(), ka.end(), by_line(c->a.sites));
    std::sort(kb.begin(), kb.end(), by_line(c->b.sites));
    const size_t n = std::min(ka.size(), kb.size());
    for (size_t i = 0; i < n; ++i) {
      const diff::Site& sa = c->a.sites.at(ka[i]);
      const diff::Site& sb = c->b.sites.at(kb[i]);
      pairs.emplace_back(&sa, &sb);
      key_a.push_back(ka[i]);
      key_b.push_back(kb[i]);
      moved_note.push_back(sa.line && sb.line
                               ? "moved from L" + std::to_string(sa.line) + " to L" + std::to_string(sb.line)
                               : "moved");
      used_b.insert(kb[i]);
      ++c->common_sites;
      ++c->moved_sites;
    }
    ka.erase(ka.begin(), ka.begin() + static_cast<std::ptrdiff_t>(n));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [sa, sb] = pairs[i];
    Row row = measure_row(*c, sb->location, &sa->m, &sb->m);
    row.routine = sb->routine;
    row.note = moved_note[i];
    c->pair_of_a[key_a[i]] = c->sites.size();
    c->pair_of_b[key_b[i]] = c->sites.size();
    c->sites.push_back(std::move(row));
  }
  for (const auto& [lk, ka] : rest_a)
    for (const auto& k : ka) {
      const diff::Site& s = c->a.sites.at(k);
      Row row = measure_row(*c, s.location, &s.m, nullptr);
      row.routine = s.routine;
      row.note = "only in A";
      c->pair_of_a[k] = c->sites.size();
      c->sites.push_back(std::move(row));
    }
  for (const auto& [k, s] : c->b.sites) {
    if (used_b.count(k)) continue;
    Row row = measure_row(*c, s.location, nullptr, &s.m);
    row.routine = s.routine;
    row.note = "only in B";
    c->pair_of_b[k] = c->sites.size();
    c->sites.push_back(std::move(row));
  }
}

void compare_waits(Comparison* c) {
  std::set<std::string> patterns;
  for (const auto& [p, ns] : c->a.patterns) patterns.insert(p);
  for (const auto& [p, ns] : c->b.patterns) patterns.insert(p);
  for (const auto& p : patterns) {
    Row row;
    row.name = p;
    row.pattern = p;
    const auto ia = c->a.patterns.find(p);
    const auto ib = c->b.patterns.find(p);
    row.ns_a = ia == c->a.patterns.end() ? 0 : ia->second * c->fa;
    row.ns_b = ib == c->b.patterns.end() ? 0 : ib->second * c->fb;
    const auto na = c->a.pattern_count.find(p);
    const auto nb = c->b.pattern_count.find(p);
    row.calls_a = na == c->a.pattern_count.end() ? 0 : na->second;
    row.calls_b = nb == c->b.pattern_count.end() ? 0 : nb->second;
    c->waits.push_back(row);
  }
  sort_by_change(&c->waits);
  // Per (matched call site, pattern).
  std::map<std::pair<size_t, std::string>, Row> by;
  auto add = [&](const diff::SiteWait& w, bool is_a) {
    const auto& pair_of = is_a ? c->pair_of_a : c->pair_of_b;
    const auto it = pair_of.find(w.site_key);
    if (it == pair_of.end()) return;
    Row& row = by[{it->second, w.pattern}];
    const Row& site = c->sites[it->second];
    row.name = site.name;
    row.routine = site.routine;
    row.note = site.note;
    row.pattern = w.pattern;
    (is_a ? row.ns_a : row.ns_b) += w.ns * (is_a ? c->fa : c->fb);
    (is_a ? row.calls_a : row.calls_b) += w.instances;
  };
  for (const auto& w : c->a.site_waits) add(w, true);
  for (const auto& w : c->b.site_waits) add(w, false);
  for (auto& [k, row] : by) c->site_waits.push_back(std::move(row));
  sort_by_change(&c->site_waits);
}

const char* kind_name(diff::Kind k) { return k == diff::Kind::kProfile ? "libmpetime profile" : "log"; }

// The rank groups of runs of different sizes: G groups by rank fraction (the first quarter of A's
// ranks against the first quarter of B's...), mean per rank of MPI time and time outside it.
struct Group {
  uint32_t a_first, a_last, b_first, b_last;  // inclusive
  double mpi_a, mpi_b, out_a, out_b;
};
std::vector<Group> rank_groups(const Run& a, const Run& b) {
  const uint32_t g = std::min<uint32_t>({4, a.ranks, b.ranks});
  const auto oa = outside_mpi(a), ob = outside_mpi(b);
  std::vector<Group> out;
  for (uint32_t i = 0; i < g; ++i) {
    Group gr{
        a.ranks * i / g, a.ranks * (i + 1) / g - 1, b.ranks * i / g, b.ranks * (i + 1) / g - 1, 0, 0, 0, 0};
    for (uint32_t r = gr.a_first; r <= gr.a_last; ++r) gr.mpi_a += a.mpi_per_rank[r], gr.out_a += oa[r];
    for (uint32_t r = gr.b_first; r <= gr.b_last; ++r) gr.mpi_b += b.mpi_per_rank[r], gr.out_b += ob[r];
    const double na = gr.a_last - gr.a_first + 1, nb = gr.b_last - gr.b_first + 1;
    gr.mpi_a /= na, gr.out_a /= na, gr.mpi_b /= nb, gr.out_b /= nb;
    out.push_back(gr);
  }
  return out;
}

// Per rank, B - A of the time outside MPI and in MPI (same rank counts), largest growth first.
struct RankChange {
  uint32_t rank;
  double out_a, out_b, mpi_a, mpi_b;
};
std::vector<RankChange> rank_changes(const Run& a, const Run& b) {
  std::vector<RankChange> v;
  if (a.ranks != b.ranks) return v;
  const auto oa = outside_mpi(a), ob = outside_mpi(b);
  for (uint32_t r = 0; r < a.ranks; ++r) v.push_back({r, oa[r], ob[r], a.mpi_per_rank[r], b.mpi_per_rank[r]});
  std::stable_sort(v.begin(), v.end(), [](const RankChange& x, const RankChange& y) {
    return x.out_b - x.out_a > y.out_b - y.out_a;
  });
  return v;
}

Json spread_json(const Spread& s) {
  return {{"min_s", sec(s.min)}, {"min_rank", s.min_rank}, {"mean_s", sec(s.mean)},
          {"max_s", sec(s.max)}, {"max_rank", s.max_rank}, {"imbalance_pct", s.imbalance}};
}

Json rows_json(const std::vector<Row>& rows, bool with_calls, bool with_bytes) {
  Json out = Json::array();
  for (const Row& r : rows) {
    Json j = {{"name", r.name}};
    if (!r.routine.empty()) j["routine"] = r.routine;
    if (!r.pattern.empty()) j["pattern"] = r.pattern;
    if (!r.note.empty()) j["note"] = r.note;
    j["a_s"] = sec(r.ns_a);
    j["b_s"] = sec(r.ns_b);
    j["delta_s"] = sec(r.delta());
    j["delta_pct"] = num(pct_change(r.ns_a, r.ns_b));
    if (with_calls) {
      j["calls_a"] = r.calls_a;
      j["calls_b"] = r.calls_b;
    }
    if (with_bytes) {
      j["bytes_a"] = r.bytes_a;
      j["bytes_b"] = r.bytes_b;
    }
    if (r.rank >= 0) {
      j["rank_most_changed"] = r.rank;
      j["rank_delta_s"] = sec(r.rank_delta);
      Json per = Json::array();
      for (double d : r.rank_deltas) per.push_back(sec(d));
      j["per_rank_delta_s"] = std::move(per);
    }
    out.push_back(std::move(j));
  }
  return out;
}

// Which measure --fail-if-slower compares: the wall time when both runs have one, else MPI time.
struct Verdict {
  const char* what;
  double a, b;
};
Verdict verdict(const Comparison& c) {
  if (c.a.wall_ns > 0 && c.b.wall_ns > 0) return {"wall time", c.a.wall_ns, c.b.wall_ns};
  return {c.scaled ? "MPI time per rank" : "MPI time", sum(c.a.mpi_per_rank) * c.fa,
          sum(c.b.mpi_per_rank) * c.fb};
}

std::string scaled_line(const Comparison& c) {
  return "totals scaled per rank: A has " + std::to_string(c.a.ranks) + " ranks, B has " +
         std::to_string(c.b.ranks);
}
std::string unrelated_line(const Comparison& c) {
  return "no call site in common: A (" + c.a.program + ") and B (" + c.b.program +
         ") look like different programs; only the routine totals compare";
}

Json to_json(const Comparison& c) {
  const Run& a = c.a;
  const Run& b = c.b;
  Json o;
  auto run_json = [](const Run& r) {
    return Json{{"path", r.path},
                {"kind", r.kind == diff::Kind::kProfile ? "profile" : "log"},
                {"program", r.program},
                {"ranks", r.ranks}};
  };
  o["a"] = run_json(a);
  o["b"] = run_json(b);
  o["scaled"] = c.scaled;
  if (c.scaled) o["scaled_note"] = scaled_line(c);
  const double mpi_a = sum(a.mpi_per_rank) * c.fa, mpi_b = sum(b.mpi_per_rank) * c.fb;
  const double run_a = sum(a.wall_per_rank), run_b = sum(b.wall_per_rank);
  const auto oa = outside_mpi(a), ob = outside_mpi(b);
  const double out_a = sum(oa) * c.fa, out_b = sum(ob) * c.fb;
  auto abd = [](double x, double y) {
    return Json{
        {"a_s", sec(x)}, {"b_s", sec(y)}, {"delta_s", sec(y - x)}, {"delta_pct", num(pct_change(x, y))}};
  };
  Json whole = {
      {"wall", abd(a.wall_ns, b.wall_ns)},
      {"mpi", abd(mpi_a, mpi_b)},
      {"outside_mpi", abd(out_a, out_b)},
      {"mpi_share_pct",
       {{"a", run_a > 0 ? 100.0 * sum(a.mpi_per_rank) / run_a : 0.0},
        {"b", run_b > 0 ? 100.0 * sum(b.mpi_per_rank) / run_b : 0.0}}},
      {"per_rank",
       {{"mpi", {{"a", spread_json(spread(a.mpi_per_rank))}, {"b", spread_json(spread(b.mpi_per_rank))}}},
        {"outside_mpi", {{"a", spread_json(spread(oa))}, {"b", spread_json(spread(ob))}}},
        {"wall",
         {{"a", spread_json(spread(a.wall_per_rank))}, {"b", spread_json(spread(b.wall_per_rank))}}}}}};
  o["whole_run"] = std::move(whole);
  Json ranks = Json::array();
  for (const RankChange& r : rank_changes(a, b))
    ranks.push_back({{"rank", r.rank},
                     {"outside_mpi_a_s", sec(r.out_a)},
                     {"outside_mpi_b_s", sec(r.out_b)},
                     {"outside_mpi_delta_s", sec(r.out_b - r.out_a)},
                     {"mpi_a_s", sec(r.mpi_a)},
                     {"mpi_b_s", sec(r.mpi_b)},
                     {"mpi_delta_s", sec(r.mpi_b - r.mpi_a)}});
  o["ranks"] = std::move(ranks);  // by growth of the time outside MPI; empty when rank counts differ
  if (c.scaled) {
    Json groups = Json::array();
    for (const Group& g : rank_groups(a, b))
      groups.push_back({{"a_ranks", {g.a_first, g.a_last}},
                        {"b_ranks", {g.b_first, g.b_last}},
                        {"mpi_per_rank", abd(g.mpi_a, g.mpi_b)},
                        {"outside_mpi_per_rank", abd(g.out_a, g.out_b)}});
    o["rank_groups"] = std::move(groups);
  }
  o["routines"] = rows_json(c.routines, true, true);
  o["callsites_in_common"] = c.common_sites;
  o["callsites_moved"] = c.moved_sites;
  if (c.common_sites == 0 && c.known_sites_a && c.known_sites_b) o["unrelated"] = unrelated_line(c);
  o["callsites"] = rows_json(c.sites, true, true);
  if (a.kind == diff::Kind::kLog) {
    o["wait_states"] = rows_json(c.waits, true, false);
    o["wait_states_by_callsite"] = rows_json(c.site_waits, true, false);
    o["regions"] = rows_json(c.regions, true, false);
  }
  const Verdict v = verdict(c);
  o["compared_for_threshold"] = {
      {"measure", v.what}, {"a_s", sec(v.a)}, {"b_s", sec(v.b)}, {"delta_pct", num(pct_change(v.a, v.b))}};
  return o;
}

void print_rows(const char* title, const std::vector<Row>& rows, size_t top, bool calls, bool bytes,
                bool site_column, const char* unit_note) {
  std::printf("\n%s, by change in time%s", title, unit_note);
  if (rows.size() > top) std::printf(" (top %zu of %zu; --top N for more, --json for all)", top, rows.size());
  std::printf(":\n");
  if (rows.empty()) {
    std::printf("  none\n");
    return;
  }
  std::printf("  %12s %12s %13s %8s", "A (s)", "B (s)", "B-A (s)", "B-A %");
  if (calls) std::printf(" %10s %10s", "calls A", "calls B");
  if (bytes) std::printf(" %12s %12s", "bytes A", "bytes B");
  std::printf("  %s\n", site_column ? "routine  call site" : "name");
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const Row& r = rows[i];
    const double p = pct_change(r.ns_a, r.ns_b);
    char pbuf[16];
    if (std::isfinite(p))
      std::snprintf(pbuf, sizeof pbuf, "%+.1f", p);
    else
      std::snprintf(pbuf, sizeof pbuf, "new");
    std::printf("  %12.6f %12.6f %+13.6f %8s", sec(r.ns_a), sec(r.ns_b), sec(r.delta()), pbuf);
    if (calls)
      std::printf(" %10llu %10llu", static_cast<unsigned long long>(r.calls_a),
                  static_cast<unsigned long long>(r.calls_b));
    if (bytes) std::printf(" %12.0f %12.0f", r.bytes_a, r.bytes_b);
    std::printf("  %s", site_column ? (r.routine + "  " + r.name).c_str() : r.name.c_str());
    if (!r.pattern.empty() && site_column) std::printf("  [%s]", r.pattern.c_str());
    if (!r.note.empty()) std::printf("  (%s)", r.note.c_str());
    if (r.rank >= 0 && std::fabs(r.rank_delta) > 0 && std::fabs(r.delta()) > 0)
      std::printf("  most on rank %lld: %+.6f s", static_cast<long long>(r.rank), sec(r.rank_delta));
    std::printf("\n");
  }
}

void print_text(const Comparison& c, size_t top) {
  const Run& a = c.a;
  const Run& b = c.b;
  std::printf("A: %s (%s, %u ranks%s%s)\n", a.path.c_str(), kind_name(a.kind), a.ranks,
              a.program.empty() ? "" : ", ", a.program.c_str());
  std::printf("B: %s (%s, %u ranks%s%s)\n", b.path.c_str(), kind_name(b.kind), b.ranks,
              b.program.empty() ? "" : ", ", b.program.c_str());
  if (c.scaled) std::printf("%s (each sum over ranks below is a mean per rank)\n", scaled_line(c).c_str());
  const char* per = c.scaled ? "per rank" : "summed over ranks";
  const double mpi_a = sum(a.mpi_per_rank) * c.fa, mpi_b = sum(b.mpi_per_rank) * c.fb;
  const auto oa = outside_mpi(a), ob = outside_mpi(b);
  const double out_a = sum(oa) * c.fa, out_b = sum(ob) * c.fb;
  const double run_a = sum(a.wall_per_rank), run_b = sum(b.wall_per_rank);
  std::printf("\nwhole run %28s %12s %13s %8s\n", "A", "B", "B-A", "B-A %");
  auto line = [](const std::string& what, double x, double y) {
    std::printf("%-36s %12.6f %12.6f %+13.6f %+7.1f%%\n", what.c_str(), sec(x), sec(y), sec(y - x),
                pct_change(x, y));
  };
  line(a.kind == diff::Kind::kLog ? "wall time (s, the log's span)" : "wall time (s, the longest rank)",
       a.wall_ns, b.wall_ns);
  line(std::string("MPI time (s, ") + per + ")", mpi_a, mpi_b);
  line(std::string("time outside MPI (s, ") + per + ")", out_a, out_b);
  const double sa = run_a > 0 ? 100.0 * sum(a.mpi_per_rank) / run_a : 0.0;
  const double sb = run_b > 0 ? 100.0 * sum(b.mpi_per_rank) / run_b : 0.0;
  std::printf("%-36s %11.2f%% %11.2f%% %+12.2f%%\n", "MPI share of the ranks' time", sa, sb, sb - sa);
  std::printf("\nper rank (s)     %14s %8s %12s %14s %8s %12s\n", "min", "(rank)", "mean", "max", "(rank)",
              "imbalance");
  auto sline = [](const char* what, const Spread& s) {
    std::printf("%-16s %14.6f %8u %12.6f %14.6f %8u %11.2f%%\n", what, sec(s.min), s.min_rank, sec(s.mean),
                sec(s.max), s.max_rank, s.imbalance);
  };
  sline("MPI A", spread(a.mpi_per_rank));
  sline("MPI B", spread(b.mpi_per_rank));
  sline("outside MPI A", spread(oa));
  sline("outside MPI B", spread(ob));
  const auto changes = rank_changes(a, b);
  if (!changes.empty()) {
    const RankChange& r = changes.front();
    std::printf("\ntime outside MPI (the application's) grew most on rank %u: %+.6f s (A %.6f s, B %.6f s)\n",
                r.rank, sec(r.out_b - r.out_a), sec(r.out_a), sec(r.out_b));
    std::printf("%8s %16s %16s\n", "rank", "outside MPI B-A", "MPI B-A");
    for (size_t i = 0; i < changes.size() && i < std::min<size_t>(top, 5); ++i)
      std::printf("%8u %+16.6f %+16.6f\n", changes[i].rank, sec(changes[i].out_b - changes[i].out_a),
                  sec(changes[i].mpi_b - changes[i].mpi_a));
  } else {
    std::printf("\nper rank group (by rank fraction; mean per rank, s)\n%-14s %-14s %12s %12s %12s %12s\n",
                "A ranks", "B ranks", "MPI A", "MPI B", "outside A", "outside B");
    for (const Group& g : rank_groups(a, b)) {
      const std::string ra = std::to_string(g.a_first) + "-" + std::to_string(g.a_last);
      const std::string rb = std::to_string(g.b_first) + "-" + std::to_string(g.b_last);
      std::printf("%-14s %-14s %12.6f %12.6f %12.6f %12.6f\n", ra.c_str(), rb.c_str(), sec(g.mpi_a),
                  sec(g.mpi_b), sec(g.out_a), sec(g.out_b));
    }
  }
  const char* note = c.scaled ? " (per rank)" : "";
  print_rows("routines", c.routines, top, true, true, false, note);
  std::printf("\ncall sites: %zu in common", c.common_sites);
  if (c.moved_sites) std::printf(" (%zu of them moved)", c.moved_sites);
  std::printf(", %zu in A, %zu in B\n", c.known_sites_a, c.known_sites_b);
  if (c.common_sites == 0 && c.known_sites_a && c.known_sites_b)
    std::printf("%s\n", unrelated_line(c).c_str());
  if (c.known_sites_a || c.known_sites_b) print_rows("call sites", c.sites, top, true, true, true, note);
  if (a.kind == diff::Kind::kLog) {
    print_rows("wait states", c.waits, top, false, false, false, note);
    print_rows("waiting per call site and pattern", c.site_waits, top, false, false, true, note);
    if (!c.regions.empty())
      print_rows("regions (MPI_Pcontrol levels, user states)", c.regions, top, true, false, false, note);
  }
}

// "5%", "5" or "0.5%": the percentage.
bool parse_percent(std::string s, double* out) {
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0' && std::isfinite(*out) && *out >= 0;
}

}  // namespace

void add_diff_command(CLI::App& app) {
  struct Options {
    std::string a, b;
    bool json = false;
    size_t top = 10;
    std::string fail_if_slower;
    uint64_t eager_limit = 65536;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two runs (two libmpetime profiles, or two logs): what changed, where, on which ranks");
  cmd->add_option("A", opts->a,
                  "the first run: <prefix>.mpetime.json (or a per-process file), or a .mpelog / OTF2")
      ->required();
  cmd->add_option("B", opts->b, "the second run, of the same kind as A")->required();
  cmd->add_flag("--json", opts->json, "print JSON: every row, nothing left out");
  cmd->add_option("--top", opts->top, "rows shown per table (default 10)");
  cmd->add_option("--fail-if-slower", opts->fail_if_slower,
                  "exit 1 when B's wall time is more than P% above A's (e.g. 5%)");
  cmd->add_option("--eager-limit", opts->eager_limit,
                  "logs: bytes above which a blocking send may wait for its receiver (default 65536)");
  set_action(cmd, [opts]() -> Status {
    double threshold = -1;
    if (!opts->fail_if_slower.empty() && !parse_percent(opts->fail_if_slower, &threshold))
      return Status(StatusCode::kInvalidArgument, "--fail-if-slower wants a percentage, such as 5%");
    auto ka = diff::kind_of(opts->a);
    if (!ka.ok()) return ka.status();
    auto kb = diff::kind_of(opts->b);
    if (!kb.ok()) return kb.status();
    if (*ka != *kb)
      return Status(StatusCode::kInvalidArgument,
                    "A is a " + std::string(kind_name(*ka)) + " and B a " + kind_name(*kb) +
                        ": pass two libmpetime profiles (<prefix>.mpetime.json, from mpe run --time) or two "
                        "logs (.mpelog or OTF2, from mpe run --log)");
    // The two runs are read side by side, one thread each: a log's pass is the reader's and the
    // wait-state analysis's, and two of them take the time of one on two cores.
    auto load = [&](const std::string& path) -> StatusOr<Run> {
      try {
        return *ka == diff::Kind::kProfile ? diff::load_profile(path)
                                           : diff::load_log(path, opts->eager_limit);
      } catch (const std::bad_alloc&) {
        return Status::out_of_memory();
      }
    };
    StatusOr<Run> ra = Status(StatusCode::kCancelled, "");
    std::thread reader_a([&] { ra = load(opts->a); });
    StatusOr<Run> rb = load(opts->b);
    reader_a.join();
    if (!ra.ok()) return ra.status();
    if (!rb.ok()) return rb.status();
    Comparison c(*ra, *rb);
    c.scaled = ra->ranks != rb->ranks;
    if (c.scaled) c.fa = 1.0 / ra->ranks, c.fb = 1.0 / rb->ranks;
    compare_measures(c, ra->routines, rb->routines, &c.routines);
    match_sites(&c);  // before compare_waits, which finds sites by their index in c.sites
    if (ra->kind == diff::Kind::kLog) {
      compare_waits(&c);
      compare_measures(c, ra->regions, rb->regions, &c.regions);
    }
    sort_by_change(&c.sites);
    if (opts->json) {
      const std::string text = to_json(c).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      print_text(c, opts->top ? opts->top : 10);
    }
    if (threshold >= 0) {
      const Verdict v = verdict(c);
      const double p = pct_change(v.a, v.b);
      if (std::isfinite(p) && p > threshold) {
        std::fflush(stdout);
        std::fprintf(stderr,
                     "mpe diff: B is slower than A: %s %+.2f%% (%.6f s -> %.6f s), above the %g%% allowed\n",
                     v.what, p, sec(v.a), sec(v.b), threshold);
        std::exit(1);
      }
    }
    return Status();
  });
}

}  // namespace mpe::cli
