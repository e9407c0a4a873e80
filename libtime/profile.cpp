// Writes and reads libmpetime's per-process file, and builds the text and JSON reports from it.
#include "profile.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mpe/file_io.h"

namespace mpe::tools::time {

namespace {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

double sec(uint64_t ns) { return static_cast<double>(ns) * 1e-9; }
double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Reads all of s as a decimal integer.
template <typename T>
bool to_number(const std::string& s, T* out) {
  const char* end = s.data() + s.size();
  const auto [stop, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && stop == end;
}

// x rounded to `decimals` places, as the reports have always printed it.
double rounded(double x, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(x * scale) / scale;
}

// One routine across the ranks: per-rank values of one measure, reduced to min/mean/max.
struct Spread {
  uint64_t min = 0, max = 0, sum = 0;
  int min_rank = 0, max_rank = 0;
  int n = 0;
  void add(uint64_t v, int rank) {
    if (n == 0 || v < min) min = v, min_rank = rank;
    if (n == 0 || v > max) max = v, max_rank = rank;
    sum += v;
    ++n;
  }
  double mean() const { return n ? static_cast<double>(sum) / n : 0.0; }
  // Load imbalance: how far the slowest rank is above the mean, as a percentage of the max.
  double imbalance() const {
    return max ? 100.0 * (static_cast<double>(max) - mean()) / static_cast<double>(max) : 0.0;
  }
};

struct Aggregate {
  std::string name;
  uint64_t calls = 0, incl = 0, sent = 0, recv = 0;
  Spread excl;   // exclusive time per rank (ranks that never called count as 0)
  Spread bytes;  // bytes sent + received per rank
};

std::vector<Aggregate> aggregate(const std::vector<RankProfile>& ps) {
  std::map<std::string, Aggregate> by_name;
  for (const auto& p : ps)
    for (const auto& r : p.routines) by_name[r.name].name = r.name;
  for (auto& [name, a] : by_name) {
    for (const auto& p : ps) {
      const RoutineStats* found = nullptr;
      for (const auto& r : p.routines)
        if (r.name == name) found = &r;
      const RoutineStats zero;
      const RoutineStats& r = found ? *found : zero;
      a.calls += r.calls;
      a.incl += r.incl_ns;
      a.sent += r.bytes_sent;
      a.recv += r.bytes_recv;
      a.excl.add(r.excl_ns, p.rank);
      a.bytes.add(r.bytes_sent + r.bytes_recv, p.rank);
    }
  }
  std::vector<Aggregate> out;
  for (auto& [name, a] : by_name) out.push_back(a);
  return out;
}

// A frame's text field in the per-process file: tab-separated, so no tab or line break inside.
std::string one_field(std::string s) {
  for (char& c : s)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return s;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1)
    out.push_back(line.substr(start, tab - start));
  out.push_back(line.substr(start));
  return out;
}

// The line that called MPI: "halo.c:42 (exchange)"; "?" for the unknown call site.
std::string innermost_text(const std::vector<Frame>& frames) {
  return callsite_text(frames.empty() ? std::vector<Frame>{} : std::vector<Frame>{frames.front()});
}

using Json = nlohmann::ordered_json;  // keeps the keys in the order written

// The one text form of CallStats in the per-process file: " calls incl excl min max sent recv".
std::string stats_fields(const CallStats& c) {
  return fmt(" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, c.calls,
             c.incl_ns, c.excl_ns, c.min_ns, c.max_ns, c.bytes_sent, c.bytes_recv);
}

bool read_stats(std::istream& in, CallStats* c) {
  return static_cast<bool>(in >> c->calls >> c->incl_ns >> c->excl_ns >> c->min_ns >> c->max_ns >>
                           c->bytes_sent >> c->bytes_recv);
}

// The one JSON form of CallStats, for routines and call sites alike.
Json stats_json(const CallStats& c) {
  return {{"calls", c.calls},          {"incl_ns", c.incl_ns}, {"excl_ns", c.excl_ns},
          {"min_ns", c.min_ns},        {"max_ns", c.max_ns},   {"bytes_sent", c.bytes_sent},
          {"bytes_recv", c.bytes_recv}};
}
Json frames_json(const std::vector<Frame>& frames) {
  Json out = Json::array();
  for (const Frame& f : frames)
    out.push_back({{"function", f.function},
                   {"file", f.file},
                   {"line", f.line},
                   {"module", f.module},
                   {"offset", f.offset}});
  return out;
}

Json site_json(const SiteSummary& m) {
  const Frame none;
  const Frame& inner = m.frames.empty() ? none : m.frames.front();
  return {{"id", m.id},
          {"routine", m.routine},
          {"location", innermost_text(m.frames)},
          {"file", std::string(base_name(inner.file))},
          {"line", inner.line},
          {"function", inner.function},
          {"text", m.text},
          {"calls", m.calls},
          {"incl_ns", m.incl_ns},
          {"excl_ns", m.excl_ns},
          {"mpi_pct", rounded(m.mpi_pct, 4)},
          {"bytes_sent", m.bytes_sent},
          {"bytes_recv", m.bytes_recv},
          {"call_min_ns", m.call_min_ns},
          {"call_max_ns", m.call_max_ns},
          {"ranks", m.ranks},
          {"rank_min_ns", m.rank_min_ns},
          {"rank_min", m.rank_min},
          {"rank_mean_ns", rounded(m.rank_mean_ns, 1)},
          {"rank_max_ns", m.rank_max_ns},
          {"rank_max", m.rank_max},
          {"imbalance", rounded(m.imbalance, 4)},
          {"frames", frames_json(m.frames)}};
}

Json sites_json(const std::vector<SiteSummary>& sites) {
  Json out = Json::array();
  for (const SiteSummary& m : sites) out.push_back(site_json(m));
  return out;
}

// The text of a JSON document; bytes that are not UTF-8 (a command line, a host name, a file
// name) become U+FFFD instead of an exception.
std::string dump(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

constexpr size_t kTopSites = 20;  // call sites in the text reports; all of them in the JSON

std::string sites_heading(size_t count, size_t top) {
  std::string s =
      "Top call sites by aggregate time (exclusive, summed over ranks; min/mean/max over the ranks "
      "that made the calls)\n";
  if (count == 0) return s + "no call sites recorded\n";
  if (top && count > top) s += fmt("%zu of %zu call sites; all of them in the JSON report\n", top, count);
  return s;
}

std::vector<std::string> hosts_of(const std::vector<RankProfile>& ps) {
  std::set<std::string> hosts;
  for (const auto& p : ps) hosts.insert(p.host);
  return {hosts.begin(), hosts.end()};
}

}  // namespace

std::string serialize(const RankProfile& p) {
  std::string s;
  s += fmt("%s %d\n", kMagic, kCurrentVersion);
  s += fmt("rank %d\nsize %d\nthreads %d\n", p.rank, p.size, p.threads);
  s += "host " + one_line(p.host) + "\n";
  s += "command " + one_line(p.command) + "\n";
  s += "mpi " + one_line(p.mpi) + "\n";
  s += "timer " + one_line(p.timer) + "\n";
  s += fmt("run_ns %" PRIu64 "\nmpi_ns %" PRIu64 "\n", p.run_ns, p.mpi_ns);
  s += fmt("routines %zu\n", p.routines.size());
  s += "# name calls incl_ns excl_ns min_ns max_ns bytes_sent bytes_recv\n";
  for (const auto& r : p.routines) s += r.name + stats_fields(r) + "\n";
  s += fmt("callsites %zu\n", p.sites.size());
  s += "# site id routine calls incl_ns excl_ns min_ns max_ns bytes_sent bytes_recv frames\n";
  s += "# frame<TAB>line<TAB>offset<TAB>function<TAB>file<TAB>module, innermost first\n";
  for (const auto& c : p.sites) {
    s += fmt("site %" PRIu32 " ", c.id) + c.routine + stats_fields(c) + fmt(" %zu\n", c.frames.size());
    for (const Frame& f : c.frames)
      s += fmt("frame\t%d\t0x%jx\t", f.line, static_cast<uintmax_t>(f.offset)) + one_field(f.function) +
           "\t" + one_field(f.file) + "\t" + one_field(f.module) + "\n";
  }
  s += "end\n";
  return s;
}

StatusOr<RankProfile> parse(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  // Reads the next line, which must be "<key> <value>".
  auto next = [&](const char* key, std::string* value) -> Status {
    if (!std::getline(in, line))
      return Status(StatusCode::kTruncated, std::string("the file ends before its ") + key + " line");
    const std::string k = std::string(key) + " ";
    if (!line.starts_with(k)) return Status(StatusCode::kCorrupt, std::string("missing ") + key + " line");
    *value = line.substr(k.size());
    return Status();
  };
  auto number = [&](const char* key, auto* out) -> Status {
    std::string v;
    MPE_RETURN_IF_ERROR(next(key, &v));
    if (!to_number(v, out)) return Status(StatusCode::kCorrupt, "corrupt number in line: " + line);
    return Status();
  };
  std::string v;
  if (!next(kMagic, &v).ok()) return Status(StatusCode::kNotALogfile, "not a libmpetime per-process file");
  int version = 0;
  if (!to_number(v, &version)) return Status(StatusCode::kCorrupt, "bad version line");
  if (version > kCurrentVersion || version < kMinSupportedVersion)
    return Status(StatusCode::kUnsupportedVersion, "unsupported version " + v + " (this mpe reads " +
                                                       std::to_string(kMinSupportedVersion) + ".." +
                                                       std::to_string(kCurrentVersion) + ")");
  RankProfile p;
  MPE_RETURN_IF_ERROR(number("rank", &p.rank));
  MPE_RETURN_IF_ERROR(number("size", &p.size));
  MPE_RETURN_IF_ERROR(number("threads", &p.threads));
  MPE_RETURN_IF_ERROR(next("host", &p.host));
  MPE_RETURN_IF_ERROR(next("command", &p.command));
  MPE_RETURN_IF_ERROR(next("mpi", &p.mpi));
  MPE_RETURN_IF_ERROR(next("timer", &p.timer));
  MPE_RETURN_IF_ERROR(number("run_ns", &p.run_ns));
  MPE_RETURN_IF_ERROR(number("mpi_ns", &p.mpi_ns));
  unsigned long n = 0;
  MPE_RETURN_IF_ERROR(number("routines", &n));
  if (p.size < 1 || p.rank < 0 || p.rank >= p.size || n > 100000)
    return Status(StatusCode::kCorrupt, "corrupt header values");
  // The next line that is not a comment; false at the end of the text.
  auto content = [&]() {
    while (std::getline(in, line))
      if (line.empty() || line[0] != '#') return true;
    return false;
  };
  while (p.routines.size() < n) {
    if (!content()) return Status(StatusCode::kTruncated, "truncated routine table");
    std::istringstream f(line);
    RoutineStats r;
    if (!(f >> r.name) || !read_stats(f, &r))
      return Status(StatusCode::kCorrupt, "corrupt routine line: " + line);
    p.routines.push_back(r);
  }
  if (version >= 2) {
    unsigned long nsites = 0;
    if (!content()) return Status(StatusCode::kTruncated, "the file ends before its callsites line");
    if (!line.starts_with("callsites ") || !to_number(line.substr(10), &nsites) || nsites > 10000000)
      return Status(StatusCode::kCorrupt, "corrupt callsites line: " + line);
    while (p.sites.size() < nsites) {
      if (!content()) return Status(StatusCode::kTruncated, "truncated call-site table");
      std::istringstream f(line);
      std::string tag;
      SiteStats c;
      size_t nframes = 0;
      if (!(f >> tag >> c.id >> c.routine) || !read_stats(f, &c) || !(f >> nframes) || tag != "site" ||
          nframes > 64)
        return Status(StatusCode::kCorrupt, "corrupt call-site line: " + line);
      while (c.frames.size() < nframes) {
        if (!content()) return Status(StatusCode::kTruncated, "truncated call-site frames");
        const std::vector<std::string> fields = split_tabs(line);
        Frame fr;
        unsigned long long offset = 0;
        const bool hex = fields.size() == 6 && fields[2].starts_with("0x");
        if (fields[0] != "frame" || !hex || !to_number(fields[1], &fr.line))
          return Status(StatusCode::kCorrupt, "corrupt frame line: " + line);
        const std::string digits = fields[2].substr(2);
        const auto [stop, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), offset, 16);
        if (ec != std::errc() || stop != digits.data() + digits.size())
          return Status(StatusCode::kCorrupt, "corrupt frame line: " + line);
        fr.offset = static_cast<uintptr_t>(offset);
        fr.function = fields[3];
        fr.file = fields[4];
        fr.module = fields[5];
        c.frames.push_back(std::move(fr));
      }
      p.sites.push_back(std::move(c));
    }
  }
  if (!content()) return Status(StatusCode::kTruncated, "missing end line (truncated file?)");
  if (line != "end") return Status(StatusCode::kCorrupt, "missing end line");
  return p;
}

StatusOr<RankProfile> load(const std::string& path) {
  auto text = io::read_file(path);
  if (!text.ok()) return text.status();
  auto p = parse(*text);
  if (!p.ok()) return Status(p.status().code(), path + ": " + p.status().message());
  return p;
}

Status check_run(std::vector<RankProfile>* ps) {
  if (ps->empty()) return Status(StatusCode::kInvalidArgument, "no per-process files");
  std::sort(ps->begin(), ps->end(),
            [](const RankProfile& a, const RankProfile& b) { return a.rank < b.rank; });
  const int size = ps->front().size;
  for (size_t i = 0; i < ps->size(); ++i) {
    if ((*ps)[i].size != size)
      return Status(StatusCode::kInvalidArgument, "files come from runs of different sizes");
    if (i > 0 && (*ps)[i].rank == (*ps)[i - 1].rank)
      return Status(StatusCode::kInvalidArgument, "rank " + std::to_string((*ps)[i].rank) + " appears twice");
  }
  return Status();
}

std::string text_report(const std::vector<RankProfile>& ps) {
  const RankProfile& p0 = ps.front();
  const auto hosts = hosts_of(ps);
  std::string s = "mpe-tools libmpetime report\n\n";
  s += "Command : " + p0.command + "\n";
  s += fmt("Ranks   : %zu of %d\n", ps.size(), p0.size);
  std::string hl;
  for (const auto& h : hosts) hl += (hl.empty() ? "" : ", ") + h;
  s += fmt("Hosts   : %zu (", hosts.size()) + hl + ")\n";
  s += "MPI     : " + p0.mpi + "\n";
  s += "Timer   : " + p0.timer + "\n\n";

  s += "MPI time per rank (exclusive; threads summed)\n";
  s += fmt("%6s %-20s %8s %12s %12s %8s\n", "Rank", "Host", "Threads", "Run(s)", "MPI(s)", "MPI%");
  uint64_t run = 0, mpi = 0;
  for (const auto& p : ps) {
    s += fmt("%6d %-20s %8d %12.6f %12.6f %8.2f\n", p.rank, p.host.c_str(), p.threads, sec(p.run_ns),
             sec(p.mpi_ns), pct(p.mpi_ns, p.run_ns));
    run += p.run_ns;
    mpi += p.mpi_ns;
  }
  s += fmt("%6s %-20s %8s %12.6f %12.6f %8.2f\n\n", "*", "", "", sec(run), sec(mpi), pct(mpi, run));

  auto ag = aggregate(ps);
  std::stable_sort(ag.begin(), ag.end(),
                   [](const Aggregate& a, const Aggregate& b) { return a.excl.sum > b.excl.sum; });
  s += "Routines by aggregate time (exclusive, summed over ranks; min/mean/max across ranks)\n";
  s += fmt("%-28s %10s %12s %12s %7s %12s %5s %12s %12s %5s %7s\n", "Routine", "Calls", "Incl(s)", "Excl(s)",
           "%MPI", "Min(s)", "@", "Mean(s)", "Max(s)", "@", "Imb%");
  for (const auto& a : ag)
    s += fmt("%-28s %10" PRIu64 " %12.6f %12.6f %7.2f %12.6f %5d %12.6f %12.6f %5d %7.2f\n", a.name.c_str(),
             a.calls, sec(a.incl), sec(a.excl.sum), pct(a.excl.sum, mpi), sec(a.excl.min), a.excl.min_rank,
             a.excl.mean() * 1e-9, sec(a.excl.max), a.excl.max_rank, a.excl.imbalance());
  s += "\n";

  std::stable_sort(ag.begin(), ag.end(),
                   [](const Aggregate& a, const Aggregate& b) { return a.sent + a.recv > b.sent + b.recv; });
  s += "Routines by bytes (sent + received, summed over ranks; min/mean/max across ranks)\n";
  s += fmt("%-28s %10s %14s %14s %14s %5s %16s %14s %5s %7s\n", "Routine", "Calls", "Sent", "Received", "Min",
           "@", "Mean", "Max", "@", "Imb%");
  for (const auto& a : ag) {
    if (a.sent + a.recv == 0) continue;
    s += fmt("%-28s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %5d %16.1f %14" PRIu64
             " %5d %7.2f\n",
             a.name.c_str(), a.calls, a.sent, a.recv, a.bytes.min, a.bytes.min_rank, a.bytes.mean(),
             a.bytes.max, a.bytes.max_rank, a.bytes.imbalance());
  }
  const auto sites = summarize_sites(ps);
  s += "\n" + sites_heading(sites.size(), kTopSites);
  s += callsite_table(sites, kTopSites);
  return s;
}

std::string json_report(const std::vector<RankProfile>& ps) {
  const RankProfile& p0 = ps.front();
  Json per_rank = Json::array();
  for (const auto& p : ps) {
    Json routines = Json::object();
    for (const auto& r : p.routines) routines[r.name] = stats_json(r);
    Json sites = Json::array();
    for (const auto& c : p.sites) {
      Json site = {{"id", c.id}, {"routine", c.routine}, {"text", callsite_text(c.frames)}};
      site.update(stats_json(c));
      site["frames"] = frames_json(c.frames);
      sites.push_back(std::move(site));
    }
    per_rank.push_back({{"rank", p.rank},
                        {"host", p.host},
                        {"threads", p.threads},
                        {"run_ns", p.run_ns},
                        {"mpi_ns", p.mpi_ns},
                        {"mpi_pct", rounded(pct(p.mpi_ns, p.run_ns), 4)},
                        {"routines", std::move(routines)},
                        {"callsites", std::move(sites)}});
  }
  auto ag = aggregate(ps);
  std::stable_sort(ag.begin(), ag.end(),
                   [](const Aggregate& a, const Aggregate& b) { return a.excl.sum > b.excl.sum; });
  Json routines = Json::array();
  for (const auto& a : ag)
    routines.push_back({{"name", a.name},
                        {"calls", a.calls},
                        {"incl_ns", a.incl},
                        {"excl_ns", a.excl.sum},
                        {"excl_min_ns", a.excl.min},
                        {"excl_min_rank", a.excl.min_rank},
                        {"excl_mean_ns", rounded(a.excl.mean(), 1)},
                        {"excl_max_ns", a.excl.max},
                        {"excl_max_rank", a.excl.max_rank},
                        {"imbalance_pct", rounded(a.excl.imbalance(), 4)},
                        {"bytes_sent", a.sent},
                        {"bytes_recv", a.recv}});
  const Json report = {{"tool", "libmpetime"},
                       {"version", kCurrentVersion},
                       {"command", p0.command},
                       {"ranks", ps.size()},
                       {"size", p0.size},
                       {"hosts", hosts_of(ps)},
                       {"mpi", p0.mpi},
                       {"timer", p0.timer},
                       {"per_rank", std::move(per_rank)},
                       {"routines", std::move(routines)},
                       {"callsites", sites_json(summarize_sites(ps))}};
  return dump(report);
}

std::string rank_report(const RankProfile& p) {
  std::string s = fmt("mpe-tools libmpetime report for rank %d of %d\n\n", p.rank, p.size);
  s += "Command : " + p.command + "\nHost    : " + p.host + "\nMPI     : " + p.mpi +
       "\nTimer   : " + p.timer + "\n";
  s += fmt("Threads : %d\nRun     : %.6f s\nMPI     : %.6f s (%.2f%%)\n\n", p.threads, sec(p.run_ns),
           sec(p.mpi_ns), pct(p.mpi_ns, p.run_ns));
  auto rs = p.routines;
  std::stable_sort(rs.begin(), rs.end(),
                   [](const RoutineStats& a, const RoutineStats& b) { return a.excl_ns > b.excl_ns; });
  s += fmt("%-28s %10s %12s %12s %7s %12s %12s %14s %14s\n", "Routine", "Calls", "Incl(s)", "Excl(s)", "%MPI",
           "Min(s)", "Max(s)", "Sent", "Received");
  for (const auto& r : rs)
    s += fmt("%-28s %10" PRIu64 " %12.6f %12.6f %7.2f %12.9f %12.9f %14" PRIu64 " %14" PRIu64 "\n",
             r.name.c_str(), r.calls, sec(r.incl_ns), sec(r.excl_ns), pct(r.excl_ns, p.mpi_ns), sec(r.min_ns),
             sec(r.max_ns), r.bytes_sent, r.bytes_recv);
  const auto sites = summarize_sites({p});
  s += "\n" + sites_heading(sites.size(), kTopSites);
  s += callsite_table(sites, kTopSites);
  return s;
}

std::vector<SiteSummary> summarize_sites(const std::vector<RankProfile>& ps) {
  // One merged site: its summary and its exclusive time per rank that made its calls.
  struct Merged {
    SiteSummary sum;
    std::map<int, uint64_t> per_rank;
  };
  std::map<std::string, Merged> by_key;
  uint64_t mpi = 0;
  for (const auto& p : ps) {
    mpi += p.mpi_ns;
    for (const auto& c : p.sites) {
      if (c.calls == 0) continue;
      // Two sites of one rank can share a key too (two calls on one source line).
      Merged& m = by_key[c.routine + "\n" + callsite_key(c.frames)];
      SiteSummary& t = m.sum;
      if (t.calls == 0) {
        t.routine = c.routine;
        t.frames = c.frames;
        t.call_min_ns = c.min_ns;
      }
      t.calls += c.calls;
      t.incl_ns += c.incl_ns;
      t.excl_ns += c.excl_ns;
      t.bytes_sent += c.bytes_sent;
      t.bytes_recv += c.bytes_recv;
      t.call_min_ns = std::min(t.call_min_ns, c.min_ns);
      t.call_max_ns = std::max(t.call_max_ns, c.max_ns);
      m.per_rank[p.rank] += c.excl_ns;
    }
  }
  std::vector<SiteSummary> out;
  out.reserve(by_key.size());
  for (auto& [key, m] : by_key) {
    SiteSummary& t = m.sum;
    Spread spread;
    for (const auto& [rank, ns] : m.per_rank) spread.add(ns, rank);
    t.text = callsite_text(t.frames);
    t.mpi_pct = pct(t.excl_ns, mpi);
    t.ranks = spread.n;
    t.rank_min_ns = spread.min;
    t.rank_min = spread.min_rank;
    t.rank_mean_ns = spread.mean();
    t.rank_max_ns = spread.max;
    t.rank_max = spread.max_rank;
    t.imbalance = t.rank_mean_ns > 0 ? static_cast<double>(t.rank_max_ns) / t.rank_mean_ns : 1.0;
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SiteSummary& a, const SiteSummary& b) { return a.excl_ns > b.excl_ns; });
  for (size_t i = 0; i < out.size(); ++i) out[i].id = static_cast<int>(i + 1);
  return out;
}

