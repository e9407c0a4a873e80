// Finds a run's iterations (mpe/iterations.h): pass 1 counts every repeating thing per rank (Pcontrol
// markers, user states, call sites) with the mean and spread of its period; the cut is chosen from
// those; pass 2 takes the chosen thing's times, one rank at a time.
#include "mpe/iterations.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "mpe/chunk_pass.h"
#include "mpe/records.h"

namespace mpe::analysis {

namespace {

enum class What : uint64_t { kMarker = 0, kUserState = 1, kCall = 2 };

// One repeating thing: what it is, its category and (calls) its run-wide call site.
uint64_t key_of(What w, uint32_t cat, uint32_t site) {
  return (static_cast<uint64_t>(w) << 62) | (static_cast<uint64_t>(cat & 0x3fffffffu) << 32) | site;
}
What what_of(uint64_t key) { return static_cast<What>(key >> 62); }
uint32_t cat_of(uint64_t key) { return static_cast<uint32_t>(key >> 32) & 0x3fffffffu; }
uint32_t site_of(uint64_t key) { return static_cast<uint32_t>(key); }

// The occurrences of one thing on one rank: how many, the first and last start, the sums of the
// intervals between starts (mean and spread of the period), and the time its states cover.
struct Occurrences {
  uint64_t count = 0;
  int64_t first = 0, last = 0;
  double sum_dt = 0, sum_dt2 = 0, covered_ns = 0;
  void add(int64_t t, int64_t duration) {
    if (count) {
      const double dt = static_cast<double>(t - last);
      sum_dt += dt;
      sum_dt2 += dt * dt;
    } else {
      first = t;
    }
    last = t;
    ++count;
    covered_ns += static_cast<double>(duration);
  }
  double mean_period() const { return count > 1 ? sum_dt / static_cast<double>(count - 1) : 0.0; }
};

using RankStats = std::unordered_map<uint64_t, Occurrences>;

// Streams the chunks of each rank's main thread (its lowest thread index) through
// interpret_records(); make_sink(rank) gives the rank's sink, rank_done(rank, sink) takes it back
// after the rank's last chunk. A log written rank by rank (liblog's) holds one sink at a time; one
// whose chunks interleave ranks (the synthesizer's) holds one per rank.
// Each rank's main thread: its lowest thread index (UINT32_MAX for a rank without chunks).
std::vector<uint32_t> main_threads(const format::LogFile& file, uint32_t ranks) {
  std::vector<uint32_t> main_thread(ranks, UINT32_MAX);
  for (const format::IndexEntry& e : file.index())
    if (e.rank < ranks) main_thread[e.rank] = std::min(main_thread[e.rank], e.thread);
  return main_thread;
}

template <class MakeSink, class RankDone>
Status stream_main_threads(const format::LogFile& file, uint32_t ranks, MakeSink make_sink,
                           RankDone rank_done) {
  const auto& index = file.index();
  const std::vector<uint32_t> main_thread = main_threads(file, ranks);
  std::vector<size_t> last_chunk(ranks, SIZE_MAX);
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i].rank < ranks && index[i].thread == main_thread[index[i].rank]) last_chunk[index[i].rank] = i;
  std::vector<format::Record> recs;
  format::LogFile::ChunkScratch scratch;
  struct Open {
    std::optional<decltype(make_sink(0u))> sink;
    format::UserStates user_states;
  };
  std::vector<Open> open(ranks);
  for (size_t i = 0; i < index.size(); ++i) {
    const format::IndexEntry& e = index[i];
    if (e.rank >= ranks || e.thread != main_thread[e.rank]) continue;
    Open& o = open[e.rank];
    if (!o.sink) o.sink.emplace(make_sink(e.rank));
    MPE_RETURN_IF_ERROR(file.read_chunk(i, &scratch, &recs));
    format::interpret_records(file, e, recs.data(), recs.size(), &o.user_states, *o.sink);
    if (i == last_chunk[e.rank]) {
      MPE_RETURN_IF_ERROR(rank_done(e.rank, *o.sink));
      o = Open();
    }
  }
  return Status();
}

