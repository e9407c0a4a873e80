// libumq's report: the gather encoding of call sites, the merge by site, the text and JSON files.
#include "report.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "mpe/byte_codec.h"
#include "mpe/config.h"

namespace mpe::libumq {

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

struct PeerTotals {
  uint64_t times = 0, max = 0;
};

// One call site merged over the ranks that share its MPI routine and callsite_key().
struct Merged {
  uint64_t occurrences = 0, sum = 0, max = 0;
  std::set<int> ranks;
  std::set<std::string> comms;
  std::string mpi_fn;
  std::map<std::pair<int, int>, PeerTotals> peers;  // (rank, peer) -> counts
  std::vector<Frame> stack;
};

// The gather encoding (mpe::ByteWriter): each site is its fields in a fixed order: mpi_function,
// communicator, occurrences, sum, max, the peer count and (peer, times, max) per peer, the frame
// count and (function, file, line, module, offset) per frame. Not JSON: nlohmann's parser cannot fail
// safely on a rank short of memory (see EmptiedOnExit).

// Decodes one rank's sites; false on bytes encode_sites did not write.
bool decode_sites(const std::string& bytes, std::vector<SiteRecord>* out) {
  ByteReader in(bytes.data(), bytes.size());
  while (in.left() > 0) {
    SiteRecord r;
    uint32_t npeers = 0, nframes = 0;
    if (!in.str(&r.mpi_function) || !in.str(&r.communicator) || !in.u64(&r.occurrences) ||
        !in.u64(&r.sum_length) || !in.u64(&r.max_length) || !in.count(&npeers, 20))
      return false;
    for (uint32_t i = 0; i < npeers; ++i) {
      PeerCount p;
      int64_t peer = 0;
      if (!in.i64(&peer) || !in.u64(&p.times_top) || !in.u64(&p.max_queued)) return false;
      p.peer = static_cast<int>(peer);
      r.peers.push_back(p);
    }
    if (!in.count(&nframes, 20)) return false;
    for (uint32_t i = 0; i < nframes; ++i) {
      Frame f;
      int64_t line = 0;
      uint64_t offset = 0;
      if (!in.str(&f.function) || !in.str(&f.file) || !in.i64(&line) || !in.str(&f.module) ||
          !in.u64(&offset))
        return false;
      f.line = static_cast<int>(line);
      f.offset = static_cast<uintptr_t>(offset);
      r.stack.push_back(std::move(f));
    }
    out->push_back(std::move(r));
  }
  return true;
}

// Adds one rank's sites to the merge, keyed by MPI routine and callsite_key(): the same site on
// every rank, as in every other report of the tools.
void merge_rank(std::vector<SiteRecord>& sites, int rank, std::map<std::string, Merged>* by_site) {
  for (SiteRecord& s : sites) {
    Merged& m = (*by_site)[s.mpi_function + "\n" + callsite_key(s.stack)];
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

// The line that called MPI: "file.c:line", or "module+0x1a2b" without a source line; "?" for no
// frame.
std::string location(const Merged& m) {
  if (m.stack.empty()) return "?";
  const Frame& f = m.stack.front();
  if (!f.file.empty()) return std::string(base_name(f.file)) + ":" + std::to_string(f.line);
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%jx", static_cast<uintmax_t>(f.offset));
  return std::string(base_name(f.module)) + offset;
}

// The line that called MPI as callsite_text() writes it: "flood.c:57 (main)".
std::string innermost_text(const Merged& m) {
  return callsite_text(m.stack.empty() ? std::vector<Frame>{} : std::vector<Frame>{m.stack.front()});
}

double mean_length(const Merged& m) {
  return m.occurrences ? static_cast<double>(m.sum) / m.occurrences : 0.0;
}

// The site's (rank, peer) counts, most often on top first.
std::vector<std::pair<std::pair<int, int>, PeerTotals>> sorted_peers(const Merged& m) {
  std::vector<std::pair<std::pair<int, int>, PeerTotals>> v(m.peers.begin(), m.peers.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second.times > b.second.times; });
  return v;
}

// Opens a report file for writing, or says on stderr why not.
FILE* open_report(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) mpe::config::warn("umq: cannot write " + path + ": " + std::strerror(errno));
  return f;
}

// Closes a report file, saying on stderr when a write failed.
void close_report(FILE* f, const std::string& path) {
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed)
    mpe::config::warn("umq: writing " + path + " failed: " + std::strerror(errno));
}

