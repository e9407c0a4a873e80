// Reads one run for `mpe diff`: a libmpetime profile or a logfile, into diff::Run.
#include "diff_runs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mpe/frame.h"
#include "mpe/interop.h"
#include "mpe/log_reader.h"
#include "mpe/waits.h"
#include "profile.h"

namespace mpe::cli::diff {

namespace {

using Json = nlohmann::json;

// The innermost frame of a call site, as `mpe diff` names and matches it.
struct Where {
  std::string file, function, location;
  int line = 0;
};

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

Site& site_of(Run* run, const std::string& routine, const Where& w) {
  // Without a source line the location text (module+offset) keeps distinct addresses apart.
  const std::string key = site_key(routine, w.file, w.line, w.function) + (w.line ? "" : "|" + w.location);
  auto [it, fresh] = run->sites.try_emplace(key);
  if (fresh) {
    it->second.routine = routine;
    it->second.file = w.file;
    it->second.line = w.line;
    it->second.function = w.function;
    it->second.location = w.location;
  }
  return it->second;
}

// One rank's profile into the run.
void add_rank(Run* run, const time::RankProfile& p) {
  const auto r = static_cast<uint32_t>(p.rank);
  if (r >= run->ranks) return;
  run->wall_per_rank[r] = static_cast<double>(p.run_ns);
  run->mpi_per_rank[r] = static_cast<double>(p.mpi_ns);
  for (const auto& s : p.routines)
    run->routines[s.name].add(r, run->ranks, s.calls, static_cast<double>(s.excl_ns),
                              s.bytes_sent + s.bytes_recv);
  for (const auto& s : p.sites)
    site_of(run, s.routine, where_of(s.frames))
        .m.add(r, run->ranks, s.calls, static_cast<double>(s.excl_ns), s.bytes_sent + s.bytes_recv);
}

void finish_profile(Run* run) {
  run->wall_ns = 0;
  for (double w : run->wall_per_rank) run->wall_ns = std::max(run->wall_ns, w);
}

// A libmpetime JSON report: its per-rank section holds everything the per-process files did.
StatusOr<Run> profile_from_json(const std::string& path, const std::string& text) {
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("tool", "") != "libmpetime")
    return Status(StatusCode::kNotALogfile, path + ": not a libmpetime JSON report");
  Run run;
  run.kind = Kind::kProfile;
  run.path = path;
  try {
    run.program = doc.value("command", "");
    const int size = doc.at("size").get<int>();
    if (size <= 0 || size > (1 << 24)) return Status(StatusCode::kCorrupt, path + ": bad size in the report");
    run.ranks = static_cast<uint32_t>(size);
    run.wall_per_rank.assign(run.ranks, 0.0);
    run.mpi_per_rank.assign(run.ranks, 0.0);
    auto stats = [](const Json& j, time::CallStats* c) {
      c->calls = j.at("calls").get<uint64_t>();
      c->incl_ns = j.at("incl_ns").get<uint64_t>();
      c->excl_ns = j.at("excl_ns").get<uint64_t>();
      c->bytes_sent = j.at("bytes_sent").get<uint64_t>();
      c->bytes_recv = j.at("bytes_recv").get<uint64_t>();
    };
    for (const Json& pr : doc.at("per_rank")) {
      time::RankProfile p;
      p.rank = pr.at("rank").get<int>();
      if (p.rank < 0 || p.rank >= size)
        return Status(StatusCode::kCorrupt, path + ": rank " + std::to_string(p.rank) + " out of range");
      p.run_ns = pr.at("run_ns").get<uint64_t>();
      p.mpi_ns = pr.at("mpi_ns").get<uint64_t>();
      for (const auto& [name, j] : pr.at("routines").items()) {
        time::RoutineStats s;
        s.name = name;
        stats(j, &s);
        p.routines.push_back(std::move(s));
      }
      if (pr.contains("callsites"))
        for (const Json& j : pr.at("callsites")) {
          time::SiteStats s;
          s.routine = j.at("routine").get<std::string>();
          stats(j, &s);
          for (const Json& f : j.at("frames")) s.frames.push_back(time::frame_from_json(f));
          p.sites.push_back(std::move(s));
        }
      add_rank(&run, p);
    }
  } catch (const Json::exception& e) {
    return Status(StatusCode::kCorrupt, path + ": corrupt libmpetime report: " + e.what());
  }
  finish_profile(&run);
  return run;
}

// Every per-process file of the run that `path` (one of them) belongs to.
StatusOr<Run> profile_from_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  const std::string name = p.filename().string();
  const size_t at = name.rfind(".mpetime.");
  std::vector<std::string> files;
  if (at != std::string::npos && name.ends_with(".txt")) {
    const std::string prefix = name.substr(0, at + 9);  // "<prefix>.mpetime."
    std::error_code ec;
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string n = e.path().filename().string();
      if (n.starts_with(prefix) && n.ends_with(".txt") &&
          std::all_of(n.begin() + static_cast<std::ptrdiff_t>(prefix.size()), n.end() - 4,
                      [](char c) { return c >= '0' && c <= '9'; }))
        files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) files.push_back(path);
  std::vector<time::RankProfile> profiles;
  for (const auto& f : files) {
    auto one = time::load(f);
    if (!one.ok()) return one.status();
    profiles.push_back(std::move(*one));
  }
  MPE_RETURN_IF_ERROR(time::check_run(&profiles));
  Run run;
  run.kind = Kind::kProfile;
  run.path = path;
  run.program = profiles.front().command;
  run.ranks = static_cast<uint32_t>(std::max(profiles.front().size, 1));
  run.wall_per_rank.assign(run.ranks, 0.0);
  run.mpi_per_rank.assign(run.ranks, 0.0);
  for (const auto& q : profiles) add_rank(&run, q);
  finish_profile(&run);
  return run;
}