// Pass 1: every marker, outermost user state and outermost MPI call of a rank, counted; and which
// call sites are collectives over all ranks (the kCollective record follows its call's state).
struct StatsSink {
  const format::RankMeta* meta;
  uint32_t ranks;
  RankStats* stats;
  std::map<uint64_t, uint32_t>* collective_comm;  // call key -> communicator (per-rank index)
  int64_t call_start = INT64_MIN;
  uint32_t call_cat = UINT32_MAX;
  uint64_t call_key = 0;

  void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {
    if (depth != 0) return;
    if (cat >= format::kUserCategoryBase) {
      (*stats)[key_of(What::kUserState, cat, 0)].add(start, end - start);
      return;
    }
    call_key = key_of(What::kCall, cat, site);
    call_start = start;
    call_cat = cat;
    (*stats)[call_key].add(start, end - start);
  }
  void event(const format::Event& e) {
    if (e.kind == format::RecordKind::kMarker && format::as<format::MarkerRecord>(e).level != 0)
      (*stats)[key_of(What::kMarker, 0, 0)].add(e.time, 0);
    if (e.kind != format::RecordKind::kCollective) return;
    const auto coll = format::as<format::CollectiveRecord>(e);
    if (e.time == call_start && coll.cat == call_cat && coll.comm < meta->comms.size()) {
      const format::CommDef& c = meta->comms[coll.comm];
      if (c.index == coll.comm && !c.inter && c.members.size() == ranks)
        collective_comm->emplace(call_key, coll.comm);
    }
  }
  void message_end(bool, const format::MessageKey&, int64_t, uint64_t) {}
  void cancel_send(const format::MessageKey&) {}
  void span(int64_t, int64_t) {}
};

// A thing over all ranks: its counts' range and its period pooled over the ranks.
struct Pooled {
  uint64_t min_count = UINT64_MAX, max_count = 0;
  double sum_dt = 0, sum_dt2 = 0, intervals = 0, covered_ns = 0;
  bool same_count() const { return min_count == max_count; }
  // The spread of the period over its mean (coefficient of variation); 0 for a metronome.
  double variation() const {
    if (intervals < 1 || sum_dt <= 0) return INFINITY;
    const double mean = sum_dt / intervals;
    const double var = std::max(0.0, sum_dt2 / intervals - mean * mean);
    return std::sqrt(var) / mean;
  }
};

std::map<uint64_t, Pooled> pool(const std::vector<RankStats>& stats) {
  std::map<uint64_t, Pooled> out;
  if (stats.empty()) return out;
  for (const auto& [key, o] : stats[0]) out[key];
  for (auto it = out.begin(); it != out.end();) {
    Pooled& p = it->second;
    bool everywhere = true;
    for (const RankStats& rs : stats) {
      const auto f = rs.find(it->first);
      if (f == rs.end()) {
        everywhere = false;
        break;
      }
      const Occurrences& o = f->second;
      p.min_count = std::min(p.min_count, o.count);
      p.max_count = std::max(p.max_count, o.count);
      p.sum_dt += o.sum_dt;
      p.sum_dt2 += o.sum_dt2;
      p.intervals += static_cast<double>(o.count - 1);
      p.covered_ns += o.covered_ns;
    }
    it = everywhere ? std::next(it) : out.erase(it);
  }
  return out;
}

