// OTF2 -> .mpelog, so that every consumer of our format (viewer, `mpe stat`, `mpe print`) reads
// OTF2 unchanged. Streams: one location at a time, records spilled as chunks every 32768, so
// memory holds one location's call stack and one chunk, not the trace. Calling contexts (ours,
// or Score-P's when it unwinds) give each state its call site. OTF2's request events (MpiIsend
// ... MpiIrecv, NonBlockingCollectiveRequest/Complete) become liblog's request records.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "mpe/interop.h"
#include "mpe/log_defs.h"
#include "mpe/log_writer.h"
#include "otf2_common.h"
#include "otf2_metrics.h"

namespace mpe::interop {

namespace {

using log::Record;
using log::RecordKind;

constexpr uint32_t kChunkRecords = 32768;
// A nonblocking collective's record is written at its request (where liblog writes it) but its
// operation, communicator, root and sizes come with its completion, so the records from the
// first collective still open are held back, up to this many; beyond, they are written as they
// are (such a collective keeps an unknown communicator).
constexpr uint32_t kMaxHeldRecords = 8 * kChunkRecords;
constexpr uint16_t kNoCategory = 0xFFFF;

struct LocationDef {
  uint64_t ref = 0;
  uint32_t group = 0;
  uint64_t events = 0;
};

struct GroupDef {
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  std::vector<uint64_t> members;
};

struct CommDefRaw {
  uint32_t ref = 0;
  uint32_t group = 0;
};

// The global definitions, as OTF2 gives them.
struct Globals {
  uint64_t resolution = 1000000000;
  uint64_t offset = 0;
  std::map<uint32_t, std::string> strings;
  std::map<uint32_t, uint32_t> node_name;                                           // node -> name string
  std::map<uint32_t, std::pair<OTF2_LocationGroupType, uint32_t>> location_groups;  // -> (type, node)
  std::vector<LocationDef> locations;
  struct RegionDef {
    uint32_t name;
    uint32_t description;
    OTF2_Paradigm paradigm;
  };
  std::map<uint32_t, RegionDef> regions;
  std::map<uint32_t, GroupDef> groups;
  std::vector<CommDefRaw> comms;
  std::map<uint32_t, uint32_t> rma_wins;                   // one-sided window -> its communicator
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> scls;  // source code location -> (file string, line)
  struct ContextDef {
    uint32_t region;
    uint32_t scl;
    uint32_t parent;
  };
  std::map<uint32_t, ContextDef> contexts;
  struct ContextProperty {
    uint32_t context;
    uint32_t name;  // string
    OTF2_Type type;
    OTF2_AttributeValue value;
  };
  std::vector<ContextProperty> context_properties;  // resolved once the strings are all read
  struct MetricMemberDef {
    uint32_t self, name, description;  // strings
    OTF2_MetricMode mode;
    OTF2_Type type;
  };
  std::vector<MetricMemberDef> metric_members;  // resolved once the strings are all read
  std::map<uint32_t, std::vector<OTF2_MetricMemberRef>> metric_classes;

