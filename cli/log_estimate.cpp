// `mpe estimate`'s model: what liblog writes per call (libtrace/records.cpp, core's traffic rule),
// counted from libmpetime's calls and messages per routine and call site, and the bytes that takes
// on disk, calibrated against liblog's logs of the samples (docs/estimate.md).
#include "log_estimate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "mpe/frame.h"
#include "mpe/routine.h"

namespace mpe::cli {

namespace {

using format::RoutineFamily;
using tools::time::CallStats;
using tools::time::JsonReport;
using tools::time::RankProfile;

// Bytes on disk of a record, zstd over byte planes (merge/src/chunk_codec.cpp): what varies from
// record to record is mostly the low bytes of the time deltas and durations, so a record costs
// about a + b x log2(the rank's typical nanoseconds between records). a and b fitted to liblog's
// logs of the samples (docs/estimate.md), for states and for the other kinds; at least kMinBytes.
constexpr double kStateBase = -0.876, kStatePerBit = 0.221;
constexpr double kOtherBase = -1.239, kOtherPerBit = 0.318;
// At least kMinBytes: the clock's jitter alone varies the low bytes of every record. Measured on
// the 2 M-record poller (tests/estimate), whose calls are ~50 ns apart: 0.73 to 1.45 bytes a
// record over runs of the same program before format version 8 (the jitter differing); since its
// sparse planes, 0.31 to 0.39 on an idle machine (2026-12-07) and up to 1.2 on a busy one. The
// floor is near the geometric middle of that range, so that neither end is off by more than 2.5x.
constexpr double kMinBytes = 0.65;
// Per chunk: its header (128 B) and its index entry (104 B).
constexpr double kChunkBytes = 128 + 104;
// Per file: header and footer, and the definitions chunk with the MPI categories (measured).
constexpr double kFileBytes = 64 + 64 + 7020;
// Per rank in the definitions: its meta (host, pid, clock corrections, threads, communicators).
constexpr double kRankDefBytes = 40;
// Per call site of a rank in the definitions: its frames' names, compressed with the others.
constexpr double kSiteDefBytes = 2;
// OTF2 (MPE_LOG_FORMAT=otf2): bytes per record (a state is an Enter and a Leave event, each with
// its timestamp), per rank (its local definitions and files) and per archive (global definitions,
// anchor), fitted to the samples' archives.
constexpr std::array<double, kEstKinds> kOtf2Bytes = {28.0, 8.0, 8.0, 10.0, 6.0, 8.0};
constexpr double kOtf2RankBytes = 500;
constexpr double kOtf2FileBytes = 1500;

constexpr size_t kind(EstKind k) { return static_cast<size_t>(k); }

// Whether a window synchronisation writes a completion record (libtrace/rma.cpp's rule).
bool completes_rma(const std::string& name) {
  static const char* const kNames[] = {"MPI_Win_fence", "MPI_Win_unlock",    "MPI_Win_unlock_all",
                                       "MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_complete"};
  for (const char* n : kNames)
    if (name == n || name == std::string(n) + "_c") return true;
  return false;
}

// A nonblocking receive post: Irecv, Imrecv, Isendrecv(_replace). Its post and done records
// depend on the rank's share of posts that were real (not MPI_PROC_NULL).
bool posts_receive(const format::RoutineInfo& r) {
  return r.nonblocking() && (r.family == RoutineFamily::kRecv || r.family == RoutineFamily::kSendrecv);
}

// What a rank's nonblocking receives posted, shared out over their calls.
struct RankShares {
  double post_ratio = 1;       // of a nonblocking receive call: its share that posted a request
  double completion_recv = 0;  // without message counts: receives per completion call
};

// The records that calls `s` of routine `name` make, by what liblog writes for each call.
KindCounts call_records(const std::string& name, const CallStats& s, bool exact, const RankShares& shares) {
  const format::RoutineInfo r = format::routine_by_name(name);
  const double calls = static_cast<double>(s.calls);
  KindCounts k;
  k[EstKind::kState] = calls;
  switch (r.family) {
    case RoutineFamily::kSend: {
      if (r.mode == format::RoutineMode::kPersistentInit) break;
      const double sends = exact ? static_cast<double>(s.messages) : calls;
      k[EstKind::kSend] = sends;
      if (r.nonblocking()) k[EstKind::kRequest] = 2 * sends;  // post, then done at its completion
      break;
    }
    case RoutineFamily::kRecv:
    case RoutineFamily::kSendrecv: {
      if (r.mode == format::RoutineMode::kPersistentInit) break;
      const bool both = r.family == RoutineFamily::kSendrecv;
      const double moved = exact ? static_cast<double>(s.messages) : calls * (both && r.blocking() ? 2 : 1);
      if (r.blocking()) {
        k[EstKind::kSend] = both ? moved / 2 : 0;
        k[EstKind::kRecv] = both ? moved / 2 : moved;
      } else {
        if (both) k[EstKind::kSend] = moved;  // the receive arrives at its completion
        k[EstKind::kRequest] = 2 * calls * shares.post_ratio;
      }
      break;
    }
    case RoutineFamily::kCompletion:
      k[EstKind::kRecv] = exact ? static_cast<double>(s.messages) : calls * shares.completion_recv;
      break;
    case RoutineFamily::kRequest:
      if (r.cls == "start") k[EstKind::kSend] = exact ? static_cast<double>(s.messages) : calls;
      break;
    case RoutineFamily::kCollective:
      k[EstKind::kCollective] = calls;
      if (r.nonblocking()) k[EstKind::kRequest] = 2 * calls;
      break;
    case RoutineFamily::kCommCreate:
      if (r.blocking()) k[EstKind::kOther] = calls;
      break;
    case RoutineFamily::kPcontrol:
    case RoutineFamily::kRmaOp:
    case RoutineFamily::kWinCreate:
      k[EstKind::kOther] = calls;
      break;
    case RoutineFamily::kRmaSync:
      if (completes_rma(name)) k[EstKind::kOther] = calls;
      break;
    default:
      break;
  }
  return k;
}

// How a rank's nonblocking receive posts and completed receives spread over its calls. With
// message counts, the receives its Wait/Test calls delivered are the posts that were real.
RankShares rank_shares(const RankProfile& p, bool exact) {
  double posting_calls = 0, delivered = 0, completion_calls = 0;
  for (const auto& r : p.routines) {
    const format::RoutineInfo info = format::routine_by_name(r.name);
    if (posts_receive(info)) posting_calls += static_cast<double>(r.calls);
    if (info.family == RoutineFamily::kCompletion) {
      delivered += static_cast<double>(r.messages);
      completion_calls += static_cast<double>(r.calls);
    }
  }
  RankShares s;
  if (exact)
    s.post_ratio = posting_calls > 0 ? std::min(1.0, delivered / posting_calls) : 0;
  else
    s.completion_recv = completion_calls > 0 ? posting_calls / completion_calls : 0;
  return s;
}

// The innermost frame of a site as `exclude site` names it: "file:line" (the file's base name).
std::string site_where(const std::vector<Frame>& frames) {
  if (frames.empty() || frames.front().line <= 0) return {};
  const Frame& f = frames.front();
  return std::string(base_name(f.file)) + ":" + std::to_string(f.line);
}

// Rows of the run, keyed by routine or site, summed over ranks.
using Rows = std::map<std::string, EstimateRow>;

void add_row(Rows* rows, const std::string& key, const EstimateRow& one) {
  EstimateRow& r = (*rows)[key];
  if (r.name.empty()) r.name = one.name, r.routine = one.routine, r.where = one.where;
  r.calls += one.calls;
  r.records += one.records;
  r.state_records += one.state_records;
  r.moves_messages = r.moves_messages || one.records.messages() > 0;
}

std::vector<EstimateRow> sorted_rows(Rows rows) {
  std::vector<EstimateRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const EstimateRow& a, const EstimateRow& b) {
    return a.records.total() > b.records.total();
  });
  return out;
}

