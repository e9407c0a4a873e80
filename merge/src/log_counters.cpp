// The counter reader: unification by name, record to sample, and per-rank tracks.
#include "mpe/log_counters.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "mpe/records.h"

namespace mpe::format {

Counters::Counters(const LogFile& file) {
  std::unordered_map<std::string, uint32_t> by_name;
  const auto& ranks = file.definitions().ranks;
  id_of_.assign(ranks.size(), {});
  for (size_t rank = 0; rank < ranks.size(); ++rank)
    for (const CounterDef& def : ranks[rank].counters) {
      auto [it, fresh] = by_name.try_emplace(def.name, static_cast<uint32_t>(all_.size() + 1));
      if (fresh) all_.push_back(Counter{it->second, def});
      std::vector<uint32_t>& map = id_of_[rank];
      if (def.id >= map.size()) map.resize(def.id + 1, 0);
      map[def.id] = it->second;
    }
}

uint32_t Counters::find(const std::string& name) const {
  for (const Counter& c : all_)
    if (c.def.name == name) return c.id;
  return 0;
}

namespace {

double value_of(PvarValueKind kind, uint64_t v) {
  switch (kind) {
    case PvarValueKind::kDouble: {
      double d;
      std::memcpy(&d, &v, sizeof d);
      return d;
    }
    case PvarValueKind::kSigned:
      return static_cast<double>(static_cast<int64_t>(v));
    default:
      return static_cast<double>(v);
  }
}

}  // namespace

CounterSample counter_sample(const LogFile& file, const Counters& counters, uint32_t rank, uint32_t thread,
                             const Record& r) {
  const CounterRecord v = as<CounterRecord>(r);
  CounterSample s;
  s.time = file.to_ns(rank, v.time);
  s.counter = counters.id(rank, v.counter);
  s.rank = rank;
  s.thread = thread;
  s.comm = v.comm;
  const Counter* c = counters.counter(s.counter);
  const PvarValueKind kind = c ? c->def.kind : PvarValueKind::kUnsigned;
  s.value = value_of(kind, v.value_bits);
  s.level = s.value;
  s.changes = c && c->def.semantics == PvarSemantics::kWatermark ? static_cast<uint32_t>(v.changes) : 0;
  const RankMeta& rm = file.definitions().ranks[rank];
  int32_t world = -1;
  uint64_t gid = 0;
  if (v.comm != kUnknownComm && world_rank(rm, v.comm, 0, &world, &gid)) s.comm_id = gid;
  if (v.top_element >= 0 && v.comm != kUnknownComm && world_rank(rm, v.comm, v.top_element, &world, &gid))
    s.max_peer = world;
  return s;
}

StatusOr<std::vector<CounterTrack>> counter_tracks(const LogFile& file, const Counters& counters,
                                                   uint32_t rank) {
  std::vector<CounterSample> samples;
  const Status s =
      for_each_counter_sample(file, counters, rank, [&](const CounterSample& x) { samples.push_back(x); });
  if (!s.ok()) return s;
  return counter_tracks(counters, rank, samples);
}

std::vector<CounterTrack> counter_tracks(const Counters& counters, uint32_t rank,
                                         const std::vector<CounterSample>& samples) {
  std::map<std::pair<uint32_t, uint32_t>, CounterTrack> tracks;  // (counter, comm)
  for (const CounterSample& x : samples) {
    CounterTrack& t = tracks[{x.counter, x.comm}];
    t.counter = x.counter;
    t.rank = rank;
    t.comm = x.comm;
    t.comm_id = x.comm_id;
    t.samples.push_back(x);
  }
  std::vector<CounterTrack> out;
  out.reserve(tracks.size());
  for (auto& [key, t] : tracks) {
    // Threads' samples interleave in time; deltas add up in time order.
    std::stable_sort(t.samples.begin(), t.samples.end(),
                     [](const CounterSample& a, const CounterSample& b) { return a.time < b.time; });
    const Counter* c = counters.counter(t.counter);
    const bool deltas = c && c->def.semantics == PvarSemantics::kDelta;
    double level = 0;
    for (CounterSample& x : t.samples) {
      level = deltas ? level + x.value : x.value;
      x.level = level;
      t.max_level = std::max(t.max_level, level);
      t.min_level = std::min(t.min_level, level);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mpe::format
