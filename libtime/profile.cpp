// Writes and reads libmpetime's per-process file, and builds the text reports from it (the JSON
// report is profile_json.cpp's).
#include "profile.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "mpe/file_io.h"
#include "profile_detail.h"

namespace mpe::tools::time {

namespace {

using detail::pct;
using detail::whole;

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

double sec(double ns) { return ns * 1e-9; }

// Reads all of s as a decimal integer.
template <typename T>
bool to_number(const std::string& s, T* out) {
  const char* end = s.data() + s.size();
  const auto [stop, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && stop == end;
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

// The one text form of CallStats in the per-process file: " calls incl excl min max sent recv
// messages".
std::string stats_fields(const CallStats& c) {
  return fmt(" %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
             c.calls, c.incl_ns, c.excl_ns, c.min_ns, c.max_ns, c.bytes_sent, c.bytes_recv, c.messages);
}

// Reads stats_fields' text; a file of a version before kMessagesVersion has no messages.
bool read_stats(std::istream& in, CallStats* c, int version) {
  if (!(in >> c->calls >> c->incl_ns >> c->excl_ns >> c->min_ns >> c->max_ns >> c->bytes_sent >>
        c->bytes_recv))
    return false;
  return version < kMessagesVersion || static_cast<bool>(in >> c->messages);
}

constexpr size_t kTopSites = 20;  // call sites in the text reports; all of them in the JSON

std::string sites_heading(size_t count, size_t top) {
  std::string s =
      "Top call sites by aggregate time (exclusive, summed over ranks; min/mean/max over the ranks "
      "that made the calls)\n";
  if (count == 0) return s + "no call sites recorded\n";
  if (top && count > top) s += fmt("%zu of %zu call sites; all of them in the JSON report\n", top, count);
  return s;
}

}  // namespace

namespace detail {

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
      a.excl.add(static_cast<double>(r.excl_ns), static_cast<uint32_t>(p.rank));
      a.bytes.add(static_cast<double>(r.bytes_sent + r.bytes_recv), static_cast<uint32_t>(p.rank));
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

std::string innermost_text(const std::vector<Frame>& frames) {
  return callsite_text(frames.empty() ? std::vector<Frame>{} : std::vector<Frame>{frames.front()});
}

}  // namespace detail

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
  s += "# name calls incl_ns excl_ns min_ns max_ns bytes_sent bytes_recv messages\n";
  for (const auto& r : p.routines) s += r.name + stats_fields(r) + "\n";
  s += fmt("callsites %zu\n", p.sites.size());
  s += "# site id routine calls incl_ns excl_ns min_ns max_ns bytes_sent bytes_recv messages frames\n";
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
    if (!(f >> r.name) || !read_stats(f, &r, version))
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
      if (!(f >> tag >> c.id >> c.routine) || !read_stats(f, &c, version) || !(f >> nframes) ||
          tag != "site" || nframes > 64)
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
  const auto hosts = detail::hosts_of(ps);
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

  using detail::Aggregate;
  auto ag = detail::aggregate(ps);
  std::stable_sort(ag.begin(), ag.end(),
                   [](const Aggregate& a, const Aggregate& b) { return a.excl.sum > b.excl.sum; });
  s += "Routines by aggregate time (exclusive, summed over ranks; min/mean/max across ranks)\n";
  s += fmt("%-28s %10s %12s %12s %7s %12s %5s %12s %12s %5s %7s\n", "Routine", "Calls", "Incl(s)", "Excl(s)",
           "%MPI", "Min(s)", "@", "Mean(s)", "Max(s)", "@", "Imb%");
  for (const auto& a : ag)
    s += fmt("%-28s %10" PRIu64 " %12.6f %12.6f %7.2f %12.6f %5u %12.6f %12.6f %5u %7.2f\n", a.name.c_str(),
             a.calls, sec(a.incl), sec(a.excl.sum), pct(whole(a.excl.sum), mpi), sec(a.excl.min),
             a.excl.min_rank, a.excl.mean() * 1e-9, sec(a.excl.max), a.excl.max_rank, a.excl.imbalance());
  s += "\n";

  std::stable_sort(ag.begin(), ag.end(),
                   [](const Aggregate& a, const Aggregate& b) { return a.sent + a.recv > b.sent + b.recv; });
  s += "Routines by bytes (sent + received, summed over ranks; min/mean/max across ranks)\n";
  s += fmt("%-28s %10s %14s %14s %14s %5s %16s %14s %5s %7s\n", "Routine", "Calls", "Sent", "Received", "Min",
           "@", "Mean", "Max", "@", "Imb%");
  for (const auto& a : ag) {
    if (a.sent + a.recv == 0) continue;
    s += fmt("%-28s %10" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %5u %16.1f %14" PRIu64
             " %5u %7.2f\n",
             a.name.c_str(), a.calls, a.sent, a.recv, whole(a.bytes.min), a.bytes.min_rank, a.bytes.mean(),
             whole(a.bytes.max), a.bytes.max_rank, a.bytes.imbalance());
  }
  const auto sites = summarize_sites(ps);
  s += "\n" + sites_heading(sites.size(), kTopSites);
  s += callsite_table(sites, kTopSites);
  return s;
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
    for (const auto& [rank, ns] : m.per_rank)
      t.per_rank.add(static_cast<double>(ns), static_cast<uint32_t>(rank));
    t.text = callsite_text(t.frames);
    t.mpi_pct = pct(t.excl_ns, mpi);
    out.push_back(std::move(t));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SiteSummary& a, const SiteSummary& b) { return a.excl_ns > b.excl_ns; });
  for (size_t i = 0; i < out.size(); ++i) out[i].id = static_cast<int>(i + 1);
  return out;
}

std::string callsite_table(const std::vector<SiteSummary>& sites, size_t top) {
  std::string s = fmt("%4s %-24s %10s %12s %7s %14s %12s %12s %12s %8s %5s  %s\n", "Site", "Routine", "Calls",
                      "Time(s)", "%MPI", "Bytes", "Min(s)", "Mean(s)", "Max(s)", "Imb%", "Ranks", "Location");
  for (size_t i = 0; i < sites.size() && (top == 0 || i < top); ++i) {
    const SiteSummary& m = sites[i];
    const Spread& r = m.per_rank;
    s += fmt("%4d %-24s %10" PRIu64 " %12.6f %7.2f %14" PRIu64 " %12.6f %12.6f %12.6f %8.2f %5u  ", m.id,
             m.routine.c_str(), m.calls, sec(m.excl_ns), m.mpi_pct, m.bytes_sent + m.bytes_recv, sec(r.min),
             r.mean() * 1e-9, sec(r.max), r.imbalance(), r.n) +
         m.text + "\n";
  }
  return s;
}

}  // namespace mpe::tools::time
