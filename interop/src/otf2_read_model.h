// The OTF2 reader's model of an archive (otf2_reader.cpp): its global definitions as OTF2 gives
// them, and what they become in our format (ranks, threads, categories, per-rank communicator
// tables, call sites).
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpe/log_defs.h"
#include "mpe/status.h"
#include "otf2_common.h"
#include "otf2_metrics.h"

namespace mpe::interop::otf2_in {

using format::Record;
using format::RecordKind;

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

struct Model {
  detail::MetricImport metrics;                             // metric members -> MPI_T counters
  std::map<uint32_t, uint32_t> rank_of_group;               // location group -> rank
  std::map<uint64_t, std::pair<uint32_t, uint32_t>> where;  // location -> (rank, thread)
  std::vector<std::vector<uint64_t>> locations_of_rank;
  std::map<uint32_t, uint32_t> cat_of_region;
  std::map<std::string, uint32_t> cat_of_name;
  std::vector<format::Category> categories;
  uint32_t next_mpi = 0, next_user = format::kUserCategoryBase;
  // Per rank: OTF2 comm -> the rank's index, for the communicators the rank belongs to (giving
  // every rank every communicator would grow with ranks x communicators: 162 M definitions, 13 GB,
  // for a 100,000-rank archive with one communicator per node).
  std::vector<std::unordered_map<uint32_t, uint32_t>> comm_index;
  std::map<uint32_t, uint32_t> comm_size;
  // One-sided windows: OTF2 window -> (window index, the same on every rank; ordinal among the
  // windows of its communicator, in definition order): what liblog's kWinCreate records carry.
  std::map<uint32_t, std::pair<uint32_t, int32_t>> window;
  format::Definitions defs;
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

  uint32_t category(const std::string& name, bool mpi,
                    format::CategoryKind kind = format::CategoryKind::kState, int64_t color = -1) {
    auto it = cat_of_name.find(name);
    if (it != cat_of_name.end()) return it->second;
    uint32_t id;
    if (mpi && next_mpi < format::kUserCategoryBase)
      id = next_mpi++;
    else if (next_user < 0xFFFF)
      id = next_user++;
    else
      return 0xFFFF;  // beyond 32767 user regions: one "cat65535" state
    format::Category c;
    c.id = id;
    c.kind = kind;
    // An archive has only the region's name: its class comes from the routine table.
    if (mpi && kind == format::CategoryKind::kState) c.routine = format::routine_by_name(name);
    c.color = color >= 0 ? static_cast<uint32_t>(color)
              : mpi      ? format::default_mpi_color(c.routine)
                         : 0x4CAF50 ^ ((id * 0x9E3779B1u) & 0x3F3F3F);
    c.name = name;
    categories.push_back(c);
    cat_of_name[name] = id;
    return id;
  }
};

// Sets the global definitions' callbacks, which fill a Globals.
void set_definition_callbacks(OTF2_GlobalDefReaderCallbacks* cb);
// The category of a region: made when first entered for the functions of unwound frames (paradigm
// SAMPLING), which are calling-context nodes, not states, and for regions never defined.
uint32_t region_category(const Globals& g, Model* m, uint32_t region);
// The archive-wide call site of calling context `context` (0 when unknown), and the id `rank`'s
// records carry for it.
uint32_t context_site(const Globals& g, Model* m, uint32_t context);
uint32_t local_site(Model* m, uint32_t rank, uint32_t site);
// Ranks, threads, categories and communicators from the global definitions.
Status build_model(const Globals& g, const std::string& program, Model* m);

}  // namespace mpe::interop::otf2_in