// Among call sites with the same count on every rank (at least 3): the finest regular period
// (intervals varying by less than half their mean), else the most regular. 0 when none.
constexpr double kRegular = 0.5;
uint64_t most_regular(const std::map<uint64_t, Pooled>& pooled, const std::map<uint64_t, uint32_t>* only) {
  uint64_t best = 0;
  bool best_regular = false;
  const Pooled* b = nullptr;
  for (const auto& [key, p] : pooled) {
    if (what_of(key) != What::kCall || !p.same_count() || p.min_count < 3) continue;
    if (only && !only->count(key)) continue;
    const double v = p.variation();
    const bool regular = v < kRegular;
    bool better = !b;
    if (b && regular != best_regular)
      better = regular;
    else if (b && regular)
      better = p.min_count > b->min_count || (p.min_count == b->min_count && v < b->variation());
    else if (b)
      better = v < b->variation();
    if (better) best = key, best_regular = regular, b = &p;
  }
  return best;
}

// The first call of the repeating sequence that `marker` belongs to: the call site with the same
// count on every rank, about the same period (within a quarter), whose first call comes at most
// one period before the marker's; the earliest of them.
uint64_t opener_of(uint64_t marker, const std::map<uint64_t, Pooled>& pooled,
                   const std::vector<RankStats>& stats) {
  const uint64_t n = pooled.at(marker).min_count;
  uint64_t best = marker;
  int64_t best_first = stats[0].at(marker).first;
  for (const auto& [key, p] : pooled) {
    if (what_of(key) != What::kCall || !p.same_count() || p.min_count != n) continue;
    bool fits = true;
    for (const RankStats& rs : stats) {
      const Occurrences& m = rs.at(marker);
      const Occurrences& c = rs.at(key);
      const double period = m.mean_period();
      fits = std::fabs(c.mean_period() - period) <= 0.25 * period && c.first <= m.first &&
             static_cast<double>(m.first - c.first) <= period;
      if (!fits) break;
    }
    if (fits && stats[0].at(key).first < best_first) best = key, best_first = stats[0].at(key).first;
  }
  return best;
}

// Pass 2: the chosen thing's times on one rank, and its outermost MPI calls.
struct TimesSink {
  What basis;
  uint64_t opener = 0;    // kCall: the first call of each iteration
  uint32_t user_cat = 0;  // kUserState
  // kCall: the rank's call sites (pass 1), and the first start of the opener and the last of the
  // cut: a call site first called between them is part of the loop.
  const RankStats* sites = nullptr;
  int64_t loop_first = 0, loop_last = 0;
  uint64_t n = 0;
  std::vector<int64_t> opens, closes;                // starts (and user states' ends) of the iterations
  std::vector<std::pair<int64_t, int32_t>> markers;  // every Pcontrol marker: time, level
  std::vector<std::pair<int64_t, int64_t>> mpi;      // outermost MPI calls
  int64_t after_loop = INT64_MIN;                    // kCall: the start of the first call after the loop
  int64_t last = INT64_MIN;                          // the rank's last record (its end)

  void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {
    if (depth != 0) return;
    if (cat >= format::kUserCategoryBase) {
      if (basis == What::kUserState && cat == user_cat) opens.push_back(start), closes.push_back(end);
      return;
    }
    mpi.emplace_back(start, end);
    if (basis != What::kCall) return;
    const uint64_t key = key_of(What::kCall, cat, site);
    if (key == opener)
      opens.push_back(start);
    else if (opens.size() >= n && after_loop == INT64_MIN && !in_loop(key))
      after_loop = start;
  }
  bool in_loop(uint64_t key) const {
    const auto it = sites->find(key);
    return it != sites->end() && it->second.first >= loop_first && it->second.first < loop_last;
  }
  void event(const format::Event& e) {
    if (e.kind == format::RecordKind::kMarker) marker(e.time, format::as<format::MarkerRecord>(e).level);
  }
  void marker(int64_t t, int32_t level) {
    if (basis == What::kMarker) markers.emplace_back(t, level);
  }
  void message_end(bool, const format::MessageKey&, int64_t, uint64_t) {}
  void cancel_send(const format::MessageKey&) {}
  void span(int64_t t, int64_t end) { last = std::max(last, std::max(t, end)); }

