// The unexpected-queue report's merge over ranks and its text and JSON forms (umq_report.h).
#include "umq_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace mpe::analysis::umq {

namespace {

// The report's JSON: ordered, so its keys read in the order written.
using Json = nlohmann::ordered_json;

// Empties a Json bottom-up when leaving its scope, so that its own destructor cannot allocate.
// nlohmann 3.11's destructor moves a non-empty array's or object's children to a heap-allocated
// stack, and when that allocation fails the program terminates (nlohmann/json#4653) - here, inside
// the application's MPI_Finalize. Declare it right after the Json: it then runs first, also while
// a std::bad_alloc unwinds.
class EmptiedOnExit {
 public:
  explicit EmptiedOnExit(Json& json) : json_(json) {}
  ~EmptiedOnExit() { empty(json_); }
  EmptiedOnExit(const EmptiedOnExit&) = delete;
  EmptiedOnExit& operator=(const EmptiedOnExit&) = delete;

 private:
  // Recursion as deep as the document (4 levels here).
  static void empty(Json& json) noexcept {
    if (!json.is_structured()) return;
    for (Json& child : json) empty(child);
    json.clear();  // destroys only scalars and empty containers: no allocation
  }

  Json& json_;
};

// Appends printf-formatted text.
__attribute__((format(printf, 2, 3))) void appendf(std::string* out, const char* format, ...) {
  va_list ap, again;
  va_start(ap, format);
  va_copy(again, ap);
  char small[256];
  const int n = std::vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (n > 0 && static_cast<size_t>(n) < sizeof small) {
    out->append(small, static_cast<size_t>(n));
  } else if (n > 0) {
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out->data() + at, static_cast<size_t>(n) + 1, format, again);
    out->resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

// The line that called MPI: "file.c:line", or "module+0x1a2b" without a source line; "?" for no
// frame.
std::string location(const MergedSite& m) {
  if (m.stack.empty()) return "?";
  const Frame& f = m.stack.front();
  if (!f.file.empty()) return std::string(base_name(f.file)) + ":" + std::to_string(f.line);
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%jx", static_cast<uintmax_t>(f.offset));
  return std::string(base_name(f.module)) + offset;
}

// The line that called MPI as callsite_text() writes it: "flood.c:57 (main)".
std::string innermost_text(const MergedSite& m) {
  return callsite_text(m.stack.empty() ? std::vector<Frame>{} : std::vector<Frame>{m.stack.front()});
}

double mean_length(const MergedSite& m) {
  return m.occurrences ? static_cast<double>(m.sum) / m.occurrences : 0.0;
}

// The site's (rank, peer) counts, most often on top first.
std::vector<std::pair<std::pair<int, int>, PeerTotals>> sorted_peers(const MergedSite& m) {
  std::vector<std::pair<std::pair<int, int>, PeerTotals>> v(m.peers.begin(), m.peers.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second.times > b.second.times; });
  return v;
}

}  // namespace

void SiteMerge::add_rank(std::vector<SiteRecord>& sites, int rank) {
  for (SiteRecord& s : sites) {
    MergedSite& m = by_site_[s.mpi_function + "\n" + callsite_key(s.stack)];
    if (m.stack.empty()) {
      m.stack = std::move(s.stack);
      m.mpi_fn = s.mpi_function;
    }
    m.occurrences += s.occurrences;
    m.sum += s.sum_length;
    m.max = std::max(m.max, s.max_length);
    m.ranks.insert(rank);
    m.comms.insert(s.communicator);
    for (const PeerCount& p : s.peers) {
      PeerTotals& q = m.peers[{rank, p.peer}];
      q.times += p.times_top;
      q.max = std::max(q.max, p.max_queued);
    }
  }
}

std::vector<const MergedSite*> SiteMerge::ranked() const {
  std::vector<const MergedSite*> sites;
  for (const auto& [key, m] : by_site_) sites.push_back(&m);
  std::stable_sort(sites.begin(), sites.end(), [](const MergedSite* a, const MergedSite* b) {
    return a->occurrences != b->occurrences ? a->occurrences > b->occurrences : a->max > b->max;
  });
  return sites;
}