// One rank: its records by routine and site, the filter applied to the states.
KindCounts estimate_rank(const RankProfile& p, bool exact, const format::LogFilter* filter, Rows* routines,
                         Rows* sites) {
  if (filter && !filter->records_rank(p.rank)) return {};
  const RankShares shares = rank_shares(p, exact);
  std::map<std::string, double> states_left;  // routine -> its calls still logged as states
  for (const auto& r : p.routines)
    states_left[r.name] = filter && filter->excludes_routine(r.name) ? 0 : static_cast<double>(r.calls);
  for (const auto& s : p.sites) {
    EstimateRow row{callsite_text(s.frames), s.routine, site_where(s.frames), s.calls, {}, 0, false};
    if (row.name.empty()) row.name = "(unknown site)";
    row.records = call_records(s.routine, s, exact, shares);
    const bool routine_out = filter && filter->excludes_routine(s.routine);
    const bool site_out = filter && filter->excludes_site(s.frames);
    if (routine_out || site_out) {
      if (!routine_out) states_left[s.routine] -= static_cast<double>(s.calls);
      row.records[EstKind::kState] = 0;
    }
    row.state_records = row.records[EstKind::kState];
    add_row(sites, s.routine + "\n" + row.name, row);
  }
  KindCounts total;
  for (const auto& r : p.routines) {
    EstimateRow row{r.name, r.name, "", r.calls, call_records(r.name, r, exact, shares), 0, false};
    if (filter && filter->drops_messages() && filter->excludes_routine(r.name))
      for (EstKind k : {EstKind::kSend, EstKind::kRecv, EstKind::kCollective, EstKind::kRequest})
        row.records[k] = 0;
    row.records[EstKind::kState] = std::max(0.0, states_left[r.name]);
    row.state_records = row.records[EstKind::kState];
    total += row.records;
    add_row(routines, r.name, row);
  }
  return total;
}