  // Iteration k's span on this rank.
  std::pair<int64_t, int64_t> span_of(size_t k) const {
    if (basis == What::kUserState) return {opens[k], closes[k]};
    if (basis == What::kCall)
      return {opens[k], k + 1 < opens.size() ? opens[k + 1] : after_loop != INT64_MIN ? after_loop : last};
    // Markers: the k-th one of a level other than 0, to the next marker.
    size_t seen = 0;
    for (size_t i = 0; i < markers.size(); ++i)
      if (markers[i].second != 0 && seen++ == k)
        return {markers[i].first, i + 1 < markers.size() ? markers[i + 1].first : last};
    return {last, last};
  }
};

std::string call_name(const format::LogFile& file, uint64_t key) {
  const std::string site = file.callsite_text(site_of(key));
  return file.category_name(cat_of(key)) + (site.empty() ? "" : " at " + site);
}

}  // namespace

int64_t Iterations::begin(size_t k) const {
  int64_t t = INT64_MAX;
  for (int64_t s : start_ns[k]) t = std::min(t, s);
  return t;
}

int64_t Iterations::end(size_t k) const {
  int64_t t = INT64_MIN;
  for (int64_t e : end_ns[k]) t = std::max(t, e);
  return t;
}

namespace {

// The ranks a run's iterations span, set in out->ranks; 0 when the definitions do not describe every
// rank (no iterations then).
uint32_t usable_ranks(const format::LogFile& file, Iterations* out) {
  const format::Definitions& defs = file.definitions();
  out->ranks = defs.world_size ? defs.world_size : static_cast<uint32_t>(defs.ranks.size());
  const uint32_t ranks = std::min<uint32_t>(out->ranks, static_cast<uint32_t>(defs.ranks.size()));
  return ranks == out->ranks ? ranks : 0;
}

// The cut chosen from pass 1's statistics: the sink that takes each rank's times in pass 2 (its
// basis and count set), and the repeating call it is made by (kCall).
struct Cut {
  bool found = false;
  TimesSink chosen;
  uint64_t call = 0;
};

// Chooses how to cut (mpe/iterations.h, 1-4) and names it in out->basis, which also sizes out's
// tables; found false when nothing repeats.
Cut choose_cut(const format::LogFile& file, const std::vector<RankStats>& stats,
               const std::map<uint64_t, uint32_t>& collective_comm, Iterations* out) {
  const std::map<uint64_t, Pooled> pooled = pool(stats);
  Cut c;
  TimesSink& chosen = c.chosen;
  uint64_t& cut = c.call;
  const uint64_t marker_key = key_of(What::kMarker, 0, 0);
  // Markers that repeat come first; one Pcontrol region (around the timed part of a run) only
  // when nothing inside it repeats.
  const bool markers = pooled.count(marker_key) > 0;
  auto cut_by_markers = [&] {
    chosen.basis = What::kMarker;
    chosen.n = pooled.at(marker_key).min_count;
    out->basis = "MPI_Pcontrol markers";
  };
  if (markers && pooled.at(marker_key).min_count >= 2) {
    cut_by_markers();
  } else {
    const Pooled* widest = nullptr;
    uint64_t state = 0;
    for (const auto& [key, p] : pooled)
      if (what_of(key) == What::kUserState && p.same_count() && p.min_count >= 2 &&
          (!widest || p.covered_ns > widest->covered_ns))
        widest = &p, state = key;
    if (widest) {
      chosen.basis = What::kUserState;
      chosen.user_cat = cat_of(state);
      chosen.n = widest->min_count;
      out->basis = "user state \"" + file.category_name(cat_of(state)) + "\"";
    }
  }
  if (out->basis.empty()) {
    cut = most_regular(pooled, &collective_comm);
    if (cut) {
      const uint32_t comm = collective_comm.at(cut);
      out->basis = file.category_name(cat_of(cut)) +
                   (comm == 0 ? " on MPI_COMM_WORLD" : " on a communicator of all ranks");
      const std::string site = file.callsite_text(site_of(cut));
      if (!site.empty()) out->basis += " at " + site;
    } else if ((cut = most_regular(pooled, nullptr))) {
      // Named by the first call of the iteration: the one the cut is made at.
      out->basis = call_name(file, opener_of(cut, pooled, stats)) +
                   ", once per iteration on every rank (no collective over all ranks repeats)";
    }
    if (cut) {
      chosen.basis = What::kCall;
      chosen.n = pooled.at(cut).min_count;
      chosen.opener = opener_of(cut, pooled, stats);
    } else if (markers) {
      cut_by_markers();
    } else {
      return c;
    }
  }
  c.found = true;
  const size_t n = chosen.n;
  const uint32_t ranks = static_cast<uint32_t>(stats.size());
  out->start_ns.assign(n, std::vector<int64_t>(ranks, 0));
  out->end_ns.assign(n, std::vector<int64_t>(ranks, 0));
  out->mpi_ns.assign(n, std::vector<int64_t>(ranks, 0));
  return c;
}

// The sink of rank r's pass 2.
TimesSink times_sink(const Cut& c, const std::vector<RankStats>& stats, uint32_t r) {
  TimesSink s = c.chosen;
  if (s.basis == What::kCall) {
    s.sites = &stats[r];
    s.loop_first = stats[r].at(s.opener).first;
    s.loop_last = stats[r].at(c.call).last;
  }
  return s;
}

// Rank r's iterations, from its pass-2 sink, into out: their spans and the MPI time inside each.
Status place_rank(uint32_t r, TimesSink& s, Iterations* out) {
  const size_t n = s.n;
  if (s.basis != What::kMarker && s.opens.size() != n)
    return Status(StatusCode::kCorrupt, "rank " + std::to_string(r) + ": " + std::to_string(s.opens.size()) +
                                            " iterations in the second pass, " + std::to_string(n) +
                                            " in the first");
  std::sort(s.mpi.begin(), s.mpi.end());
  size_t j = 0;  // the first MPI call that may overlap iteration k
  for (size_t k = 0; k < n; ++k) {
    const auto [begin, end] = s.span_of(k);
    out->start_ns[k][r] = begin;
    out->end_ns[k][r] = std::max(begin, end);
    while (j < s.mpi.size() && s.mpi[j].second <= begin) ++j;
    for (size_t i = j; i < s.mpi.size() && s.mpi[i].first < end; ++i)
      out->mpi_ns[k][r] += std::min(end, s.mpi[i].second) - std::max(begin, s.mpi[i].first);
  }
  return Status();
}

}  // namespace