void write_text(const std::vector<const Merged*>& sites, const VariableInfo& variable, int nranks) {
  const std::string path = mpe::config::output_path(".umq.txt");
  FILE* f = open_report(path);
  if (!f) return;
  std::fprintf(f, "libumq report: receives that met a long unexpected-message queue\n");
  std::fprintf(f, "variable: %s (%s)   threshold: > %" PRIu64 "   ranks: %d   call sites: %zu\n\n",
               variable.name.c_str(),
               variable.per_communicator ? "per communicator, per peer" : "process-wide", variable.threshold,
               nranks, sites.size());
  int n = 0;
  for (const Merged* m : sites) {
    std::fprintf(f, "#%d  %s at %s\n", ++n, m->mpi_fn.c_str(), innermost_text(*m).c_str());
    std::fprintf(f, "    occurrences: %" PRIu64 "   max length: %" PRIu64 "   mean length: %.1f\n",
                 m->occurrences, m->max, mean_length(*m));
    std::string ranks;
    for (int r : m->ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    std::fprintf(f, "    ranks: %s\n", ranks.c_str());
    for (const std::string& c : m->comms) std::fprintf(f, "    communicator: %s\n", c.c_str());
    const auto peers = sorted_peers(*m);
    if (peers.empty()) std::fprintf(f, "    top sending peers: unknown (the variable is process-wide)\n");
    for (const auto& [k, p] : peers)
      std::fprintf(f,
                   "    top sending peer: rank %d (in the communicator) queued up to %" PRIu64
                   " to rank %d, top peer %" PRIu64 " times\n",
                   k.second, p.max, k.first, p.times);
    std::fprintf(f, "    stack:\n");
    for (const Frame& fr : m->stack) std::fprintf(f, "      %s\n", frame_text(fr).c_str());
    std::fprintf(f, "\n");
  }
  close_report(f, path);
}

void write_json(const std::vector<const Merged*>& sites, const VariableInfo& variable, int nranks) {
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
  for (const Merged* m : sites) {
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
  const std::string text = report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  const std::string path = mpe::config::output_path(".umq.json");
  FILE* f = open_report(path);
  if (!f) return;
  std::fputs(text.c_str(), f);
  close_report(f, path);
}

}  // namespace

std::string encode_sites(const std::vector<SiteRecord>& sites) {
  ByteWriter out;
  for (const SiteRecord& s : sites) {
    out.str(s.mpi_function);
    out.str(s.communicator);
    out.u64(s.occurrences);
    out.u64(s.sum_length);
    out.u64(s.max_length);
    out.u32(static_cast<uint32_t>(s.peers.size()));
    for (const PeerCount& p : s.peers) {
      out.i64(p.peer);
      out.u64(p.times_top);
      out.u64(p.max_queued);
    }
    out.u32(static_cast<uint32_t>(s.stack.size()));
    for (const Frame& f : s.stack) {
      out.str(f.function);
      out.str(f.file);
      out.i64(f.line);
      out.str(f.module);
      out.u64(f.offset);
    }
  }
  return std::move(out.data());
}

void write_report(const std::vector<std::string>& encoded, const VariableInfo& variable) {
  std::map<std::string, Merged> by_site;
  const int nranks = static_cast<int>(encoded.size());
  for (int r = 0; r < nranks; ++r) {
    std::vector<SiteRecord> sites;
    if (!decode_sites(encoded[static_cast<size_t>(r)], &sites)) {
      mpe::config::warn("umq: rank " + std::to_string(r) +
                        "'s call sites are unreadable; they are left out of the report");
      continue;
    }
    merge_rank(sites, r, &by_site);
  }
  std::vector<const Merged*> sites;
  for (const auto& [key, m] : by_site) sites.push_back(&m);
  std::stable_sort(sites.begin(), sites.end(), [](const Merged* a, const Merged* b) {
    return a->occurrences != b->occurrences ? a->occurrences > b->occurrences : a->max > b->max;
  });
  write_text(sites, variable, nranks);
  write_json(sites, variable, nranks);
}

}  // namespace mpe::libumq
