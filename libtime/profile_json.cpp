// libmpetime's JSON report (<prefix>.mpetime.json), written and read back in one place, so that
// each key is spelt once per direction, side by side: the report rank 0 writes at finalize, the
// call sites `mpe report --callsites` reads from it and the per-rank profiles `mpe diff` compares.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "profile.h"
#include "profile_detail.h"

namespace mpe::tools::time {

namespace {

using Json = nlohmann::ordered_json;  // keeps the keys in the order written
using detail::pct;
using detail::rounded;
using detail::whole;

// The one JSON form of CallStats, for routines and call sites alike.
Json stats_json(const CallStats& c) {
  return {{"calls", c.calls},           {"incl_ns", c.incl_ns},  {"excl_ns", c.excl_ns},
          {"min_ns", c.min_ns},         {"max_ns", c.max_ns},    {"bytes_sent", c.bytes_sent},
          {"bytes_recv", c.bytes_recv}, {"messages", c.messages}};
}
void stats_from_json(const Json& j, CallStats* c) {
  c->calls = j.at("calls").get<uint64_t>();
  c->incl_ns = j.at("incl_ns").get<uint64_t>();
  c->excl_ns = j.at("excl_ns").get<uint64_t>();
  c->min_ns = j.at("min_ns").get<uint64_t>();
  c->max_ns = j.at("max_ns").get<uint64_t>();
  c->bytes_sent = j.at("bytes_sent").get<uint64_t>();
  c->bytes_recv = j.at("bytes_recv").get<uint64_t>();
  c->messages = j.value("messages", uint64_t{0});  // reports before kMessagesVersion have none
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
std::vector<Frame> frames_from_json(const Json& frames) {
  std::vector<Frame> out;
  for (const Json& f : frames) {
    Frame fr;
    fr.function = f.at("function").get<std::string>();
    fr.file = f.at("file").get<std::string>();
    fr.line = f.at("line").get<int>();
    fr.module = f.at("module").get<std::string>();
    fr.offset = f.at("offset").get<uintptr_t>();
    out.push_back(std::move(fr));
  }
  return out;
}

Json site_json(const SiteSummary& m) {
  const Frame none;
  const Frame& inner = m.frames.empty() ? none : m.frames.front();
  const Spread& r = m.per_rank;
  return {{"id", m.id},
          {"routine", m.routine},
          {"location", detail::innermost_text(m.frames)},
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
          {"ranks", r.n},
          {"rank_min_ns", whole(r.min)},
          {"rank_min", r.min_rank},
          {"rank_mean_ns", rounded(r.mean(), 1)},
          {"rank_max_ns", whole(r.max)},
          {"rank_max", r.max_rank},
          {"imbalance_pct", rounded(r.imbalance(), 4)},
          {"frames", frames_json(m.frames)}};
}

// A site of the report's "callsites" array. Its per-rank spread comes back from its min, max and
// rank count, and its sum over those ranks, which is its exclusive time (exact, where the mean is
// rounded): its imbalance is then mpe/spread.h's, as from the per-process files, whatever a report
// of an older version said under "imbalance" (mpiP's max / mean).
SiteSummary site_from_json(const Json& j) {
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
  Spread& r = m.per_rank;
  r.n = j.at("ranks").get<uint32_t>();
  r.min = static_cast<double>(j.at("rank_min_ns").get<uint64_t>());
  r.min_rank = j.at("rank_min").get<uint32_t>();
  r.sum = static_cast<double>(m.excl_ns);
  r.max = static_cast<double>(j.at("rank_max_ns").get<uint64_t>());
  r.max_rank = j.at("rank_max").get<uint32_t>();
  m.frames = frames_from_json(j.at("frames"));
  return m;
}

Json sites_json(const std::vector<SiteSummary>& sites) {
  Json out = Json::array();
  for (const SiteSummary& m : sites) out.push_back(site_json(m));
  return out;
}

// The text of a JSON document; bytes that are not UTF-8 (a command line, a host name, a file
// name) become U+FFFD instead of an exception.
std::string dump(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

Json rank_json(const RankProfile& p) {
  Json routines = Json::object();
  for (const auto& r : p.routines) routines[r.name] = stats_json(r);
  Json sites = Json::array();
  for (const auto& c : p.sites) {
    Json site = {{"id", c.id}, {"routine", c.routine}, {"text", callsite_text(c.frames)}};
    site.update(stats_json(c));
    site["frames"] = frames_json(c.frames);
    sites.push_back(std::move(site));
  }
  return {{"rank", p.rank},
          {"host", p.host},
          {"threads", p.threads},
          {"run_ns", p.run_ns},
          {"mpi_ns", p.mpi_ns},
          {"mpi_pct", rounded(pct(p.mpi_ns, p.run_ns), 4)},
          {"routines", std::move(routines)},
          {"callsites", std::move(sites)}};
}

// One entry of "per_rank", as rank_json wrote it; `report` is the whole report (size, command,
// MPI library, timer). The call sites are optional: a report written before version 2 has none.
RankProfile rank_from_json(const Json& pr, const Json& report) {
  RankProfile p;
  p.rank = pr.at("rank").get<int>();
  p.size = report.at("size").get<int>();
  p.command = report.value("command", "");
  p.mpi = report.value("mpi", "");
  p.timer = report.value("timer", "");
  p.host = pr.value("host", "");
  p.threads = pr.value("threads", 1);
  p.run_ns = pr.at("run_ns").get<uint64_t>();
  p.mpi_ns = pr.at("mpi_ns").get<uint64_t>();
  for (const auto& [name, j] : pr.at("routines").items()) {
    RoutineStats s;
    s.name = name;
    stats_from_json(j, &s);
    p.routines.push_back(std::move(s));
  }
  if (pr.contains("callsites"))
    for (const Json& j : pr.at("callsites")) {
      SiteStats s;
      s.id = j.value("id", 0u);
      s.routine = j.at("routine").get<std::string>();
      stats_from_json(j, &s);
      s.frames = frames_from_json(j.at("frames"));
      p.sites.push_back(std::move(s));
    }
  return p;
}

// The report's document, or not-a-logfile when the text is not one.
StatusOr<Json> parse_report(const std::string& text) {
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("tool", "") != "libmpetime")
    return Status(StatusCode::kNotALogfile, "not a libmpetime JSON report");
  return doc;
}

}  // namespace

std::string json_report(const std::vector<RankProfile>& ps) {
  const RankProfile& p0 = ps.front();
  Json per_rank = Json::array();
  for (const auto& p : ps) per_rank.push_back(rank_json(p));
  auto ag = detail::aggregate(ps);
  std::stable_sort(ag.begin(), ag.end(), [](const detail::Aggregate& a, const detail::Aggregate& b) {
    return a.excl.sum > b.excl.sum;
  });
  Json routines = Json::array();
  for (const auto& a : ag)
    routines.push_back({{"name", a.name},
                        {"calls", a.calls},
                        {"incl_ns", a.incl},
                        {"excl_ns", whole(a.excl.sum)},
                        {"excl_min_ns", whole(a.excl.min)},
                        {"excl_min_rank", a.excl.min_rank},
                        {"excl_mean_ns", rounded(a.excl.mean(), 1)},
                        {"excl_max_ns", whole(a.excl.max)},
                        {"excl_max_rank", a.excl.max_rank},
                        {"imbalance_pct", rounded(a.excl.imbalance(), 4)},
                        {"bytes_sent", a.sent},
                        {"bytes_recv", a.recv}});
  const Json report = {{"tool", "libmpetime"},
                       {"version", kCurrentVersion},
                       {"command", p0.command},
                       {"ranks", ps.size()},
                       {"size", p0.size},
                       {"hosts", detail::hosts_of(ps)},
                       {"mpi", p0.mpi},
                       {"timer", p0.timer},
                       {"per_rank", std::move(per_rank)},
                       {"routines", std::move(routines)},
                       {"callsites", sites_json(summarize_sites(ps))}};
  return dump(report);
}

std::string callsites_json(const std::vector<SiteSummary>& sites) { return dump(sites_json(sites)); }

StatusOr<JsonReport> read_json_report(const std::string& text) {
  auto doc = parse_report(text);
  if (!doc.ok()) return doc.status();
  JsonReport out;
  try {
    out.command = doc->value("command", "");
    out.version = doc->value("version", 1);
    out.size = doc->at("size").get<int>();
    if (out.size <= 0 || out.size > (1 << 24)) return Status(StatusCode::kCorrupt, "bad size in the report");
    for (const Json& pr : doc->at("per_rank")) {
      const int rank = pr.at("rank").get<int>();
      if (rank < 0 || rank >= out.size)
        return Status(StatusCode::kCorrupt, "rank " + std::to_string(rank) + " out of range");
      out.ranks.push_back(rank_from_json(pr, *doc));
    }
  } catch (const Json::exception& e) {
    return Status(StatusCode::kCorrupt, std::string("corrupt libmpetime report: ") + e.what());
  }
  return out;
}

StatusOr<std::vector<SiteSummary>> sites_from_json_report(const std::string& text) {
  auto doc = parse_report(text);
  if (!doc.ok()) return doc.status();
  if (!doc->contains("callsites") || !(*doc)["callsites"].is_array())
    return Status(StatusCode::kCorrupt, "the report has no call sites (written before libmpetime had them)");
  std::vector<SiteSummary> out;
  try {
    for (const Json& j : (*doc)["callsites"]) out.push_back(site_from_json(j));
  } catch (const Json::exception& e) {
    return Status(StatusCode::kCorrupt, std::string("corrupt call site in the report: ") + e.what());
  }
  return out;
}

}  // namespace mpe::tools::time