std::string report_text(const std::vector<const MergedSite*>& sites, const VariableInfo& variable,
                        int nranks) {
  std::string out;
  std::string* const f = &out;
  appendf(f, "libumq report: receives that met a long unexpected-message queue\n");
  appendf(f, "variable: %s (%s)   threshold: > %" PRIu64 "   ranks: %d   call sites: %zu\n\n",
          variable.name.c_str(), variable.per_communicator ? "per communicator, per peer" : "process-wide",
          variable.threshold, nranks, sites.size());
  int n = 0;
  for (const MergedSite* m : sites) {
    appendf(f, "#%d  %s at %s\n", ++n, m->mpi_fn.c_str(), innermost_text(*m).c_str());
    appendf(f, "    occurrences: %" PRIu64 "   max length: %" PRIu64 "   mean length: %.1f\n", m->occurrences,
            m->max, mean_length(*m));
    std::string ranks;
    for (int r : m->ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    appendf(f, "    ranks: %s\n", ranks.c_str());
    for (const std::string& c : m->comms) appendf(f, "    communicator: %s\n", c.c_str());
    const auto peers = sorted_peers(*m);
    if (peers.empty()) appendf(f, "    top sending peers: unknown (the variable is process-wide)\n");
    for (const auto& [k, p] : peers)
      appendf(f,
              "    top sending peer: rank %d (in the communicator) queued up to %" PRIu64
              " to rank %d, top peer %" PRIu64 " times\n",
              k.second, p.max, k.first, p.times);
    appendf(f, "    stack:\n");
    for (const Frame& fr : m->stack) appendf(f, "      %s\n", frame_text(fr).c_str());
    appendf(f, "\n");
  }
  return out;
}

std::string report_json(const std::vector<const MergedSite*>& sites, const VariableInfo& variable,
                        int nranks) {
  // Built in place under one guard: a Json made apart and then moved in would need its own.
  // Objects that hold containers get their room first: an ordered_json object grows by copying
  // its members, and a failed copy destroys the copies made so far.
  Json report = Json::object();
  const EmptiedOnExit guard(report);
  report.get_ref<Json::object_t&>().reserve(6);
  report["tool"] = "umq";
  report["variable"] = variable.name;
  report["per_communicator"] = variable.per_communicator;
  report["threshold"] = variable.threshold;
  report["ranks"] = nranks;
  Json& out = report["sites"] = Json::array();
  for (const MergedSite* m : sites) {
    Json& site = out.emplace_back(Json::object());
    site.get_ref<Json::object_t&>().reserve(10);
    site["mpi_function"] = m->mpi_fn;
    site["location"] = location(*m);
    site["site"] = callsite_text(m->stack);
    site["occurrences"] = m->occurrences;
    site["max_length"] = m->max;
    site["mean_length"] = std::round(mean_length(*m) * 1000) / 1000;  // 3 decimals
    site["ranks"] = m->ranks;
    site["communicators"] = m->comms;
    Json& peers = site["top_peers"] = Json::array();
    for (const auto& [k, p] : sorted_peers(*m)) {
      Json& peer = peers.emplace_back(Json::object());
      peer["rank"] = k.first;
      peer["peer"] = k.second;
      peer["times_top"] = p.times;
      peer["max_queued"] = p.max;
    }
    Json& stack = site["stack"] = Json::array();
    for (const Frame& fr : m->stack) {
      Json& frame = stack.emplace_back(Json::object());
      frame["function"] = fr.function;
      frame["file"] = fr.file;
      frame["line"] = fr.line;
      frame["module"] = fr.module;
      frame["offset"] = fr.offset;
    }
  }
  // Bytes that are not UTF-8 (a file name, say) become U+FFFD instead of failing the report.
  return report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace mpe::analysis::umq
