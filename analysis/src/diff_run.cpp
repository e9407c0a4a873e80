// One run of `mpe diff` read from a log (mpe/diff.h): the tables from one chunk pass; the wait
// states from the streaming replay (`mpe diff`), or from a collector fed the same chunks (a viewer
// that already decodes the log for its own model).
#include <algorithm>
#include <climits>
#include <optional>

#include "mpe/diff.h"
#include "mpe/endpoint_collector.h"
#include "mpe/frame.h"
#include "mpe/records.h"
#include "mpe/waits.h"

namespace mpe::analysis::diff {

Where where_of(const std::vector<Frame>& frames) {
  Where w;
  if (frames.empty()) {
    w.location = "?";
    return w;
  }
  const Frame& f = frames.front();
  w.function = f.function;
  if (f.line > 0 && !f.file.empty()) {
    w.file = std::string(base_name(f.file));
    w.line = f.line;
  }
  w.location = callsite_text({f});
  return w;
}

namespace {

std::string key_of(const std::string& routine, const Where& w) {
  return routine + "|" + w.file + ":" + std::to_string(w.line) + "|" + w.function +
         (w.line ? "" : "|" + w.location);
}

// The Where of each of the log's call sites, by run-wide id (0: the unknown site).
std::vector<Where> where_by_id(const format::LogFile& file) {
  std::vector<Where> where(file.callsites().size() + 1);
  where[0].location = "?";
  for (const format::CallSite& cs : file.callsites())
    if (cs.id > 0 && cs.id < where.size()) where[cs.id] = where_of(cs.frames);
  return where;
}

CollectSettings collect_settings(const LogOptions& options) {
  CollectSettings collect;
  collect.eager_limit = options.eager_limit;
  return collect;
}

Site& site_at(Run* run, const std::string& routine, const Where& w) {
  auto [it, fresh] = run->sites.try_emplace(key_of(routine, w));
  if (fresh) {
    it->second.routine = routine;
    it->second.where = w;
  }
  return it->second;
}

}  // namespace

std::string site_key(const Site& s) { return key_of(s.routine, s.where); }

Site& site_of(Run* run, const std::string& routine, const std::vector<Frame>& frames) {
  return site_at(run, routine, where_of(frames));
}

// The run's site and routine of a state, by run-wide site id and category: a cache per site id
// (a site is nearly always one routine) in front of the maps, since this runs once per record.
struct RunBuilder::Impl {
  Impl(const format::LogFile& f, std::string path, const LogOptions& o, bool collect) : file(f), options(o) {
    if (collect) collector.emplace(f, collect_settings(o));
    run.kind = Kind::kLog;
    run.path = std::move(path);
    run.program = file.definitions().program;
    run.ranks = std::max<uint32_t>(file.definitions().world_size, 1);
    run.wall_per_rank.assign(run.ranks, 0.0);
    run.mpi_per_rank.assign(run.ranks, 0.0);
    first.assign(run.ranks, INT64_MAX);
    last.assign(run.ranks, INT64_MIN);
    where = where_by_id(file);
    routine_of.assign(format::kUserCategoryBase, nullptr);
    cache.assign(where.size(), {UINT32_MAX, nullptr});
  }

