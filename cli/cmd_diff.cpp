// `mpe diff A B`: what changed between two runs (two libmpetime profiles or two logs): the whole
// run per rank, routines, call sites matched across rebuilds, wait states and regions, B - A;
// with --iterations, the runs' iterations side by side. The model and the comparison are
// analysis/'s (mpe/diff.h); this reads the runs, prints, and applies the CI threshold.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "commands.h"
#include "diff_output.h"
#include "diff_runs.h"

namespace mpe::cli {

namespace {

// "5%", "5" or "0.5%": the percentage.
bool parse_percent(std::string s, double* out) {
  if (!s.empty() && s.back() == '%') s.pop_back();
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == '\0' && std::isfinite(*out) && *out >= 0;
}

struct Options {
  std::string a, b;
  bool json = false;
  size_t top = 10;
  std::string fail_if_slower;
  std::string region;
  bool iterations = false;
  uint64_t eager_limit = 65536;
};

// Reads A and B side by side, one thread each: on two cores two logs take the time of one.
Status load_both(const Options& o, diff::Kind kind, diff::Loaded* a, diff::Loaded* b) {
  diff::LoadOptions lo;
  lo.log.eager_limit = o.eager_limit;
  lo.iterations = o.iterations;
  auto load = [&](const std::string& path) -> StatusOr<diff::Loaded> {
    try {
      if (kind == diff::Kind::kLog) return diff::load_log(path, lo);
      auto run = diff::load_profile(path);
      if (!run.ok()) return run.status();
      return diff::Loaded{std::move(*run), {}};
    } catch (const std::bad_alloc&) {
      return Status::out_of_memory();
    } catch (const std::system_error&) {  // a decoder thread without memory for its stack
      return Status::out_of_memory();
    }
  };
  StatusOr<diff::Loaded> ra = Status(StatusCode::kCancelled, "");
  std::thread reader_a([&] { ra = load(o.a); });
  StatusOr<diff::Loaded> rb = load(o.b);
  reader_a.join();
  if (!ra.ok()) return ra.status();
  if (!rb.ok()) return rb.status();
  *a = std::move(*ra);
  *b = std::move(*rb);
  return Status();
}

Status run_diff(const Options& o) {
  double threshold = -1;
  if (!o.fail_if_slower.empty() && !parse_percent(o.fail_if_slower, &threshold))
    return Status(StatusCode::kInvalidArgument, "--fail-if-slower wants a percentage, such as 5%");
  if (!o.region.empty() && threshold < 0)
    return Status(StatusCode::kInvalidArgument, "--region names what --fail-if-slower compares: give both");
  auto ka = diff::kind_of(o.a);
  if (!ka.ok()) return ka.status();
  auto kb = diff::kind_of(o.b);
  if (!kb.ok()) return kb.status();
  if (*ka != *kb)
    return Status(StatusCode::kInvalidArgument,
                  "A is a " + std::string(diff::kind_name(*ka)) + " and B a " + diff::kind_name(*kb) +
                      ": pass two libmpetime profiles (<prefix>.mpetime.json, from mpe run --time) or two "
                      "logs (.mpelog or OTF2, from mpe run --log)");
  if (*ka == diff::Kind::kProfile && (o.iterations || !o.region.empty()))
    return Status(StatusCode::kInvalidArgument,
                  std::string(o.iterations ? "--iterations" : "--region") +
                      " needs two logs (.mpelog or OTF2, from mpe run --log): a profile has no timeline");
  diff::Loaded la, lb;
  MPE_RETURN_IF_ERROR(load_both(o, *ka, &la, &lb));
  const diff::Comparison c = diff::compare(std::move(la.run), std::move(lb.run));
  // The threshold's measure first: a region that is not there is an error before any output.
  diff::Verdict v = c.whole_run();
  if (!o.region.empty()) {
    auto r = c.region(o.region);
    if (!r.ok()) return r.status();
    v = *r;
  }
  std::optional<diff::IterationComparison> ic;
  if (o.iterations) ic = diff::compare_iterations(la.iterations, lb.iterations);
  if (o.json) {
    diff::Json j = diff::to_json(c);
    j["compared_for_threshold"] = {
        {"measure", v.what},
        {"a_s", diff::sec(v.a)},
        {"b_s", diff::sec(v.b)},
        {"delta_pct", std::isfinite(diff::pct_change(v.a, v.b)) ? diff::Json(diff::pct_change(v.a, v.b))
                                                                : diff::Json(nullptr)}};
    if (ic) j["iterations"] = diff::iterations_json(*ic);
    const std::string text = j.dump(2, ' ', false, diff::Json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    diff::print_text(c, o.top ? o.top : 10);
    if (ic) diff::print_iterations_text(*ic, o.top ? o.top : 10);
  }
  if (threshold >= 0) {
    const double p = diff::pct_change(v.a, v.b);
    if (std::isfinite(p) && p > threshold) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "mpe diff: B is slower than A: %s %+.2f%% (%.6f s -> %.6f s), above the %g%% allowed\n",
                   v.what.c_str(), p, diff::sec(v.a), diff::sec(v.b), threshold);
      std::exit(1);
    }
  }
  return Status();
}

}  // namespace

void add_diff_command(CLI::App& app) {
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "Compare two runs (two libmpetime profiles, or two logs): what changed, where, on which ranks");
  cmd->add_option("A", opts->a,
                  "the first run: <prefix>.mpetime.json (or a per-process file), or a .mpelog / OTF2")
      ->required();
  cmd->add_option("B", opts->b, "the second run, of the same kind as A")->required();
  cmd->add_flag("--json", opts->json, "print JSON: every row, nothing left out");
  cmd->add_option("--top", opts->top, "rows shown per table (default 10)");
  cmd->add_flag("--iterations", opts->iterations,
                "logs: cut each run into iterations (Pcontrol markers, a user state, or the repeating "
                "collective) and show them side by side, naming those where A and B part and on which ranks");
  cmd->add_option(
      "--fail-if-slower", opts->fail_if_slower,
      "exit 1 when B is more than P% slower than A (e.g. 5%): the wall time, or the region of --region");
  cmd->add_option(
      "--region", opts->region,
      "logs: what --fail-if-slower compares instead of the wall time: a region's time, by its name "
      "(\"user state solve\", \"Pcontrol level 1\") or a part of it found once (\"solve\")");
  cmd->add_option("--eager-limit", opts->eager_limit,
                  "logs: bytes above which a blocking send may wait for its receiver (default 65536)");
  set_first_process_action(cmd, [opts]() -> Status { return run_diff(*opts); });
}

}  // namespace mpe::cli