// log2 of a rank's typical nanoseconds from one record to the next: the duration of its median call
// (by calls, each routine at its mean) plus its time outside MPI per call. A mean over the whole
// run would count the long waits of a few calls (a barrier, MPI_Init) in every record.
double typical_gap_bits(const RankProfile& p) {
  std::vector<std::pair<double, uint64_t>> by_duration;
  uint64_t calls = 0;
  for (const auto& r : p.routines)
    if (r.calls) {
      by_duration.emplace_back(static_cast<double>(r.incl_ns) / static_cast<double>(r.calls), r.calls);
      calls += r.calls;
    }
  if (calls == 0) return 0;
  std::sort(by_duration.begin(), by_duration.end());
  double median = 0;
  uint64_t seen = 0;
  for (const auto& [duration, n] : by_duration)
    if ((seen += n) * 2 >= calls) {
      median = duration;
      break;
    }
  const double outside = p.run_ns > p.mpi_ns ? static_cast<double>(p.run_ns - p.mpi_ns) : 0;
  return std::log2(1 + median + outside / static_cast<double>(calls));
}

// Bytes on disk of a rank's records (events payloads).
double records_bytes(const KindCounts& k, double bits) {
  const double state = std::max(kMinBytes, kStateBase + kStatePerBit * bits);
  const double other = std::max(kMinBytes, kOtherBase + kOtherPerBit * bits);
  return k[EstKind::kState] * state + k.messages() * other;
}

// A rank's chunks: its records spread evenly over its threads, each thread's buffer holding
// `per_chunk` records and spilling when full, the last part at finalize.
void chunk_rank(RankEstimate* r, double per_chunk) {
  const double threads = std::max(1, r->threads);
  const double per_thread = r->records / threads;
  const double chunks = per_thread > 0 ? std::ceil(per_thread / per_chunk) : 0;
  r->chunks = chunks * threads;
  r->spills_per_thread = chunks > 0 ? chunks - 1 : 0;
}

}  // namespace

const char* est_kind_name(EstKind k) {
  static const char* const kNames[] = {"state", "send", "recv", "collective", "request", "other"};
  return kNames[kind(k)];
}