  std::string str(uint32_t ref) const {
    auto it = strings.find(ref);
    return it == strings.end() ? std::string() : it->second;
  }
};

OTF2_CallbackCode on_clock(void* u, uint64_t resolution, uint64_t offset, uint64_t, uint64_t) {
  auto* g = static_cast<Globals*>(u);
  g->resolution = resolution ? resolution : 1;
  g->offset = offset;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
  static_cast<Globals*>(u)->strings[self] = s ? s : "";
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_node(void* u, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef,
                          OTF2_SystemTreeNodeRef) {
  static_cast<Globals*>(u)->node_name[self] = name;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location_group(void* u, OTF2_LocationGroupRef self, OTF2_StringRef,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                    OTF2_LocationGroupRef) {
  static_cast<Globals*>(u)->location_groups[self] = {type, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType,
                              uint64_t events, OTF2_LocationGroupRef group) {
  static_cast<Globals*>(u)->locations.push_back(LocationDef{self, group, events});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef,
                            OTF2_StringRef description, OTF2_RegionRole, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag, OTF2_StringRef, uint32_t, uint32_t) {
  static_cast<Globals*>(u)->regions[self] = {name, description, paradigm};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm,
                           OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
  static_cast<Globals*>(u)->groups[self] = GroupDef{type, std::vector<uint64_t>(members, members + n)};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef,
                          OTF2_CommFlag) {
  static_cast<Globals*>(u)->comms.push_back(CommDefRaw{self, group});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_rma_win(void* u, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm,
                             OTF2_RmaWinFlag) {
  static_cast<Globals*>(u)->rma_wins[self] = comm;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_scl(void* u, OTF2_SourceCodeLocationRef self, OTF2_StringRef file, uint32_t line) {
  static_cast<Globals*>(u)->scls[self] = {file, line};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_context(void* u, OTF2_CallingContextRef self, OTF2_RegionRef region,
                             OTF2_SourceCodeLocationRef scl, OTF2_CallingContextRef parent) {
  static_cast<Globals*>(u)->contexts[self] = {region, scl, parent};
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_context_property(void* u, OTF2_CallingContextRef context, OTF2_StringRef name,
                                      OTF2_Type type, OTF2_AttributeValue value) {
  static_cast<Globals*>(u)->context_properties.push_back({context, name, type, value});
  return OTF2_CALLBACK_SUCCESS;
}

// Our model of the archive: ranks, threads, categories, per-rank communicator tables.
OTF2_CallbackCode on_metric_member(void* u, OTF2_MetricMemberRef self, OTF2_StringRef name,
                                   OTF2_StringRef description, OTF2_MetricType, OTF2_MetricMode mode,
                                   OTF2_Type type, OTF2_Base, int64_t, OTF2_StringRef) {
  static_cast<Globals*>(u)->metric_members.push_back({self, name, description, mode, type});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_metric_class(void* u, OTF2_MetricRef self, uint8_t n,
                                  const OTF2_MetricMemberRef* members, OTF2_MetricOccurrence,
                                  OTF2_RecorderKind) {
  static_cast<Globals*>(u)->metric_classes[self].assign(members, members + n);
  return OTF2_CALLBACK_SUCCESS;
}

struct Model {
  detail::MetricImport metrics;                             // metric members -> MPI_T counters
  std::map<uint32_t, uint32_t> rank_of_group;               // location group -> rank
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> where;  // location -> (rank, thread)
  std::vector<std::vector<uint64_t>> locations_of_rank;
  std::map<uint32_t, uint32_t> cat_of_region;
  std::map<std::string, uint32_t> cat_of_name;
  std::vector<log::Category> categories;
  uint32_t next_mpi = 0, next_user = log::kUserCategoryBase;
  // Per rank: OTF2 comm -> the rank's index, for the communicators the rank belongs to (giving
  // every rank every communicator would grow with ranks x communicators: 162 M definitions, 13 GB,
  // for a 100,000-rank archive with one communicator per node).
  std::vector<std::unordered_map<uint32_t, uint32_t>> comm_index;
  std::map<uint32_t, uint32_t> comm_size;
  // One-sided windows: OTF2 window -> (window index, the same on every rank; ordinal among the
  // windows of its communicator, in definition order): what liblog's kWinCreate records carry.
  std::map<uint32_t, std::pair<uint32_t, int32_t>> window;
  log::Definitions defs;
  // Call sites: each calling context's, unified over the archive by callsite_key(); per rank, the
  // local ids its records carry (RankMeta::callsites), numbered as first used.
  struct FrameWhere {
    std::string module;
    uint64_t offset = 0;
  };
  std::map<uint32_t, FrameWhere> frame_where;  // calling context -> module and offset (properties)
  std::vector<std::vector<Frame>> sites;       // archive-wide site - 1 -> frames, innermost first
  std::unordered_map<std::string, uint32_t> site_of_key;
  std::map<uint32_t, uint32_t> site_of_context;           // calling context -> archive-wide site
  std::vector<std::map<uint32_t, uint32_t>> local_sites;  // [rank] archive-wide site -> local id

  uint32_t category(const std::string& name, bool mpi, log::CategoryKind kind = log::CategoryKind::kState,
                    int64_t color = -1) {
    auto it = cat_of_name.find(name);
    if (it != cat_of_name.end()) return it->second;
    uint32_t id;
    if (mpi && next_mpi < log::kUserCategoryBase)
      id = next_mpi++;
    else if (next_user < 0xFFFF)
      id = next_user++;
    else
      return 0xFFFF;  // beyond 32767 user regions: one "cat65535" state
    log::Category c;
    c.id = id;
    c.kind = kind;
    c.color = color >= 0 ? static_cast<uint32_t>(color)
              : mpi      ? log::default_mpi_color(name)
                         : 0x4CAF50 ^ ((id * 0x9E3779B1u) & 0x3F3F3F);
    c.name = name;
    categories.push_back(c);
    cat_of_name[name] = id;
    return id;
  }
};

bool is_mpi_region(const std::string& name, OTF2_Paradigm paradigm) {
  return paradigm == OTF2_PARADIGM_MPI || name.rfind("MPI_", 0) == 0;
}

// The category of a region: made when first entered for the functions of unwound frames (paradigm
// SAMPLING), which are calling-context nodes, not states, and for regions never defined.
uint32_t region_category(const Globals& g, Model* m, uint32_t region) {
  const auto it = m->cat_of_region.find(region);
  if (it != m->cat_of_region.end()) return it->second;
  const auto rd = g.regions.find(region);
  const std::string name = rd == g.regions.end() ? std::string() : g.str(rd->second.name);
  const bool mpi = rd != g.regions.end() && is_mpi_region(name, rd->second.paradigm);
  const uint32_t cat = m->category(name.empty() ? "region " + std::to_string(region) : name, mpi);
  m->cat_of_region[region] = cat;
  return cat;
}

// The call site of a state entered in calling context `context`: the unwound frames above it
// (the chain of SAMPLING-region ancestors, innermost first: function = the region's name,
// file:line = the node's source code location, module and offset from Score-P's properties), or
// only the context's own source code location when there are none. 0 when unknown.
uint32_t context_site(const Globals& g, Model* m, uint32_t context) {
  const auto memo = m->site_of_context.find(context);
  if (memo != m->site_of_context.end()) return memo->second;
  auto frame_of = [&](uint32_t ref, const Globals::ContextDef& c) {
    Frame f;
    const auto rd = g.regions.find(c.region);
    if (rd != g.regions.end()) f.function = g.str(rd->second.name);
    if (f.function.empty()) f.function = "?";
    const auto scl = g.scls.find(c.scl);
    if (scl != g.scls.end()) {
      f.file = g.str(scl->second.first);
      f.line = static_cast<int>(scl->second.second);
    }
    const auto where = m->frame_where.find(ref);
    if (where != m->frame_where.end()) f.module = where->second.module, f.offset = where->second.offset;
    return f;
  };
  std::vector<Frame> frames;
  const auto leaf = g.contexts.find(context);
  if (leaf != g.contexts.end()) {
    uint32_t p = leaf->second.parent;
    // Bounded: a damaged archive may define a cycle.
    for (size_t n = 0; n < g.contexts.size(); ++n) {
      const auto c = g.contexts.find(p);
      if (c == g.contexts.end()) break;
      const auto rd = g.regions.find(c->second.region);
      if (rd == g.regions.end() || rd->second.paradigm != OTF2_PARADIGM_SAMPLING) break;
      frames.push_back(frame_of(p, c->second));
      p = c->second.parent;
    }
    if (frames.empty() && g.scls.count(leaf->second.scl)) {
      frames.push_back(frame_of(context, leaf->second));
      frames.back().function = "?";  // the context's region is the call, not its caller
    }
  }
  uint32_t site = 0;
  if (!frames.empty()) {
    auto [it, fresh] =
        m->site_of_key.try_emplace(callsite_key(frames), static_cast<uint32_t>(m->sites.size() + 1));
    if (fresh) m->sites.push_back(std::move(frames));
    site = it->second;
  }
  m->site_of_context[context] = site;
  return site;
}

// The id `rank`'s records carry for archive-wide site `site`, defined in its RankMeta on first use.
uint32_t local_site(Model* m, uint32_t rank, uint32_t site) {
  if (site == 0) return 0;
  auto& ids = m->local_sites[rank];
  auto [it, fresh] = ids.try_emplace(site, static_cast<uint32_t>(ids.size() + 1));
  if (fresh) m->defs.ranks[rank].callsites.push_back(log::CallSiteDef{it->second, m->sites[site - 1]});
  return it->second;
}

Status build_model(const Globals& g, const std::string& program, Model* m) {
  // Ranks: the process location groups in ref order (Score-P and our writer: ref == MPI rank).
  std::vector<uint32_t> groups;
  for (const auto& [ref, tg] : g.location_groups)
    if (tg.first == OTF2_LOCATION_GROUP_TYPE_PROCESS) groups.push_back(ref);
  if (groups.empty())
    for (const auto& [ref, tg] : g.location_groups) groups.push_back(ref);
  if (groups.empty() || g.locations.empty())
    return Status(StatusCode::kCorrupt, "the OTF2 archive defines no locations");
  for (uint32_t r = 0; r < groups.size(); ++r) m->rank_of_group[groups[r]] = r;
  m->locations_of_rank.resize(groups.size());
  std::vector<LocationDef> locs = g.locations;
  std::sort(locs.begin(), locs.end(),
            [](const LocationDef& a, const LocationDef& b) { return a.ref < b.ref; });
  for (const auto& l : locs) {
    auto it = m->rank_of_group.find(l.group);
    if (it == m->rank_of_group.end()) continue;  // e.g. a GPU or metric location: not a rank timeline
    auto& list = m->locations_of_rank[it->second];
    m->where[l.ref] = {it->second, static_cast<uint32_t>(list.size())};
    list.push_back(l.ref);
  }
  for (const auto& [ref, rd] : g.regions) {
    if (rd.paradigm == OTF2_PARADIGM_SAMPLING) continue;  // an unwound frame's function: region_category()
    const std::string name = g.str(rd.name);
    // Our writer puts the colour in the description ("color #rrggbb").
    const std::string desc = g.str(rd.description);
    const int64_t color =
        desc.rfind("color #", 0) == 0 && desc.size() == 13 ? std::strtoll(desc.c_str() + 7, nullptr, 16) : -1;
    m->cat_of_region[ref] = m->category(name.empty() ? "region " + std::to_string(ref) : name,
                                        is_mpi_region(name, rd.paradigm), log::CategoryKind::kState, color);
  }

  // Communicators: group members of a COMM_GROUP are positions in the COMM_LOCATIONS group.
  std::vector<int32_t> world_of_position;
  for (const auto& [ref, gd] : g.groups)
    if (gd.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
      for (uint64_t loc : gd.members) {
        auto it = m->where.find(loc);
        world_of_position.push_back(it == m->where.end() ? -1 : static_cast<int32_t>(it->second.first));
      }
      break;
    }
  const auto nranks = static_cast<uint32_t>(groups.size());
  auto world_rank = [&](uint64_t pos) -> int32_t {
    if (world_of_position.empty()) return pos < nranks ? static_cast<int32_t>(pos) : -1;
    return pos < world_of_position.size() ? world_of_position[pos] : -1;
  };

  for (const auto& p : g.context_properties) {
    const std::string name = g.str(p.name);
    auto& where = m->frame_where[p.context];
    if (name == detail::kModuleProperty && p.type == OTF2_TYPE_STRING)
      where.module = g.str(p.value.stringRef);
    if ((name == detail::kOffsetProperty || name == detail::kAddressProperty) && p.type == OTF2_TYPE_UINT64)
      where.offset = p.value.uint64;
  }
  m->local_sites.resize(nranks);

  log::Definitions& d = m->defs;
  d.world_size = nranks;
  d.program = program;
  d.clock = "otf2";
  d.ticks_per_second = static_cast<double>(g.resolution);
  d.ranks.resize(nranks);
  const log::MemberList world = log::MemberInterner().world(nranks);  // one copy for every rank
  for (uint32_t r = 0; r < nranks; ++r) {
    log::RankMeta& rm = d.ranks[r];
    rm.rank = r;
    rm.world_size = nranks;
    const auto lg = g.location_groups.find(groups[r]);
    if (lg != g.location_groups.end()) {
      const auto node = g.node_name.find(lg->second.second);
      if (node != g.node_name.end()) rm.host = g.str(node->second);
    }
    rm.ticks_per_second = static_cast<double>(g.resolution);
    for (uint32_t t = 0; t < m->locations_of_rank[r].size(); ++t)
      rm.threads.push_back(log::ThreadDef{t, static_cast<int64_t>(m->locations_of_rank[r][t])});
    rm.comms.push_back(log::CommDef{0, 0, false, world});
    rm.comms.push_back(log::CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}});
  }
  m->comm_index.assign(nranks, {});
  for (const auto& c : g.comms) {
    const auto gd = g.groups.find(c.group);
    const bool self = gd != g.groups.end() && gd->second.type == OTF2_GROUP_TYPE_COMM_SELF;
    std::vector<int32_t> ranks;
    if (gd != g.groups.end() && !self)
      for (uint64_t pos : gd->second.members) ranks.push_back(world_rank(pos));
    const log::MemberList members(std::move(ranks));  // one copy shared by every rank's definition
    m->comm_size[c.ref] = self ? 1 : static_cast<uint32_t>(members.size());
    // Each rank is given the communicator when it is a member (every rank for MPI_COMM_SELF, and
    // for a communicator whose group the archive does not define), with the next index of its own.
    auto give = [&](uint32_t r, log::CommDef def) {
      auto& comms = d.ranks[r].comms;
      def.index = static_cast<uint32_t>(comms.size());
      m->comm_index[r][c.ref] = def.index;
      comms.push_back(std::move(def));
    };
    if (self || members.empty()) {
      for (uint32_t r = 0; r < nranks; ++r)
        give(r, self ? log::CommDef{0, (1ull << 62) | r, false, {static_cast<int32_t>(r)}}
                     : log::CommDef{0, (1ull << 61) | c.ref, false, members});
    } else {
      for (int32_t r : members)
        if (r >= 0 && static_cast<uint32_t>(r) < nranks)
          give(static_cast<uint32_t>(r), {0, (1ull << 61) | c.ref, false, members});
    }
  }
  return Status();
}

// One location's events -> records, spilled as chunks.
struct LocationReader {
  const Globals* g = nullptr;
  Model* m = nullptr;
  log::LogWriter* out = nullptr;
  uint32_t rank = 0, thread = 0;
  std::vector<Record> records;
  struct Open {
    uint32_t cat;
    uint64_t enter;
    uint32_t site;  // local call-site id, 0 when unknown
  };
  std::vector<Open> stack;
  uint64_t collective_begin = 0;
  bool in_collective = false;
  uint64_t last = 0;
  Status error;
  // Nonblocking requests: the serial (our request id, per location) of each open OTF2 request id,
  // and the index in `records` of each open nonblocking collective's record.
  std::unordered_map<uint64_t, uint32_t> serial_of;
  uint32_t last_serial = 0;
  std::unordered_map<uint64_t, size_t> open_collectives;
  std::unordered_map<uint32_t, bool> is_collective;  // category -> names a collective
  // One-sided: the windows whose kWinCreate this location wrote, and each open operation's
  // (window, target) by its matching id.
  std::set<uint32_t> windows_created;
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> rma_open;
  std::unordered_map<uint32_t, bool> is_rma_op;  // category -> names an RMA operation

  uint64_t ticks(OTF2_TimeStamp t) {
    const uint64_t v = t > g->offset ? t - g->offset : 0;
    last = std::max(last, v);
    return v;
  }
  uint32_t comm(OTF2_CommRef c) const {
    const auto& index = m->comm_index[rank];
    auto it = index.find(c);
    return it == index.end() ? log::kUnknownComm : it->second;
  }
  uint16_t enclosing_cat(const char* fallback) {
    if (!stack.empty()) return static_cast<uint16_t>(stack.back().cat);
    return static_cast<uint16_t>(m->category(fallback, true));
  }
  void put(const Record& r) {
    records.push_back(r);
    if (records.size() >= kChunkRecords) flush();
  }
  // Writes a chunk: every record when `all`, else the records before the first open nonblocking
  // collective once they fill a chunk (or all, past kMaxHeldRecords).
  void flush(bool all = false) {
    if (records.empty() || !error.ok()) return;
    size_t n = records.size();
    if (!all && !open_collectives.empty() && n < kMaxHeldRecords) {
      for (const auto& [id, index] : open_collectives) n = std::min(n, index);
      if (n < kChunkRecords) return;
    }
    std::string chunk;
    log::encode_events(records.data(), static_cast<uint32_t>(n), rank, thread, 1, &chunk);
    error = out->add_events_chunk(chunk);
    records.erase(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(n));
    for (auto it = open_collectives.begin(); it != open_collectives.end();)
      if (it->second < n)
        it = open_collectives.erase(it);
      else
        (it++)->second -= n;
  }
  // A new request: its serial, which its kRequestPost and kRequestDone records carry.
  uint32_t post(uint64_t id) { return serial_of[id] = ++last_serial; }
  // A request's completion: its serial, or 0 for a request never posted here.
  uint32_t done(uint64_t id) {
    const auto it = serial_of.find(id);
    if (it == serial_of.end()) return 0;
    const uint32_t serial = it->second;
    serial_of.erase(it);
    return serial;
  }
  void request(RecordKind kind, OTF2_TimeStamp time, uint16_t cat, uint32_t serial, log::RequestWhat what) {
    put(log::make_record(kind, ticks(time), cat, static_cast<int32_t>(serial), static_cast<int32_t>(what)));
  }
  bool collective_category(uint32_t cat) {
    if (cat == kNoCategory) return false;
    auto [it, fresh] = is_collective.try_emplace(cat, false);
    if (fresh)
      for (const auto& c : m->categories)
        if (c.id == cat) it->second = detail::collective_op(c.name).has_value();
    return it->second;
  }
  // The category of an RMA operation: its enclosing call when that names one, else `fallback`.
  uint16_t rma_cat(const char* fallback) {
    if (!stack.empty()) {
      const uint32_t cat = stack.back().cat;
      auto [it, fresh] = is_rma_op.try_emplace(cat, false);
      log::RmaKind kind;
      if (fresh)
        for (const auto& c : m->categories)
          if (c.id == cat) it->second = log::rma_kind_of(c.name, &kind);
      if (it->second) return static_cast<uint16_t>(cat);
    }
    return static_cast<uint16_t>(m->category(fallback, true));
  }
  // Writes the window's kWinCreate once per location (at its first use when the archive has no
  // RmaWinCreate for it); false for a window the definitions do not name.
  bool window_created(uint32_t win, OTF2_TimeStamp time, uint16_t cat) {
    const auto w = m->window.find(win);
    if (w == m->window.end()) return false;
    if (windows_created.insert(win).second) {
      const auto c = g->rma_wins.find(win);
      put(log::make_record(RecordKind::kWinCreate, ticks(time), cat, static_cast<int32_t>(w->second.first),
                           w->second.second, comm(c->second), 0));
    }
    return true;
  }
  void rma_op(OTF2_TimeStamp time, uint32_t win, uint32_t remote, const char* fallback, uint64_t sent,
              uint64_t received, uint64_t matching) {
    if (!window_created(win, time, static_cast<uint16_t>(m->category("MPI_Win_create", true)))) return;
    put(log::make_record(RecordKind::kRmaOp, ticks(time), rma_cat(fallback), static_cast<int32_t>(remote),
                         static_cast<int32_t>(std::min<uint64_t>(received, INT32_MAX)), m->window[win].first,
                         sent));
    rma_open[matching] = {win, remote};
  }
  // An operation's completion: a kRmaComplete for its target (the operations to that target
  // issued before it complete with it).
  void rma_complete(OTF2_TimeStamp time, uint64_t matching) {
    const auto it = rma_open.find(matching);
    if (it == rma_open.end()) return;
    put(log::make_record(RecordKind::kRmaComplete, ticks(time), enclosing_cat("MPI_Win_flush"),
                         static_cast<int32_t>(it->second.second), 0, m->window[it->second.first].first, 0));
    rma_open.erase(it);
  }
  void leave(uint64_t t) {
    const Open f = stack.back();
    stack.pop_back();
    put(log::make_record(RecordKind::kState, f.enter, static_cast<uint16_t>(f.cat),
                         static_cast<int32_t>(stack.size()), static_cast<int32_t>(f.site), 0,
                         t >= f.enter ? t - f.enter : 0));
  }
  // Returns the message record's category.
  uint16_t message(RecordKind kind, OTF2_TimeStamp time, uint32_t peer, OTF2_CommRef c, uint32_t tag,
                   uint64_t len) {
    const uint16_t cat = enclosing_cat(kind == RecordKind::kSend ? "MPI_Send" : "MPI_Recv");
    put(log::make_record(kind, ticks(time), cat, static_cast<int32_t>(peer), static_cast<int32_t>(tag),
                         comm(c), len));
    return cat;
  }
};

LocationReader* self(void* u) { return static_cast<LocationReader*>(u); }

// "MPI_Iallreduce" for OTF2_COLLECTIVE_OP_ALLREDUCE.
std::string nonblocking_name(OTF2_CollectiveOp op) {
  const std::string name = detail::collective_name(op);  // "MPI_Allreduce"
  if (name.rfind("MPI_", 0) != 0 || name.size() < 5) return name;
  return "MPI_I" + std::string(1, static_cast<char>(std::tolower(static_cast<unsigned char>(name[4])))) +
         name.substr(5);
}

OTF2_CallbackCode ev_enter(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef region) {
  auto* L = self(u);
  L->stack.push_back({region_category(*L->g, L->m, region), L->ticks(time), 0});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                           OTF2_RegionRef) {
  auto* L = self(u);
  if (!L->stack.empty()) L->leave(L->ticks(time));
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// Score-P with unwinding, and our writer for a log with call sites: the region of the entered
// context is the state, the context's frames its call site.
OTF2_CallbackCode ev_context_enter(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                   OTF2_AttributeList*, OTF2_CallingContextRef context, uint32_t) {
  auto* L = self(u);
  const auto c = L->g->contexts.find(context);
  const uint32_t region = c == L->g->contexts.end() ? OTF2_UNDEFINED_REGION : c->second.region;
  const uint32_t site = local_site(L->m, L->rank, context_site(*L->g, L->m, context));
  L->stack.push_back({region_category(*L->g, L->m, region), L->ticks(time), site});
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_context_leave(OTF2_LocationRef l, OTF2_TimeStamp time, uint64_t p, void* u,
                                   OTF2_AttributeList* a, OTF2_CallingContextRef) {
  return ev_leave(l, time, p, u, a, OTF2_UNDEFINED_REGION);
}
OTF2_CallbackCode ev_send(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                          uint32_t receiver, OTF2_CommRef c, uint32_t tag, uint64_t len) {
  self(u)->message(RecordKind::kSend, time, receiver, c, tag, len);
  return self(u)->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// A nonblocking send: the send, then its request's post (as liblog writes them).
OTF2_CallbackCode ev_isend(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                           uint32_t receiver, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t id) {
  auto* L = self(u);
  const uint16_t cat = L->message(RecordKind::kSend, time, receiver, c, tag, len);
  L->request(RecordKind::kRequestPost, time, cat, L->post(id), log::RequestWhat::kSend);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                    OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  if (const uint32_t serial = L->done(id))
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial, log::RequestWhat::kSend);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                   OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  L->request(RecordKind::kRequestPost, time, L->enclosing_cat("MPI_Irecv"), L->post(id),
             log::RequestWhat::kRecv);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_request_cancelled(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                       OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  L->open_collectives.erase(id);
  if (const uint32_t serial = L->done(id))
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
               log::RequestWhat::kCancelled);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_recv(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                          uint32_t sender, OTF2_CommRef c, uint32_t tag, uint64_t len) {
  self(u)->message(RecordKind::kRecv, time, sender, c, tag, len);
  return self(u)->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// A nonblocking receive's completion: its request's done, then the receive (as liblog writes them).
OTF2_CallbackCode ev_irecv(OTF2_LocationRef l, OTF2_TimeStamp time, uint64_t p, void* u,
                           OTF2_AttributeList* a, uint32_t sender, OTF2_CommRef c, uint32_t tag, uint64_t len,
                           uint64_t id) {
  auto* L = self(u);
  if (const uint32_t serial = L->done(id))
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial, log::RequestWhat::kRecv);
  return ev_recv(l, time, p, u, a, sender, c, tag, len);
}
OTF2_CallbackCode ev_coll_begin(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                OTF2_AttributeList*) {
  auto* L = self(u);
  L->collective_begin = L->ticks(time);
  L->in_collective = true;
  return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode ev_coll_end(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                              OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent,
                              uint64_t received) {
  auto* L = self(u);
  const uint64_t t = L->ticks(time);
  const uint64_t begin = L->in_collective ? L->collective_begin : t;
  L->in_collective = false;
  L->put(log::make_record(RecordKind::kCollective, begin, L->enclosing_cat(detail::collective_name(op)),
                          root == OTF2_UNDEFINED_UINT32 ? -1 : static_cast<int32_t>(root),
                          static_cast<int32_t>(std::min<uint64_t>(received, INT32_MAX)), L->comm(c), sent));
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// A nonblocking collective's start, inside its call (MPI_Iallreduce...): its collective record,
// completed when its NonBlockingCollectiveComplete comes, and its request's post.
OTF2_CallbackCode ev_nbc_request(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                 OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  const uint16_t cat = L->stack.empty() ? kNoCategory : static_cast<uint16_t>(L->stack.back().cat);
  L->open_collectives[id] = L->records.size();
  L->put(log::make_record(RecordKind::kCollective, L->ticks(time), cat, -1, 0, log::kUnknownComm, 0));
  L->request(RecordKind::kRequestPost, time, cat, L->post(id), log::RequestWhat::kCollective);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// Its completion, in the Wait/Test that completed it: what the collective was, and the request's
// done. A completion without its request in this location says too little: skipped.
OTF2_CallbackCode ev_nbc_complete(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                  OTF2_AttributeList*, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root,
                                  uint64_t sent, uint64_t received, uint64_t id) {
  auto* L = self(u);
  const uint32_t serial = L->done(id);
  if (!serial) return OTF2_CALLBACK_SUCCESS;
  const auto open = L->open_collectives.find(id);
  if (open != L->open_collectives.end()) {
    Record& r = L->records[open->second];
    // Its call was not a collective's region (another producer's trace): name it by the operation.
    if (!L->collective_category(r.cat))
      r.cat = static_cast<uint16_t>(L->m->category(nonblocking_name(op), true));
    r.a = root == OTF2_UNDEFINED_UINT32 ? -1 : static_cast<int32_t>(root);
    r.b = static_cast<int32_t>(std::min<uint64_t>(received, INT32_MAX));
    r.comm = L->comm(c);
    r.c = sent;
    L->open_collectives.erase(open);
  }
  L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
             log::RequestWhat::kCollective);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_comm_create(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                 OTF2_AttributeList*, OTF2_CommRef c) {
  auto* L = self(u);
  const auto size = L->m->comm_size.find(c);
  L->put(log::make_record(RecordKind::kCommCreate, L->ticks(time), 0,
                          size == L->m->comm_size.end() ? 0 : static_cast<int32_t>(size->second), 0,
                          L->comm(c), 0));
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

OTF2_CallbackCode ev_metric(OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t, void* u,
                            OTF2_AttributeList* attrs, OTF2_MetricRef metric, uint8_t n,
                            const OTF2_Type* types, const OTF2_MetricValue* values) {
  auto* L = self(u);
  std::vector<Record> recs;
  L->m->metrics.records(
      L->rank, &L->m->defs.ranks[L->rank], loc, L->ticks(time), metric, n, types, values, attrs,
      [&](OTF2_CommRef c) { return L->comm(c); }, &recs);
  for (const Record& r : recs) L->put(r);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

OTF2_CallbackCode ev_rma_win_create(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                    OTF2_AttributeList*, OTF2_RmaWinRef win) {
  auto* L = self(u);
  L->window_created(win, time, L->enclosing_cat("MPI_Win_create"));
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_rma_put(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching) {
  auto* L = self(u);
  L->rma_op(time, win, remote, "MPI_Put", bytes, 0, matching);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_rma_get(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching) {
  auto* L = self(u);
  L->rma_op(time, win, remote, "MPI_Get", 0, bytes, matching);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_rma_atomic(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u, OTF2_AttributeList*,
                                OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType type, uint64_t sent,
                                uint64_t received, uint64_t matching) {
  auto* L = self(u);
  L->rma_op(time, win, remote, detail::rma_atomic_function(type), sent, received, matching);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// RmaOpCompleteBlocking, RmaOpCompleteNonBlocking and RmaOpCompleteRemote alike.
OTF2_CallbackCode ev_rma_complete(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                  OTF2_AttributeList*, OTF2_RmaWinRef, uint64_t matching) {
  auto* L = self(u);
  L->rma_complete(time, matching);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

// Markers (our user events and MPI_Pcontrol calls, or another producer's markers) with a
// location scope become records of that location: user events, or Pcontrol markers.
struct Markers {
  const Globals* g = nullptr;
  Model* m = nullptr;
  std::map<OTF2_MarkerRef, std::pair<std::string, std::string>> defs;  // group, category
  std::map<uint64_t, std::vector<Record>> of_location;
};

int64_t number_after(const char* text, const char* key) {
  const std::string t = text ? text : "";
  const auto at = t.find(key);
  return at == std::string::npos ? 0 : std::strtoll(t.c_str() + at + std::strlen(key), nullptr, 10);
}

OTF2_CallbackCode on_def_marker(void* u, OTF2_MarkerRef self, const char* group, const char* category,
                                OTF2_MarkerSeverity) {
  static_cast<Markers*>(u)->defs[self] = {group ? group : "", category ? category : ""};
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_marker(void* u, OTF2_TimeStamp time, OTF2_TimeStamp, OTF2_MarkerRef marker,
                            OTF2_MarkerScope scope, uint64_t location, const char* text) {
  auto* M = static_cast<Markers*>(u);
  const auto def = M->defs.find(marker);
  if (scope != OTF2_MARKER_SCOPE_LOCATION || def == M->defs.end() || !M->m->where.count(location))
    return OTF2_CALLBACK_SUCCESS;  // run- or group-wide markers have no timeline here
  const uint64_t t = time > M->g->offset ? time - M->g->offset : 0;
  Record r;
  if (def->second.first == "MPI" && def->second.second == "MPI_Pcontrol") {
    const auto level = static_cast<int32_t>(number_after(text, "level="));
    r = log::make_record(RecordKind::kMarker, t, static_cast<uint16_t>(M->m->category("MPI_Pcontrol", true)),
                         level, level != 0 ? 1 : 0);
  } else {
    const uint32_t cat = M->m->category(def->second.second, false, log::CategoryKind::kEvent);
    r = log::make_record(RecordKind::kUserEvent, t, static_cast<uint16_t>(cat), 0, 0, 0,
                         static_cast<uint64_t>(number_after(text, "data=")));
  }
  M->of_location[location].push_back(r);
  return OTF2_CALLBACK_SUCCESS;
}

// Reads the archive's marker file, if it has one (`<anchor without .otf2>.marker`).
Status read_markers(OTF2_Reader* reader, const std::string& anchor, Markers* markers) {
  const std::string file = anchor.substr(0, anchor.size() - 5) + ".marker";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return Status();
  OTF2_MarkerReader* mr = OTF2_Reader_GetMarkerReader(reader);
  if (!mr) return detail::otf2_error(file + ": cannot open the markers", OTF2_ERROR_FILE_INTERACTION);
  OTF2_MarkerReaderCallbacks* cb = OTF2_MarkerReaderCallbacks_New();
  OTF2_MarkerReaderCallbacks_SetDefMarkerCallback(cb, on_def_marker);
  OTF2_MarkerReaderCallbacks_SetMarkerCallback(cb, on_marker);
  uint64_t n = 0;
  OTF2_ErrorCode e = OTF2_Reader_RegisterMarkerCallbacks(reader, mr, cb, markers);
  if (e == OTF2_SUCCESS) e = OTF2_Reader_ReadAllMarkers(reader, mr, &n);
  OTF2_MarkerReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseMarkerReader(reader, mr);
  return e == OTF2_SUCCESS ? Status() : detail::otf2_error(file + ": reading the markers", e);
}

// Owns the reader and its callback structs.
struct ReaderGuard {
  OTF2_Reader* reader = nullptr;
  OTF2_GlobalDefReaderCallbacks* defs = nullptr;
  OTF2_EvtReaderCallbacks* events = nullptr;
  ~ReaderGuard() {
    if (defs) OTF2_GlobalDefReaderCallbacks_Delete(defs);
    if (events) OTF2_EvtReaderCallbacks_Delete(events);
    if (reader) OTF2_Reader_Close(reader);
  }
};

}  // namespace

Status otf2_to_mpelog(const std::string& otf2_path, const std::string& out_path) {
  detail::capture_otf2_errors();
  const std::string anchor = otf2_anchor(otf2_path);
  if (anchor.empty())
    return Status(StatusCode::kInvalidArgument, otf2_path + ": not an OTF2 archive (no *.otf2 anchor)");
  ReaderGuard G;
  G.reader = OTF2_Reader_Open(anchor.c_str());
  if (!G.reader)
    return detail::otf2_error(anchor + ": cannot open the OTF2 archive", OTF2_ERROR_FILE_INTERACTION);
  OTF2_ErrorCode e = OTF2_Reader_SetSerialCollectiveCallbacks(G.reader);
  if (e != OTF2_SUCCESS) return detail::otf2_error(anchor, e);

  Globals g;
  G.defs = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(G.defs, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(G.defs, on_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(G.defs, on_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(G.defs, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(G.defs, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(G.defs, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(G.defs, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(G.defs, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(G.defs, on_rma_win);
  OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(G.defs, on_scl);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(G.defs, on_context);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextPropertyCallback(G.defs, on_context_property);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(G.defs, on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(G.defs, on_metric_class);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(G.reader);
  if (!gdr) return detail::otf2_error(anchor + ": no global definitions", OTF2_ERROR_FILE_INTERACTION);
  uint64_t ndefs = 0;
  e = OTF2_Reader_RegisterGlobalDefCallbacks(G.reader, gdr, G.defs, &g);
  if (e == OTF2_SUCCESS) e = OTF2_Reader_ReadAllGlobalDefinitions(G.reader, gdr, &ndefs);
  OTF2_Reader_CloseGlobalDefReader(G.reader, gdr);
  if (e != OTF2_SUCCESS) return detail::otf2_error(anchor + ": reading the global definitions", e);

  Model m;
  const std::string stem = std::filesystem::path(anchor).parent_path().filename().string();
  MPE_RETURN_IF_ERROR(build_model(g, stem.empty() ? "otf2" : stem, &m));
  for (const auto& mm : g.metric_members)
    m.metrics.member(mm.self, g.str(mm.name), g.str(mm.description), mm.mode, mm.type);
  for (const auto& [ref, members] : g.metric_classes)
    m.metrics.metric_class(ref, static_cast<uint8_t>(members.size()), members.data());
  std::map<uint32_t, int32_t> windows_on;  // communicator -> windows defined on it so far
  for (const auto& [win, comm] : g.rma_wins)
    m.window[win] = {static_cast<uint32_t>(m.window.size()), windows_on[comm]++};

  Markers markers;
  markers.g = &g;
  markers.m = &m;
  MPE_RETURN_IF_ERROR(read_markers(G.reader, anchor, &markers));

  uint64_t total_events = 0;
  for (const auto& l : g.locations) {
    if (m.where.count(l.ref)) {
      total_events += l.events;
      if ((e = OTF2_Reader_SelectLocation(G.reader, l.ref)) != OTF2_SUCCESS)
        return detail::otf2_error(anchor + ": selecting a location", e);
    }
  }
  const bool has_defs = OTF2_Reader_OpenDefFiles(G.reader) == OTF2_SUCCESS;
  if ((e = OTF2_Reader_OpenEvtFiles(G.reader)) != OTF2_SUCCESS)
    return detail::otf2_error(anchor + ": opening the event files", e);

  G.events = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(G.events, ev_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(G.events, ev_leave);
  OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(G.events, ev_context_enter);
  OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(G.events, ev_context_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(G.events, ev_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(G.events, ev_isend);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(G.events, ev_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(G.events, ev_irecv);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(G.events, ev_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(G.events, ev_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(G.events, ev_request_cancelled);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(G.events, ev_nbc_request);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(G.events, ev_nbc_complete);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(G.events, ev_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(G.events, ev_coll_end);
  OTF2_EvtReaderCallbacks_SetCommCreateCallback(G.events, ev_comm_create);
  OTF2_EvtReaderCallbacks_SetMetricCallback(G.events, ev_metric);
  OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(G.events, ev_rma_win_create);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(G.events, ev_rma_put);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(G.events, ev_rma_get);
  OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(G.events, ev_rma_atomic);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(G.events, ev_rma_complete);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(G.events, ev_rma_complete);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(G.events, ev_rma_complete);

  AtomicOutput out(out_path);
  log::LogWriter writer;
  MPE_RETURN_IF_ERROR(writer.open(out.tmp_path()));
  Progress progress("reading OTF2", total_events);
  for (uint32_t r = 0; r < m.locations_of_rank.size(); ++r)
    for (uint32_t t = 0; t < m.locations_of_rank[r].size(); ++t) {
      const uint64_t loc = m.locations_of_rank[r][t];
      // The event reader first, so that the local definitions' mapping tables (Score-P writes
      // local ids) are attached to it.
      OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(G.reader, loc);
      if (!er)
        return detail::otf2_error(anchor + ": no events for location " + std::to_string(loc),
                                  OTF2_ERROR_FILE_INTERACTION);
      if (has_defs)
        if (OTF2_DefReader* dr = OTF2_Reader_GetDefReader(G.reader, loc)) {
          uint64_t n = 0;
          e = OTF2_Reader_ReadAllLocalDefinitions(G.reader, dr, &n);
          OTF2_Reader_CloseDefReader(G.reader, dr);
          if (e != OTF2_SUCCESS) return detail::otf2_error(anchor + ": reading local definitions", e);
        }
      LocationReader L;
      L.g = &g;
      L.m = &m;
      L.out = &writer;
      L.rank = r;
      L.thread = t;
      e = OTF2_Reader_RegisterEvtCallbacks(G.reader, er, G.events, &L);
      // Batches, for the progress line; a short batch is the end (reading past it is an error).
      constexpr uint64_t kBatch = 65536;
      for (uint64_t got = kBatch; e == OTF2_SUCCESS && got == kBatch && L.error.ok();) {
        e = OTF2_Reader_ReadLocalEvents(G.reader, er, kBatch, &got);
        progress.advance(got);
      }
      OTF2_Reader_CloseEvtReader(G.reader, er);
      if (e != OTF2_SUCCESS && e != OTF2_ERROR_INTERRUPTED_BY_CALLBACK)
        return detail::otf2_error(anchor + ": reading the events of location " + std::to_string(loc), e);
      while (!L.stack.empty()) L.leave(L.last);  // regions never left: end at the last event
      for (const Record& rec : markers.of_location[loc]) L.put(rec);
      L.flush(true);
      MPE_RETURN_IF_ERROR(L.error);
    }
  if (has_defs) OTF2_Reader_CloseDefFiles(G.reader);
  OTF2_Reader_CloseEvtFiles(G.reader);
  m.defs.categories = std::move(m.categories);
  MPE_RETURN_IF_ERROR(writer.finish(m.defs));
  return out.commit();
}

}  // namespace mpe::interop