// The run's site and routine of a state, by run-wide site id and category: a cache per site id
// (a site is nearly always one routine) in front of the maps, since this runs once per record.
struct Resolver {
  Resolver(const log::LogFile& f, Run& r, const std::vector<Where>& w) : file(f), run(r), where(w) {}
  const log::LogFile& file;
  Run& run;
  const std::vector<Where>& where;
  std::vector<Measure*> routine_of;                    // category (< kUserCategoryBase) -> routine
  std::vector<std::pair<uint32_t, Site*>> cache;       // site id -> (category, site) met last
  std::map<std::pair<uint32_t, uint32_t>, Site*> all;  // (site id, category) -> site
  std::map<uint32_t, std::string> names;
  const std::string& name(uint32_t cat) {
    auto it = names.find(cat);
    if (it == names.end()) it = names.emplace(cat, file.category_name(cat)).first;
    return it->second;
  }
  std::map<uint32_t, Measure*> region_of;  // user state category -> region
  Measure* region(uint32_t cat) {
    Measure*& m = region_of[cat];
    if (!m) m = &run.regions["state " + name(cat)];
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
    if (!s) s = &site_of(&run, name(cat), where[id]);
    c = {cat, s};
    return s;
  }
};

}  // namespace

std::string site_key(const std::string& routine, const std::string& file, int line,
                     const std::string& function) {
  return routine + "|" + file + ":" + std::to_string(line) + "|" + function;
}

StatusOr<Kind> kind_of(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Kind::kLog;  // an OTF2 archive's directory
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, path + ": cannot open");
  char head[64] = {};
  in.read(head, sizeof head);
  const std::string s(head, static_cast<size_t>(in.gcount()));
  const size_t start = s.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && s[start] == '{') return Kind::kProfile;
  if (s.starts_with(std::string(time::kMagic) + " ")) return Kind::kProfile;
  return Kind::kLog;
}

StatusOr<Run> load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, path + ": cannot open");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && text[start] == '{') return profile_from_json(path, text);
  return profile_from_files(path);
}