double KindCounts::total() const {
  double t = 0;
  for (double x : n) t += x;
  return t;
}
double KindCounts::messages() const { return total() - (*this)[EstKind::kState]; }
KindCounts& KindCounts::operator+=(const KindCounts& o) {
  for (size_t i = 0; i < kEstKinds; ++i) n[i] += o.n[i];
  return *this;
}

LogEstimate estimate_log(const JsonReport& report, const EstimateOptions& options) {
  LogEstimate e;
  e.size = report.size;
  e.exact_messages = report.version >= tools::time::kMessagesVersion;
  e.buffer_bytes = options.buffer_bytes;
  const double per_chunk = std::max<double>(1, std::floor(static_cast<double>(options.buffer_bytes) / 32));
  Rows routines, sites;
  double sites_defined = 0;
  for (const RankProfile& p : report.ranks) {
    const KindCounts k = estimate_rank(p, e.exact_messages, options.filter, &routines, &sites);
    RankEstimate r{p.rank, p.threads, k.total(), 0, 0, 0};
    chunk_rank(&r, per_chunk);
    r.bytes = records_bytes(k, typical_gap_bits(p)) + r.chunks * kChunkBytes;
    e.records += k;
    e.per_rank.push_back(r);
    sites_defined += static_cast<double>(p.sites.size());
  }
  e.routines = sorted_rows(std::move(routines));
  e.sites = sorted_rows(std::move(sites));
  const double ranks = static_cast<double>(report.ranks.size());
  e.definitions_bytes = kFileBytes + ranks * kRankDefBytes + sites_defined * kSiteDefBytes;
  e.mpelog_bytes = e.definitions_bytes;
  for (const RankEstimate& r : e.per_rank) e.mpelog_bytes += r.bytes;
  e.otf2_bytes = kOtf2FileBytes + ranks * kOtf2RankBytes;
  for (size_t i = 0; i < kEstKinds; ++i) e.otf2_bytes += e.records.n[i] * kOtf2Bytes[i];
  return e;
}

// Greedy: each step excludes the row (routine or site) whose calls leave the most state records,
// among the rows that write nothing else while there are any (probes, tests that complete
// nothing, local calls), then among the others (their messages stay). Rows with fewer than 0.1%
// of the records are not worth a rule. O(steps x rows).
std::vector<std::string> propose_filter(const JsonReport& report, const EstimateOptions& options,
                                        double target, LogEstimate* after) {
  const std::string given = options.filter ? options.filter->text() : std::string();
  std::vector<std::string> added;
  format::LogFilter f = options.filter ? *options.filter : format::LogFilter{};
  EstimateOptions with = options;
  with.filter = &f;
  LogEstimate e = estimate_log(report, with);
  std::set<std::string> tried;
  while (e.mpelog_bytes > target) {
    const EstimateRow* best = nullptr;
    bool best_site = false;
    auto consider = [&](const EstimateRow& row, bool site) {
      const std::string rule = site ? row.where : row.name;
      const double least = std::max(1.0, 1e-3 * e.records.total());
      if (row.state_records < least || rule.empty() || tried.count((site ? "s " : "r ") + rule)) return;
      const bool better =
          !best || (best->moves_messages && !row.moves_messages) ||
          (best->moves_messages == row.moves_messages && row.state_records > best->state_records);
      if (better) best = &row, best_site = site;
    };
    for (const EstimateRow& r : e.routines) consider(r, false);
    for (const EstimateRow& s : e.sites) consider(s, true);
    if (!best) break;
    tried.insert((best_site ? "s " : "r ") + (best_site ? best->where : best->name));
    added.push_back((best_site ? "exclude site " : "exclude routine ") +
                    (best_site ? best->where : best->name));
    std::string rules = given;
    for (const std::string& line : added) rules += line + "\n";
    StatusOr<format::LogFilter> next = format::LogFilter::parse(rules, "proposal");
    if (!next.ok()) break;  // a name the rules cannot hold (a space in a file name): stop there
    f = std::move(*next);
    e = estimate_log(report, with);
  }
  *after = std::move(e);
  return added;
}

}  // namespace mpe::cli