  const format::LogFile& file;
  LogOptions options;
  std::optional<EndpointCollector> collector;  // the wait-state analysis's pass 1, fed the same chunks
  Run run;
  std::vector<int64_t> first, last;                    // per rank: its first and last record
  std::vector<Where> where;                            // by run-wide call site id
  std::vector<Measure*> routine_of;                    // category (< kUserCategoryBase) -> routine
  std::vector<std::pair<uint32_t, Site*>> cache;       // site id -> (category, site) met last
  std::map<std::pair<uint32_t, uint32_t>, Site*> all;  // (site id, category) -> site
  std::map<uint32_t, std::string> names;
  std::map<uint32_t, Measure*> region_of;  // user state category -> region
  // Per timeline (rank, thread): its open user states, its Pcontrol level in force since `since`
  // (-1: no marker yet) and its last record, carried from one of its chunks to the next (a log's
  // chunks may interleave timelines: the synthesizer's do).
  struct Timeline {
    format::UserStates user_states;
    int32_t level = -1;
    int64_t since = 0, last = INT64_MIN;
  };
  std::map<std::pair<uint32_t, uint32_t>, Timeline> timelines;
  Timeline* tl = nullptr;
  // Per chunk: its rank (in range), its span, and the latest MPI state's site and routine, which
  // the messages and collectives that follow it belong to.
  uint32_t rank = 0;
  bool in_range = false;
  int64_t chunk_first = INT64_MAX, chunk_last = INT64_MIN;
  Site* last_site = nullptr;
  Measure* last_routine = nullptr;

  const std::string& name(uint32_t cat) {
    auto it = names.find(cat);
    if (it == names.end()) it = names.emplace(cat, file.category_name(cat)).first;
    return it->second;
  }
  Measure* region(uint32_t cat) {
    Measure*& m = region_of[cat];
    if (!m) m = &run.regions["user state " + name(cat)];
    return m;
  }
  Measure* routine(uint32_t cat) {
    Measure*& m = routine_of[cat];
    if (!m) m = &run.routines[name(cat)];
    return m;
  }
  Site* site(uint32_t id, uint32_t cat) {
    if (id >= where.size()) id = 0;
    auto& c = cache[id];
    if (c.first == cat) return c.second;
    Site*& s = all[{id, cat}];
    if (!s) s = &site_at(&run, name(cat), where[id]);
    c = {cat, s};
    return s;
  }
  void close_level(uint32_t r, const Timeline& t, int64_t at) {
    if (t.level >= 0 && r < run.ranks && at > t.since)
      run.regions["Pcontrol level " + std::to_string(t.level)].add(r, run.ranks, 1,
                                                                   static_cast<double>(at - t.since), 0);
  }

  // interpret_records()'s sink.
  void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site_id) {
    if (!in_range) return;
    const double t = static_cast<double>(end - start);
    if (cat < format::kUserCategoryBase) {
      if (depth == 0) run.mpi_per_rank[rank] += t;
      last_site = site(site_id, cat);
      last_routine = routine(cat);
      last_site->m.add(rank, run.ranks, 1, t, 0);
      last_routine->add(rank, run.ranks, 1, t, 0);
    } else {
      region(cat)->add(rank, run.ranks, 1, t, 0);
      last_site = nullptr;
      last_routine = nullptr;
    }
  }
  void bytes(uint64_t b) {
    if (last_site) last_site->m.bytes += b, last_routine->bytes += b;
  }
  void event(const format::Event& e) {
    if (!in_range) return;
    if (e.kind == format::RecordKind::kCollective) {
      const auto c = format::as<format::CollectiveRecord>(e);
      bytes(c.sent + (c.received > 0 ? static_cast<uint64_t>(c.received) : 0));
    }
    if (e.kind == format::RecordKind::kMarker) {
      close_level(rank, *tl, e.time);
      tl->level = format::as<format::MarkerRecord>(e).level;
      tl->since = e.time;
    }
  }
  void message_end(bool, const format::MessageKey&, int64_t, uint64_t b) {
    if (in_range) bytes(b);
  }
  void cancel_send(const format::MessageKey&) {}
  void span(int64_t t, int64_t end) {
    chunk_first = std::min(chunk_first, t);
    chunk_last = std::max(chunk_last, std::max(t, end));
  }

  void consume(const format::Chunk& c) {
    const format::IndexEntry& e = c.entry;
    tl = &timelines[{e.rank, e.thread}];
    rank = e.rank;
    in_range = e.rank < run.ranks;
    chunk_first = INT64_MAX;
    chunk_last = INT64_MIN;
    last_site = nullptr;
    last_routine = nullptr;
    format::interpret_records(file, e, c.records, c.count, &tl->user_states, *this);
    if (in_range && chunk_first <= chunk_last) {
      first[rank] = std::min(first[rank], chunk_first);
      last[rank] = std::max(last[rank], chunk_last);
      tl->last = std::max(tl->last, chunk_last);
    }
  }

