// The OTF2 reader's definitions pass: callbacks that collect the global definitions, and the model
// (ranks, threads, categories, communicators, call sites) built from them.
#include "otf2_read_model.h"

#include <algorithm>
#include <cstdlib>

namespace mpe::interop::otf2_in {

namespace {

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

}  // namespace

void set_definition_callbacks(OTF2_GlobalDefReaderCallbacks* cb) {
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
  OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, on_node);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, on_rma_win);
  OTF2_GlobalDefReaderCallbacks_SetSourceCodeLocationCallback(cb, on_scl);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, on_context);
  OTF2_GlobalDefReaderCallbacks_SetCallingContextPropertyCallback(cb, on_context_property);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, on_metric_class);
}

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
  if (fresh) m->defs.ranks[rank].callsites.push_back(format::CallSiteDef{it->second, m->sites[site - 1]});
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
    m->cat_of_region[ref] =
        m->category(name.empty() ? "region " + std::to_string(ref) : name, is_mpi_region(name, rd.paradigm),
                    format::CategoryKind::kState, color);
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

  format::Definitions& d = m->defs;
  d.world_size = nranks;
  d.program = program;
  d.clock = "otf2";
  d.ticks_per_second = static_cast<double>(g.resolution);
  d.ranks.resize(nranks);
  const format::MemberList world = format::MemberInterner().world(nranks);  // one copy for every rank
  for (uint32_t r = 0; r < nranks; ++r) {
    format::RankMeta& rm = d.ranks[r];
    rm.rank = r;
    rm.world_size = nranks;
    const auto lg = g.location_groups.find(groups[r]);
    if (lg != g.location_groups.end()) {
      const auto node = g.node_name.find(lg->second.second);
      if (node != g.node_name.end()) rm.host = g.str(node->second);
    }
    rm.ticks_per_second = static_cast<double>(g.resolution);
    for (uint32_t t = 0; t < m->locations_of_rank[r].size(); ++t)
      rm.threads.push_back(format::ThreadDef{t, static_cast<int64_t>(m->locations_of_rank[r][t])});
    rm.comms.push_back(format::CommDef{0, 0, false, world});
    rm.comms.push_back(format::CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}});
  }
  m->comm_index.assign(nranks, {});
  for (const auto& c : g.comms) {
    const auto gd = g.groups.find(c.group);
    const bool self = gd != g.groups.end() && gd->second.type == OTF2_GROUP_TYPE_COMM_SELF;
    std::vector<int32_t> ranks;
    if (gd != g.groups.end() && !self)
      for (uint64_t pos : gd->second.members) ranks.push_back(world_rank(pos));
    const format::MemberList members(std::move(ranks));  // one copy shared by every rank's definition
    m->comm_size[c.ref] = self ? 1 : static_cast<uint32_t>(members.size());
    // Each rank is given the communicator when it is a member (every rank for MPI_COMM_SELF, and
    // for a communicator whose group the archive does not define), with the next index of its own.
    auto give = [&](uint32_t r, format::CommDef def) {
      auto& comms = d.ranks[r].comms;
      def.index = static_cast<uint32_t>(comms.size());
      m->comm_index[r][c.ref] = def.index;
      comms.push_back(std::move(def));
    };
    if (self || members.empty()) {
      for (uint32_t r = 0; r < nranks; ++r)
        give(r, self ? format::CommDef{0, (1ull << 62) | r, false, {static_cast<int32_t>(r)}}
                     : format::CommDef{0, (1ull << 61) | c.ref, false, members});
    } else {
      for (int32_t r : members)
        if (r >= 0 && static_cast<uint32_t>(r) < nranks)
          give(static_cast<uint32_t>(r), {0, (1ull << 61) | c.ref, false, members});
    }
  }
  return Status();
}

}  // namespace mpe::interop::otf2_in
