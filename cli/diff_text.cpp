// `mpe diff`'s text: the whole run, ranks, and the top rows of each compared table; and the
// iterations side by side.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "diff_output.h"

namespace mpe::cli::diff {

const char* kind_name(Kind k) { return k == Kind::kProfile ? "libmpetime profile" : "log"; }

std::string scaled_line(const Comparison& c) {
  return "totals scaled per rank: A has " + std::to_string(c.a.ranks) + " ranks, B has " +
         std::to_string(c.b.ranks);
}

std::string unrelated_line(const Comparison& c) {
  return "no call site in common: A (" + c.a.program + ") and B (" + c.b.program +
         ") look like different programs; only the routine totals compare";
}

namespace {

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

}  // namespace

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
  line(a.kind == Kind::kLog ? "wall time (s, the log's span)" : "wall time (s, the longest rank)", a.wall_ns,
       b.wall_ns);
  line(std::string("MPI time (s, ") + per + ")", mpi_a, mpi_b);
  line(std::string("time outside MPI (s, ") + per + ")", out_a, out_b);
  const double sa = run_a > 0 ? 100.0 * sum(a.mpi_per_rank) / run_a : 0.0;
  const double sb = run_b > 0 ? 100.0 * sum(b.mpi_per_rank) / run_b : 0.0;
  std::printf("%-36s %11.2f%% %11.2f%% %+12.2f%%\n", "MPI share of the ranks' time", sa, sb, sb - sa);
  std::printf("\nper rank (s)     %14s %8s %12s %14s %8s %12s\n", "min", "(rank)", "mean", "max", "(rank)",
              "imbalance");
  auto sline = [](const char* what, const Spread& s) {
    std::printf("%-16s %14.6f %8u %12.6f %14.6f %8u %11.2f%%\n", what, sec(s.min), s.min_rank, sec(s.mean()),
                sec(s.max), s.max_rank, s.imbalance());
  };
  sline("MPI A", spread(a.mpi_per_rank));
  sline("MPI B", spread(b.mpi_per_rank));
  sline("outside MPI A", spread(oa));
  sline("outside MPI B", spread(ob));
  const auto& changes = c.rank_changes;
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
    for (const Group& g : c.groups) {
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
  if (c.unrelated()) std::printf("%s\n", unrelated_line(c).c_str());
  if (c.known_sites_a || c.known_sites_b) print_rows("call sites", c.sites, top, true, true, true, note);
  if (a.kind == Kind::kLog) {
    print_rows("wait states", c.waits, top, false, false, false, note);
    print_rows("waiting per call site and pattern", c.site_waits, top, false, false, true, note);
    if (!c.regions.empty())
      print_rows("regions (MPI_Pcontrol levels, user states)", c.regions, top, true, false, false, note);
  }
}

namespace {

// "rank 1 +0.400 s, rank 3 +0.398 s" for the first few of `ranks`.
std::string rank_list(const std::vector<uint32_t>& ranks, const std::vector<double>& delta_ns) {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < ranks.size() && i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%s%u %+.6f s", i ? ", " : "", ranks[i], sec(delta_ns[ranks[i]]));
    out += buf;
  }
  if (ranks.size() > 4) out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return out;
}

}  // namespace

void print_iterations_text(const IterationComparison& c, size_t top) {
  std::printf("\niterations (numbered from 0; A's k against B's k)\n");
  std::printf("A: %zu, cut by %s\n", c.count_a,
              c.basis_a.empty() ? "nothing (no repeating phase found)" : c.basis_a.c_str());
  std::printf("B: %zu, cut by %s\n", c.count_b,
              c.basis_b.empty() ? "nothing (no repeating phase found)" : c.basis_b.c_str());
  if (c.rows.empty()) {
    std::printf("no iterations to compare\n");
    return;
  }
  if (c.count_a != c.count_b) std::printf("the first %zu of each are compared\n", c.rows.size());
  std::printf(
      "noise (what B - A varies by without a change): %.6f s of a rank's iteration, %.6f s of its time "
      "outside MPI\n",
      sec(c.noise_ns), sec(c.app_noise_ns));
  if (c.parting.empty()) {
    std::printf("A and B do not part: every iteration is within the noise\n");
  } else {
    std::string ks;
    for (size_t i = 0; i < c.parting.size() && i < 20; ++i)
      ks += (i ? ", " : "") + std::to_string(c.parting[i]);
    if (c.parting.size() > 20) ks += ", ...";
    std::printf("A and B part in %zu of %zu iterations: %s\n", c.parting.size(), c.rows.size(), ks.c_str());
  }
  // Every iteration when they fit in --top, else the ones where A and B part.
  const bool all = c.rows.size() <= top;
  std::printf("%6s %12s %12s %13s %8s  %s\n", "iter", "A (s)", "B (s)", "B-A (s)", "B-A %",
              c.ranks ? "where they part" : "");
  size_t shown = 0;
  for (const IterationRow& r : c.rows) {
    if (!all && (!r.parts || shown >= top)) continue;
    ++shown;
    const double p = pct_change(r.a_ns, r.b_ns);
    std::printf("%6zu %12.6f %12.6f %+13.6f %+7.1f%%", r.k, sec(r.a_ns), sec(r.b_ns), sec(r.delta()),
                std::isfinite(p) ? p : 0.0);
    if (r.parts && !r.ranks.empty()) std::printf("  ranks %s", rank_list(r.ranks, r.delta_ns).c_str());
    if (r.parts && !r.app_ranks.empty())
      std::printf("; outside MPI: rank %s", rank_list(r.app_ranks, r.app_delta_ns).c_str());
    std::printf("\n");
  }
  if (!all && c.parting.size() > shown)
    std::printf("(%zu more where they part; --top N for more, --json for all)\n", c.parting.size() - shown);
  else if (!all)
    std::printf("(%zu iterations within the noise not shown; --json for all)\n", c.rows.size() - shown);
}

}  // namespace mpe::cli::diff