std::string callsite_table(const std::vector<SiteSummary>& sites, size_t top) {
  std::string s =
      fmt("%4s %-24s %10s %12s %7s %14s %12s %12s %12s %8s %5s  %s\n", "Site", "Routine", "Calls", "Time(s)",
          "%MPI", "Bytes", "Min(s)", "Mean(s)", "Max(s)", "Max/Mean", "Ranks", "Location");
  for (size_t i = 0; i < sites.size() && (top == 0 || i < top); ++i) {
    const SiteSummary& m = sites[i];
    s += fmt("%4d %-24s %10" PRIu64 " %12.6f %7.2f %14" PRIu64 " %12.6f %12.6f %12.6f %8.2f %5d  ", m.id,
             m.routine.c_str(), m.calls, sec(m.excl_ns), m.mpi_pct, m.bytes_sent + m.bytes_recv,
             sec(m.rank_min_ns), m.rank_mean_ns * 1e-9, sec(m.rank_max_ns), m.imbalance, m.ranks) +
         m.text + "\n";
  }
  return s;
}

std::string callsites_json(const std::vector<SiteSummary>& sites) { return dump(sites_json(sites)); }

StatusOr<std::vector<SiteSummary>> sites_from_json_report(const std::string& text) {
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("tool", "") != "libmpetime")
    return Status(StatusCode::kNotALogfile, "not a libmpetime JSON report");
  if (!doc.contains("callsites") || !doc["callsites"].is_array())
    return Status(StatusCode::kCorrupt, "the report has no call sites (written before libmpetime had them)");
  std::vector<SiteSummary> out;
  try {
    for (const Json& j : doc["callsites"]) {
      SiteSummary m;
      m.id = j.at("id").get<int>();
      m.routine = j.at("routine").get<std::string>();
      m.text = j.at("text").get<std::string>();
      m.calls = j.at("calls").get<uint64_t>();
      m.incl_ns = j.at("incl_ns").get<uint64_t>();
      m.excl_ns = j.at("excl_ns").get<uint64_t>();
      m.mpi_pct = j.at("mpi_pct").get<double>();
      m.bytes_sent = j.at("bytes_sent").get<uint64_t>();
      m.bytes_recv = j.at("bytes_recv").get<uint64_t>();
      m.call_min_ns = j.at("call_min_ns").get<uint64_t>();
      m.call_max_ns = j.at("call_max_ns").get<uint64_t>();
      m.ranks = j.at("ranks").get<int>();
      m.rank_min_ns = j.at("rank_min_ns").get<uint64_t>();
      m.rank_min = j.at("rank_min").get<int>();
      m.rank_mean_ns = j.at("rank_mean_ns").get<double>();
      m.rank_max_ns = j.at("rank_max_ns").get<uint64_t>();
      m.rank_max = j.at("rank_max").get<int>();
      m.imbalance = j.at("imbalance").get<double>();
      for (const Json& f : j.at("frames")) m.frames.push_back(frame_from_json(f));
      out.push_back(std::move(m));
    }
  } catch (const Json::exception& e) {
    return Status(StatusCode::kCorrupt, std::string("corrupt call site in the report: ") + e.what());
  }
  return out;
}

}  // namespace mpe::tools::time