StatusOr<Run> load_log(const std::string& path, uint64_t eager_limit) {
  auto opened = interop::OpenedLog::open(path);
  if (!opened.ok()) return opened.status();
  const log::LogFile& file = (*opened)->file();
  Run run;
  run.kind = Kind::kLog;
  run.path = path;
  run.program = file.definitions().program;
  run.ranks = std::max<uint32_t>(file.definitions().world_size, 1);
  const uint32_t ranks = run.ranks;
  run.wall_per_rank.assign(ranks, 0.0);
  run.mpi_per_rank.assign(ranks, 0.0);
  std::vector<int64_t> first(ranks, INT64_MAX), last(ranks, INT64_MIN);
  // Call sites by run-wide id, resolved once.
  std::vector<Where> where(file.callsites().size() + 1);
  where[0].location = "?";
  for (const log::CallSite& cs : file.callsites())
    if (cs.id > 0 && cs.id < where.size()) where[cs.id] = where_of(cs.frames);
  Resolver res(file, run, where);
  res.routine_of.assign(log::kUserCategoryBase, nullptr);
  res.cache.assign(where.size(), {UINT32_MAX, nullptr});
  auto name_of = [&](uint32_t cat) -> const std::string& { return res.name(cat); };

  struct Sink {
    Run& run;
    uint32_t rank;
    uint32_t ranks;
    Resolver& res;
    int64_t& first;
    int64_t& last;
    // Pcontrol: the level in force on this timeline since `since` (-1: no marker yet).
    int32_t& level;
    int64_t& since;
    Site* last_site = nullptr;  // the latest MPI state's site and routine: what a message belongs to
    Measure* last_routine = nullptr;
    void state(int64_t start, int64_t end, uint32_t cat, uint32_t depth, uint32_t site_id) {
      const double t = static_cast<double>(end - start);
      if (cat < log::kUserCategoryBase) {
        if (depth == 0) run.mpi_per_rank[rank] += t;
        last_site = res.site(site_id, cat);
        last_routine = res.routine(cat);
        last_site->m.add(rank, ranks, 1, t, 0);
        last_routine->add(rank, ranks, 1, t, 0);
      } else {
        res.region(cat)->add(rank, ranks, 1, t, 0);
        last_site = nullptr;
        last_routine = nullptr;
      }
    }
    void bytes(uint64_t b) {
      if (last_site) last_site->m.bytes += b, last_routine->bytes += b;
    }
    void event(const log::Event& e) {
      if (e.kind == log::RecordKind::kCollective) bytes(e.c + (e.b > 0 ? static_cast<uint64_t>(e.b) : 0));
      if (e.kind == log::RecordKind::kMarker) {
        close_level(e.time);
        level = e.a;
        since = e.time;
      }
    }
    void close_level(int64_t t) {
      if (level >= 0 && t > since)
        run.regions["Pcontrol level " + std::to_string(level)].add(rank, ranks, 1,
                                                                   static_cast<double>(t - since), 0);
    }
    void message_end(bool, const log::MessageKey&, int64_t, uint64_t b) { bytes(b); }
    void cancel_send(const log::MessageKey&) {}
    void span(int64_t t, int64_t end) {
      first = std::min(first, t);
      last = std::max(last, std::max(t, end));
    }
  };

  std::map<std::pair<uint32_t, uint32_t>, log::UserStates> user_states;
  std::vector<log::Record> recs;
  log::LogFile::ChunkScratch scratch;
  int32_t level = -1;
  int64_t since = 0, timeline_last = 0;
  std::pair<uint32_t, uint32_t> timeline{UINT32_MAX, UINT32_MAX};
  int64_t dummy_first = 0, dummy_last = 0;
  for (size_t i = 0; i < file.index().size(); ++i) {
    const log::IndexEntry& e = file.index()[i];
    const bool in_range = e.rank < ranks;
    if (std::make_pair(e.rank, e.thread) != timeline) {
      // A new timeline: the previous one's Pcontrol level lasts to its last record.
      if (level >= 0 && timeline.first < ranks && timeline_last > since)
        run.regions["Pcontrol level " + std::to_string(level)].add(
            timeline.first, ranks, 1, static_cast<double>(timeline_last - since), 0);
      timeline = {e.rank, e.thread};
      level = -1;
      timeline_last = INT64_MIN;
    }
    MPE_RETURN_IF_ERROR(file.read_chunk(i, &scratch, &recs));
    int64_t chunk_first = INT64_MAX, chunk_last = INT64_MIN;
    Sink sink{run,
              in_range ? e.rank : 0,
              ranks,
              res,
              in_range ? chunk_first : dummy_first,
              in_range ? chunk_last : dummy_last,
              level,
              since};
    log::interpret_records(file, e, recs.data(), recs.size(), &user_states[timeline], sink);
    if (in_range && chunk_first <= chunk_last) {
      first[e.rank] = std::min(first[e.rank], chunk_first);
      last[e.rank] = std::max(last[e.rank], chunk_last);
      timeline_last = std::max(timeline_last, chunk_last);
    }
  }
  if (level >= 0 && timeline.first < ranks && timeline_last > since)
    run.regions["Pcontrol level " + std::to_string(level)].add(timeline.first, ranks, 1,
                                                               static_cast<double>(timeline_last - since), 0);
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (uint32_t r = 0; r < ranks; ++r)
    if (first[r] <= last[r]) {
      run.wall_per_rank[r] = static_cast<double>(last[r] - first[r]);
      begin = std::min(begin, first[r]);
      end = std::max(end, last[r]);
    }
  run.wall_ns = begin <= end ? static_cast<double>(end - begin) : 0.0;

  waits::Options options;
  options.keep_blame = false;
  options.eager_limit = eager_limit;
  auto report = waits::analyze(file, options);
  if (!report.ok()) return report.status();
  for (int i = 0; i < waits::kPatternCount; ++i) {
    const auto p = static_cast<waits::Pattern>(i);
    const waits::PatternTotal& t = report->patterns[static_cast<size_t>(i)];
    run.patterns[waits::pattern_key(p)] = static_cast<double>(t.ns);
    run.pattern_count[waits::pattern_key(p)] = t.instances;
    for (const auto& [key, total] : t.per_site) {
      const Where& w = key.first < where.size() ? where[key.first] : where[0];
      const std::string& routine = name_of(key.second);
      SiteWait sw;
      sw.pattern = waits::pattern_key(p);
      sw.site_key = site_key(routine, w.file, w.line, w.function) + (w.line ? "" : "|" + w.location);
      sw.ns = static_cast<double>(total.ns);
      sw.instances = total.instances;
      site_of(&run, routine, w);  // a site that waited is a site, even if no state named it
      run.site_waits.push_back(std::move(sw));
    }
  }
  return run;
}

}  // namespace mpe::cli::diff
