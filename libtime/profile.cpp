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

namespace mpe::time {

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
  for (const auto& r : p.routines)
    s += fmt("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
             r.name.c_str(), r.calls, r.incl_ns, r.excl_ns, r.min_ns, r.max_ns, r.bytes_sent, r.bytes_recv);
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
  while (p.routines.size() < n) {
    if (!std::getline(in, line)) return Status(StatusCode::kTruncated, "truncated routine table");
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    RoutineStats r;
    if (!(f >> r.name >> r.calls >> r.incl_ns >> r.excl_ns >> r.min_ns >> r.max_ns >> r.bytes_sent >>
          r.bytes_recv))
      return Status(StatusCode::kCorrupt, "corrupt routine line: " + line);
    p.routines.push_back(r);
  }
  if (!std::getline(in, line)) return Status(StatusCode::kTruncated, "missing end line (truncated file?)");
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
  return s;
}

std::string json_report(const std::vector<RankProfile>& ps) {
  using Json = nlohmann::ordered_json;  // keeps the keys in the order written
  const RankProfile& p0 = ps.front();
  Json per_rank = Json::array();
  for (const auto& p : ps) {
    Json routines = Json::object();
    for (const auto& r : p.routines)
      routines[r.name] = {{"calls", r.calls},          {"incl_ns", r.incl_ns}, {"excl_ns", r.excl_ns},
                          {"min_ns", r.min_ns},        {"max_ns", r.max_ns},   {"bytes_sent", r.bytes_sent},
                          {"bytes_recv", r.bytes_recv}};
    per_rank.push_back({{"rank", p.rank},
                        {"host", p.host},
                        {"threads", p.threads},
                        {"run_ns", p.run_ns},
                        {"mpi_ns", p.mpi_ns},
                        {"mpi_pct", rounded(pct(p.mpi_ns, p.run_ns), 4)},
                        {"routines", std::move(routines)}});
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
                       {"routines", std::move(routines)}};
  // Bytes that are not UTF-8 (a command line, a host name) become U+FFFD instead of an exception.
  return report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
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
  return s;
}

}  // namespace mpe::time
