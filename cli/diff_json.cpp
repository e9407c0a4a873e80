// `mpe diff --json`: every row of every table, the per-rank changes, the rank groups; and the
// iterations side by side.
#include <cmath>

#include "diff_output.h"

namespace mpe::cli::diff {

namespace {

Json num(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

Json spread_json(const Spread& s) {
  return {{"min_s", sec(s.min)}, {"min_rank", s.min_rank}, {"mean_s", sec(s.mean())},
          {"max_s", sec(s.max)}, {"max_rank", s.max_rank}, {"imbalance_pct", s.imbalance()}};
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

}  // namespace

Json to_json(const Comparison& c) {
  const Run& a = c.a;
  const Run& b = c.b;
  Json o;
  auto run_json = [](const Run& r) {
    return Json{{"path", r.path},
                {"kind", r.kind == Kind::kProfile ? "profile" : "log"},
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
  for (const RankChange& r : c.rank_changes)
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
    for (const Group& g : c.groups)
      groups.push_back({{"a_ranks", {g.a_first, g.a_last}},
                        {"b_ranks", {g.b_first, g.b_last}},
                        {"mpi_per_rank", abd(g.mpi_a, g.mpi_b)},
                        {"outside_mpi_per_rank", abd(g.out_a, g.out_b)}});
    o["rank_groups"] = std::move(groups);
  }
  o["routines"] = rows_json(c.routines, true, true);
  o["callsites_in_common"] = c.common_sites;
  o["callsites_moved"] = c.moved_sites;
  if (c.unrelated()) o["unrelated"] = unrelated_line(c);
  o["callsites"] = rows_json(c.sites, true, true);
  if (a.kind == Kind::kLog) {
    o["wait_states"] = rows_json(c.waits, true, false);
    o["wait_states_by_callsite"] = rows_json(c.site_waits, true, false);
    o["regions"] = rows_json(c.regions, true, false);
  }
  return o;
}

Json iterations_json(const IterationComparison& c) {
  auto seconds = [](const std::vector<double>& v) {
    Json out = Json::array();
    for (double x : v) out.push_back(sec(x));
    return out;
  };
  Json o = {{"a", {{"basis", c.basis_a}, {"count", c.count_a}}},
            {"b", {{"basis", c.basis_b}, {"count", c.count_b}}},
            {"noise_s", sec(c.noise_ns)},
            {"outside_mpi_noise_s", sec(c.app_noise_ns)},
            {"parting", c.parting}};
  Json rows = Json::array();
  for (const IterationRow& r : c.rows) {
    Json j = {{"iteration", r.k},
              {"a_s", sec(r.a_ns)},
              {"b_s", sec(r.b_ns)},
              {"delta_s", sec(r.delta())},
              {"delta_pct", num(pct_change(r.a_ns, r.b_ns))},
              {"parts", r.parts}};
    if (c.ranks) {
      j["ranks_parting"] = r.ranks;
      j["ranks_outside_mpi_changed"] = r.app_ranks;
      j["per_rank_delta_s"] = seconds(r.delta_ns);
      j["per_rank_outside_mpi_delta_s"] = seconds(r.app_delta_ns);
    }
    rows.push_back(std::move(j));
  }
  o["iterations"] = std::move(rows);
  return o;
}

}  // namespace mpe::cli::diff