StatusOr<Iterations> find_iterations(const format::LogFile& file) {
  Iterations out;
  const uint32_t ranks = usable_ranks(file, &out);
  if (ranks == 0) return out;
  const format::Definitions& defs = file.definitions();
  std::vector<RankStats> stats(ranks);
  std::map<uint64_t, uint32_t> collective_comm;
  std::vector<bool> seen(ranks, false);
  MPE_RETURN_IF_ERROR(stream_main_threads(
      file, ranks,
      [&](uint32_t r) {
        return StatsSink{&defs.ranks[r], ranks, &stats[r], &collective_comm};
      },
      [&](uint32_t r, StatsSink&) {
        seen[r] = true;
        return Status();
      }));
  if (std::count(seen.begin(), seen.end(), false)) return out;  // a rank without records

  const Cut cut = choose_cut(file, stats, collective_comm, &out);
  if (!cut.found) return out;
  MPE_RETURN_IF_ERROR(stream_main_threads(
      file, ranks, [&](uint32_t r) { return times_sink(cut, stats, r); },
      [&](uint32_t r, TimesSink& s) { return place_rank(r, s, &out); }));
  return out;
}

// One pass instead of two: pass 1's statistics are counted as the chunks come, and what pass 2
// reads of each rank's main thread (its outermost states and its markers, in the order the records
// gave them, and its last time) is kept, to be replayed into pass 2's sink once the cut is chosen.
// Memory: 24 bytes per outermost state of each rank's main thread, every rank at once.
struct IterationCollector::Impl {
  // One outermost state ([a, b), cat, site) or, with cat kMarkerStep, a marker (time a, level b).
  struct Step {
    int64_t a, b;
    uint32_t cat, site;
  };
  static constexpr uint32_t kMarkerStep = UINT32_MAX;
  struct Rank {
    std::optional<StatsSink> stats;
    format::UserStates user_states;
    std::vector<Step> steps;
    int64_t last = INT64_MIN;
  };
  // interpret_records()'s sink for one chunk of a main thread: pass 1's counts and the steps.
  struct Sink {
    StatsSink* stats;
    Rank* rank;
    void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site) {
      stats->state(start, end, cat, depth, site);
      if (depth == 0) rank->steps.push_back({start, end, cat, site});
    }
    void event(const format::Event& e) {
      stats->event(e);
      if (e.kind == format::RecordKind::kMarker)
        rank->steps.push_back({e.time, format::as<format::MarkerRecord>(e).level, kMarkerStep, 0});
    }
    void message_end(bool, const format::MessageKey&, int64_t, uint64_t) {}
    void cancel_send(const format::MessageKey&) {}
    void span(int64_t t, int64_t end) { rank->last = std::max(rank->last, std::max(t, end)); }
  };

  explicit Impl(const format::LogFile& f) : file(f) {
    ranks = usable_ranks(file, &out);
    main_thread = main_threads(file, ranks);
    stats.resize(ranks);
    per_rank.resize(ranks);
  }

  void consume(const format::Chunk& c) {
    const format::IndexEntry& e = c.entry;
    if (e.rank >= ranks || e.thread != main_thread[e.rank]) return;
    Rank& r = per_rank[e.rank];
    if (!r.stats)
      r.stats.emplace(StatsSink{&file.definitions().ranks[e.rank], ranks, &stats[e.rank], &collective_comm});
    Sink sink{&*r.stats, &r};
    format::interpret_records(file, e, c.records, c.count, &r.user_states, sink);
  }

  StatusOr<Iterations> finish() {
    for (const Rank& r : per_rank)
      if (!r.stats) return std::move(out);  // a rank without records (or no usable ranks)
    const Cut cut = choose_cut(file, stats, collective_comm, &out);
    for (uint32_t r = 0; cut.found && r < ranks; ++r) {
      TimesSink s = times_sink(cut, stats, r);
      for (const Step& step : per_rank[r].steps)
        if (step.cat == kMarkerStep)
          s.marker(step.a, static_cast<int32_t>(step.b));
        else
          s.state(step.a, step.b, step.cat, 0, step.site);
      s.last = per_rank[r].last;
      per_rank[r] = Rank();
      MPE_RETURN_IF_ERROR(place_rank(r, s, &out));
    }
    return std::move(out);
  }

  const format::LogFile& file;
  Iterations out;
  uint32_t ranks = 0;
  std::vector<uint32_t> main_thread;
  std::vector<RankStats> stats;
  std::map<uint64_t, uint32_t> collective_comm;
  std::vector<Rank> per_rank;
};

IterationCollector::IterationCollector(const format::LogFile& file) : impl_(std::make_unique<Impl>(file)) {}
IterationCollector::~IterationCollector() = default;
format::ChunkConsumer IterationCollector::consumer() {
  return [impl = impl_.get()](const format::Chunk& c) { impl->consume(c); };
}
StatusOr<Iterations> IterationCollector::finish() { return impl_->finish(); }

}  // namespace mpe::analysis
