// Two runs compared (mpe/diff.h): routines, call sites matched across rebuilds, wait states,
// regions, ranks and rank groups, in scaled units when the rank counts differ.
#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "mpe/diff.h"

namespace mpe::analysis::diff {

double pct_change(double a, double b) { return a != 0 ? 100.0 * (b - a) / a : NAN; }

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

namespace {

void sort_by_change(std::vector<Row>* rows) {
  std::stable_sort(rows->begin(), rows->end(),
                   [](const Row& x, const Row& y) { return std::fabs(x.delta()) > std::fabs(y.delta()); });
}

// Site keys of A and B -> the index of their row in Comparison::sites.
struct SitePairs {
  std::map<std::string, size_t> of_a, of_b;
};

void fill_per_rank_change(Row* row, const Measure* ma, const Measure* mb, uint32_t ranks) {
  double best = 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    const double va = ma && r < ma->per_rank.size() ? ma->per_rank[r] : 0;
    const double vb = mb && r < mb->per_rank.size() ? mb->per_rank[r] : 0;
    row->rank_deltas.push_back(vb - va);
    if (row->rank < 0 || std::fabs(vb - va) > std::fabs(best)) row->rank = r, best = vb - va;
  }
  row->rank_delta = best;
}

Row measure_row(const Comparison& c, const std::string& name, const Measure* ma, const Measure* mb) {
  Row row;
  row.name = name;
  if (ma)
    row.calls_a = ma->calls, row.ns_a = ma->ns * c.fa, row.bytes_a = static_cast<double>(ma->bytes) * c.fa;
  if (mb)
    row.calls_b = mb->calls, row.ns_b = mb->ns * c.fb, row.bytes_b = static_cast<double>(mb->bytes) * c.fb;
  if (!c.scaled) fill_per_rank_change(&row, ma, mb, c.a.ranks);
  return row;
}

void compare_measures(const Comparison& c, const std::map<std::string, Measure>& a,
                      const std::map<std::string, Measure>& b, std::vector<Row>* out) {
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

// A call site's row: sa of A against sb of B (either absent), named by B's location (A's when
// only A has it), with both sites' Where.
Row site_row(const Comparison& c, const Site* sa, const Site* sb) {
  const Site& named = sb ? *sb : *sa;
  Row row = measure_row(c, named.where.location, sa ? &sa->m : nullptr, sb ? &sb->m : nullptr);
  row.routine = named.routine;
  if (sa) row.site_a = sa->where;
  if (sb) row.site_b = sb->where;
  return row;
}

// Call sites: the same routine at the same file:line in the same function first; then, among
// the rest, the same routine in the same file and function, paired in line order ("moved").
void match_sites(Comparison* c, SitePairs* pairs_out) {
  std::vector<std::pair<const Site*, const Site*>> pairs;
  std::vector<std::string> key_a, key_b;
  std::set<std::string> used_b;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> rest_a, rest_b;
  auto loose = [](const Site& s) { return std::make_tuple(s.routine, s.where.file, s.where.function); };
  for (const auto& [k, s] : c->a.sites) {
    if (s.where.location != "?") ++c->known_sites_a;
    const auto it = c->b.sites.find(k);
    if (it != c->b.sites.end()) {
      pairs.emplace_back(&s, &it->second);
      key_a.push_back(k);
      key_b.push_back(k);
      used_b.insert(k);
      if (s.where.location != "?") ++c->common_sites;
    } else {
      rest_a[loose(s)].push_back(k);
    }
  }
  for (const auto& [k, s] : c->b.sites) {
    if (s.where.location != "?") ++c->known_sites_b;
    if (!used_b.count(k)) rest_b[loose(s)].push_back(k);
  }
  std::vector<std::string> moved_note(pairs.size());
  for (auto& [lk, ka] : rest_a) {
    auto ib = rest_b.find(lk);
    if (ib == rest_b.end() || std::get<2>(lk).empty()) continue;
    auto& kb = ib->second;
    auto by_line = [](const std::map<std::string, Site>& sites) {
      return [&sites](const std::string& x, const std::string& y) {
        return sites.at(x).where.line < sites.at(y).where.line;
      };
    };
    std::sort(ka.begin(), ka.end(), by_line(c->a.sites));
    std::sort(kb.begin(), kb.end(), by_line(c->b.sites));
    const size_t n = std::min(ka.size(), kb.size());
    for (size_t i = 0; i < n; ++i) {
      const Site& sa = c->a.sites.at(ka[i]);
      const Site& sb = c->b.sites.at(kb[i]);
      pairs.emplace_back(&sa, &sb);
      key_a.push_back(ka[i]);
      key_b.push_back(kb[i]);
      moved_note.push_back(sa.where.line && sb.where.line ? "moved from L" + std::to_string(sa.where.line) +
                                                                " to L" + std::to_string(sb.where.line)
                                                          : "moved");
      used_b.insert(kb[i]);
      ++c->common_sites;
      ++c->moved_sites;
    }
    ka.erase(ka.begin(), ka.begin() + static_cast<std::ptrdiff_t>(n));
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [sa, sb] = pairs[i];
    Row row = site_row(*c, sa, sb);
    row.note = moved_note[i];
    pairs_out->of_a[key_a[i]] = c->sites.size();
    pairs_out->of_b[key_b[i]] = c->sites.size();
    c->sites.push_back(std::move(row));
  }
  for (const auto& [lk, ka] : rest_a)
    for (const auto& k : ka) {
      Row row = site_row(*c, &c->a.sites.at(k), nullptr);
      row.note = "only in A";
      pairs_out->of_a[k] = c->sites.size();
      c->sites.push_back(std::move(row));
    }
  for (const auto& [k, s] : c->b.sites) {
    if (used_b.count(k)) continue;
    Row row = site_row(*c, nullptr, &s);
    row.note = "only in B";
    pairs_out->of_b[k] = c->sites.size();
    c->sites.push_back(std::move(row));
  }
}

void compare_waits(Comparison* c, const SitePairs& site_pairs) {
  std::set<std::string> patterns;
  for (const auto& [p, ns] : c->a.patterns) patterns.insert(p);
  for (const auto& [p, ns] : c->b.patterns) patterns.insert(p);
  auto value = [](const auto& map, const std::string& key) {
    const auto it = map.find(key);
    return it == map.end() ? decltype(it->second){} : it->second;
  };
  for (const auto& p : patterns) {
    Row row;
    row.name = p;
    row.pattern = p;
    row.ns_a = value(c->a.patterns, p) * c->fa;
    row.ns_b = value(c->b.patterns, p) * c->fb;
    row.calls_a = value(c->a.pattern_count, p);
    row.calls_b = value(c->b.pattern_count, p);
    c->waits.push_back(row);
  }
  sort_by_change(&c->waits);
  // Per (matched call site, pattern).
  std::map<std::pair<size_t, std::string>, Row> by;
  auto add = [&](const SiteWait& w, bool is_a) {
    const auto& pair_of = is_a ? site_pairs.of_a : site_pairs.of_b;
    const auto it = pair_of.find(w.site_key);
    if (it == pair_of.end()) return;
    Row& row = by[{it->second, w.pattern}];
    const Row& site = c->sites[it->second];
    row.name = site.name;
    row.routine = site.routine;
    row.note = site.note;
    row.site_a = site.site_a;
    row.site_b = site.site_b;
    row.pattern = w.pattern;
    (is_a ? row.ns_a : row.ns_b) += w.ns * (is_a ? c->fa : c->fb);
    (is_a ? row.calls_a : row.calls_b) += w.instances;
  };
  for (const auto& w : c->a.site_waits) add(w, true);
  for (const auto& w : c->b.site_waits) add(w, false);
  for (auto& [k, row] : by) c->site_waits.push_back(std::move(row));
  sort_by_change(&c->site_waits);
}

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

}  // namespace

Verdict Comparison::whole_run() const {
  if (a.wall_ns > 0 && b.wall_ns > 0) return {"wall time", a.wall_ns, b.wall_ns};
  return {scaled ? "MPI time per rank" : "MPI time", sum(a.mpi_per_rank) * fa, sum(b.mpi_per_rank) * fb};
}

StatusOr<Verdict> Comparison::region(const std::string& name) const {
  const Row* found = nullptr;
  size_t partial = 0;
  const Row* partial_row = nullptr;
  std::string names;
  for (const Row& r : regions) {
    if (r.name == name) found = &r;
    if (r.name.find(name) != std::string::npos) ++partial, partial_row = &r;
    names += (names.empty() ? "" : ", ") + ("\"" + r.name + "\"");
  }
  if (!found && partial == 1) found = partial_row;
  if (!found)
    return Status(
        StatusCode::kInvalidArgument,
        "no region " + std::string(partial > 1 ? "is only " : "") + "\"" + name + "\" in A or B; " +
            (regions.empty() ? "they have none (regions are MPI_Pcontrol levels and user states, in logs)"
                             : "there are " + names));
  return Verdict{"region " + found->name + (scaled ? " per rank" : ""), found->ns_a, found->ns_b};
}

Comparison compare(Run a, Run b) {
  Comparison c;
  c.a = std::move(a);
  c.b = std::move(b);
  c.scaled = c.a.ranks != c.b.ranks;
  if (c.scaled) c.fa = 1.0 / c.a.ranks, c.fb = 1.0 / c.b.ranks;
  compare_measures(c, c.a.routines, c.b.routines, &c.routines);
  SitePairs pairs;
  match_sites(&c, &pairs);  // before compare_waits, which finds sites by their index in c.sites
  if (c.a.kind == Kind::kLog && c.b.kind == Kind::kLog) {
    compare_waits(&c, pairs);
    compare_measures(c, c.a.regions, c.b.regions, &c.regions);
  }
  sort_by_change(&c.sites);
  if (c.scaled)
    c.groups = rank_groups(c.a, c.b);
  else
    c.rank_changes = rank_changes(c.a, c.b);
  return c;
}

}  // namespace mpe::analysis::diff