  Run finish() {
    // Each timeline's last Pcontrol level lasts to its last record.
    for (auto& [key, t] : timelines) close_level(key.first, t, t.last);
    timelines.clear();
    int64_t begin = INT64_MAX, end = INT64_MIN;
    for (uint32_t r = 0; r < run.ranks; ++r)
      if (first[r] <= last[r]) {
        run.wall_per_rank[r] = static_cast<double>(last[r] - first[r]);
        begin = std::min(begin, first[r]);
        end = std::max(end, last[r]);
      }
    run.wall_ns = begin <= end ? static_cast<double>(end - begin) : 0.0;
    return std::move(run);
  }
};

namespace {

analysis::waits::Options waits_options(const LogOptions& options) {
  analysis::waits::Options wo;
  wo.keep_blame = false;
  wo.eager_limit = options.eager_limit;
  return wo;
}

// The wait states into the run: per pattern, and per (call site, pattern), a site that waited
// being a site even if no state named it.
void add_waits(const format::LogFile& file, const analysis::waits::Report& report, Run* run) {
  const std::vector<Where> where = where_by_id(file);
  for (int i = 0; i < analysis::waits::kPatternCount; ++i) {
    const auto p = static_cast<analysis::waits::Pattern>(i);
    const analysis::waits::PatternTotal& t = report.patterns[static_cast<size_t>(i)];
    run->patterns[analysis::waits::pattern_key(p)] = static_cast<double>(t.ns);
    run->pattern_count[analysis::waits::pattern_key(p)] = t.instances;
    for (const auto& [key, total] : t.per_site) {
      const Where& w = key.first < where.size() ? where[key.first] : where[0];
      const std::string routine = file.category_name(key.second);
      SiteWait sw;
      sw.pattern = analysis::waits::pattern_key(p);
      sw.site_key = key_of(routine, w);
      sw.ns = static_cast<double>(total.ns);
      sw.instances = total.instances;
      site_at(run, routine, w);
      run->site_waits.push_back(std::move(sw));
    }
  }
}

}  // namespace

RunBuilder::RunBuilder(const format::LogFile& file, std::string path, const LogOptions& options)
    : RunBuilder(file, std::move(path), options, true) {}
RunBuilder::RunBuilder(const format::LogFile& file, std::string path, const LogOptions& options, bool collect)
    : impl_(std::make_unique<Impl>(file, std::move(path), options, collect)) {}
RunBuilder::~RunBuilder() = default;
void RunBuilder::consume(const format::Chunk& chunk) {
  impl_->consume(chunk);
  if (impl_->collector) impl_->collector->consume(chunk);
}
StatusOr<Run> RunBuilder::finish() {
  Run run = impl_->finish();
  if (!impl_->collector) return run;
  const auto report =
      analysis::waits::analyze(impl_->file, *impl_->collector->finish(), waits_options(impl_->options));
  if (!report.ok()) return report.status();
  add_waits(impl_->file, report.value(), &run);
  return run;
}

StatusOr<Run> run_from_log(const format::LogFile& file, const std::string& path, const LogOptions& options) {
  // The wait states by the replay, which holds only what is in flight, and the tables from the
  // same decode of each chunk. The tables' sums are of whole nanoseconds, exact in any order.
  RunBuilder builder(file, path, options, false);
  analysis::waits::Options wo = waits_options(options);
  wo.also_feed = {builder.consumer()};
  const auto report = analysis::waits::analyze(file, wo);
  if (!report.ok()) return report.status();
  auto run = builder.finish();
  if (!run.ok()) return run.status();
  add_waits(file, report.value(), &*run);
  return run;
}

}  // namespace mpe::analysis::diff
