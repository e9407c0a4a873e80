// The root's global definitions, from every process's summary: clock, system tree, locations,
// regions, groups, communicators, windows, call sites as source code locations and calling
// contexts (unified over the processes), the metrics, and the markers.
#include <algorithm>
#include <cstdio>

#include "otf2_common.h"
#include "otf2_write_state.h"

namespace mpe::interop {

using detail::CommInfo;
using detail::ContextNode;
using detail::ExportMarker;
using detail::kFrameContext;
using detail::kStateContext;
using detail::location_ref;
using detail::LocationSummary;
using detail::ProcessContexts;
using format::RecordKind;

namespace {

// Global string table: written first, referenced by everything after.
class Strings {
 public:
  OTF2_StringRef ref(const std::string& s) {
    auto [it, fresh] = refs_.try_emplace(s, static_cast<OTF2_StringRef>(order_.size()));
    if (fresh) order_.push_back(s);
    return it->second;
  }
  OTF2_ErrorCode write(OTF2_GlobalDefWriter* w) const {
    for (size_t i = 0; i < order_.size(); ++i)
      if (OTF2_ErrorCode e =
              OTF2_GlobalDefWriter_WriteString(w, static_cast<OTF2_StringRef>(i), order_[i].c_str());
          e != OTF2_SUCCESS)
        return e;
    return OTF2_SUCCESS;
  }

 private:
  std::map<std::string, OTF2_StringRef> refs_;
  std::vector<std::string> order_;
};

std::string color_description(const format::LogFile& log, uint32_t cat) {
  const format::Category* c = log.category(cat);
  if (!c) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "color #%06x", c->color & 0xFFFFFF);
  return buf;
}

// The calling contexts of every process unified into one tree (equal paths are one node), and
// each process's local -> global map, in the order of `processes`.
Status unify_contexts(const std::vector<ProcessContexts>& processes, const std::set<uint32_t>& cats,
                      size_t nframes, size_t nsites, std::vector<ContextNode>* global,
                      std::vector<std::pair<uint64_t, std::vector<uint32_t>>>* maps) {
  const Status bad(StatusCode::kCorrupt, "a malformed calling context in an OTF2 export summary");
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> ids;
  maps->clear();
  for (const auto& p : processes) {
    std::vector<uint32_t> map;
    for (size_t k = 0; k < p.nodes.size(); ++k) {
      ContextNode c = p.nodes[k];
      const bool valid = c.kind == kFrameContext
                             ? c.a < nframes
                             : c.kind == kStateContext && cats.count(c.a) && c.b <= nsites;
      if (!valid || (c.parent != OTF2_UNDEFINED_CALLING_CONTEXT && c.parent >= k)) return bad;
      if (c.parent != OTF2_UNDEFINED_CALLING_CONTEXT) c.parent = map[c.parent];
      c.depth = c.parent == OTF2_UNDEFINED_CALLING_CONTEXT ? 1 : (*global)[c.parent].depth + 1;
      auto [it, fresh] = ids.try_emplace({c.parent, c.kind, c.a, c.b}, static_cast<uint32_t>(global->size()));
      if (fresh) global->push_back(c);
      map.push_back(it->second);
    }
    maps->emplace_back(p.key, std::move(map));
  }
  return Status();
}

std::string comm_name(const CommInfo& c, size_t world_size) {
  if (c.global_id == 0) return "MPI_COMM_WORLD";
  if (c.self) return "MPI_COMM_SELF";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s %016llx (%zu of %zu ranks)", c.inter ? "intercomm" : "comm",
                static_cast<unsigned long long>(c.global_id), c.members.size(), world_size);
  return buf;
}

// The root's global definitions: gathered from the summaries, every string given its ref (the
// strings are written first and everything after references them), then written in OTF2's order,
// each definition after those it references; last, the markers.
class GlobalDefinitions {
 public:
  explicit GlobalDefinitions(detail::ExportState& x) : x_(x), log_(x.log), d_(x.log.definitions()) {}

  // Parses the summaries; numbers the regions and unifies the calling contexts.
  Status gather(const std::vector<std::string>& summaries) {
    std::vector<ProcessContexts> process_contexts(summaries.size());
    for (size_t i = 0; i < summaries.size(); ++i)
      MPE_RETURN_IF_ERROR(
          detail::parse_summary(summaries[i], &locs_, &cats_, &markers_, &process_contexts[i], &windows_));
    std::sort(locs_.begin(), locs_.end(), [](const LocationSummary& a, const LocationSummary& b) {
      return a.rank != b.rank ? a.rank < b.rank : a.thread < b.thread;
    });
    for (const auto& l : locs_) trace_end_ = std::max(trace_end_, l.last_time);
    x_.region_cats.assign(cats_.begin(), cats_.end());
    return unify_contexts(process_contexts, cats_, x_.frames.size(), x_.site_frames.size(), &contexts_,
                          &x_.context_maps);
  }
  // Gives every string a ref, in the order they are first met.
  void name_strings() {
    str_.ref("");
    name_call_sites();
    name_hosts();
    for (const auto& h : hosts_) str_.ref(h.first);
    for (size_t r = 0; r < d_.world_size; ++r) str_.ref("MPI Rank " + std::to_string(r));
    for (const auto& l : locs_)
      str_.ref(l.thread == 0 ? "Master thread" : "Thread " + std::to_string(l.thread));
    for (uint32_t c : cats_) str_.ref(log_.category_name(c)), str_.ref(color_description(log_, c));
    str_.ref("MPI_COMM_WORLD locations");
    for (const auto& c : x_.comms) str_.ref(comm_name(c, d_.world_size));
    for (const auto& [win, comm] : windows_) str_.ref(window_name(win, comm));
    x_.window_ids.clear();
    for (const auto& [win, comm] : windows_) x_.window_ids.push_back(win);
    x_.metrics.strings([&](const std::string& s) { return str_.ref(s); });
  }
  // Writes the global definitions.
  Status write() {
    OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(x_.archive);
    if (!w) return detail::otf2_error("cannot get the global definition writer", OTF2_ERROR_INVALID_CALL);
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ull, 0, trace_end_ + 1,
                                                                 OTF2_UNDEFINED_TIMESTAMP);
    if (e == OTF2_SUCCESS) e = str_.write(w);
    if (e == OTF2_SUCCESS) e = write_system_tree(w);
    if (e == OTF2_SUCCESS) e = write_regions(w);
    if (e == OTF2_SUCCESS) e = write_groups_and_comms(w);
    if (e == OTF2_SUCCESS) e = write_calling_contexts(w);
    if (e == OTF2_SUCCESS) e = x_.metrics.write_definitions(w);
    if (e != OTF2_SUCCESS) return detail::otf2_error("writing the OTF2 global definitions", e);
    return Status();
  }
  // User events and MPI_Pcontrol calls as markers, one marker definition per event kind.
  Status write_markers() {
    if (markers_.empty()) return Status();
    OTF2_MarkerWriter* mw = OTF2_Archive_GetMarkerWriter(x_.archive);
    if (!mw) return detail::otf2_error("cannot get the marker writer", OTF2_ERROR_INVALID_CALL);
    OTF2_ErrorCode e = OTF2_SUCCESS;
    std::map<std::pair<uint32_t, uint32_t>, OTF2_MarkerRef> marker_of;
    std::sort(markers_.begin(), markers_.end(),
              [](const ExportMarker& a, const ExportMarker& b) { return a.time < b.time; });
    for (const auto& m : markers_) {
      auto [it, fresh] =
          marker_of.try_emplace({m.kind, m.cat}, static_cast<OTF2_MarkerRef>(marker_of.size()));
      if (fresh && e == OTF2_SUCCESS) {
        const bool pcontrol = m.kind == static_cast<uint32_t>(RecordKind::kMarker);
        e = OTF2_MarkerWriter_WriteDefMarker(mw, it->second, pcontrol ? "MPI" : "MPE user event",
                                             log_.category_name(m.cat).c_str(), OTF2_SEVERITY_NONE);
      }
    }
    for (const auto& m : markers_) {
      if (e != OTF2_SUCCESS) break;
      const bool pcontrol = m.kind == static_cast<uint32_t>(RecordKind::kMarker);
      const std::string text = (pcontrol ? "level=" : "data=") + std::to_string(m.value);
      e = OTF2_MarkerWriter_WriteMarker(mw, m.time, 0, marker_of[{m.kind, m.cat}], OTF2_MARKER_SCOPE_LOCATION,
                                        m.location, text.c_str());
    }
    const OTF2_ErrorCode closed = OTF2_Archive_CloseMarkerWriter(x_.archive, mw);
    if (e == OTF2_SUCCESS) e = closed;
    return e == OTF2_SUCCESS ? Status() : detail::otf2_error("writing the OTF2 markers", e);
  }

 private:
  // Call sites: a region per function of a frame (after the categories' regions), a source code
  // location per (file, line), and each context's region and source code location.
  void name_call_sites() {
    std::map<std::pair<std::string, std::string>, OTF2_RegionRef> frame_region_of;
    std::map<std::pair<std::string, int>, OTF2_SourceCodeLocationRef> scl_of;
    auto scl = [&](const Frame& f) {
      if (f.file.empty() || f.line <= 0) return OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
      auto [it, fresh] =
          scl_of.try_emplace({f.file, f.line}, static_cast<OTF2_SourceCodeLocationRef>(scls_.size()));
      if (fresh) scls_.emplace_back(f.file, f.line), str_.ref(f.file);
      return it->second;
    };
    context_region_.resize(contexts_.size());
    context_scl_.resize(contexts_.size());
    if (!contexts_.empty())
      str_.ref(detail::kModuleProperty), str_.ref(detail::kOffsetProperty),
          str_.ref(detail::kAddressProperty);
    for (size_t k = 0; k < contexts_.size(); ++k) {
      const ContextNode& c = contexts_[k];
      if (c.kind == kFrameContext) {
        const Frame& f = *x_.frames[c.a];
        auto [it, fresh] = frame_region_of.try_emplace(
            {f.function, f.file}, static_cast<OTF2_RegionRef>(x_.region_cats.size() + frame_regions_.size()));
        if (fresh) frame_regions_.push_back(&f), str_.ref(f.function), str_.ref(f.file);
        if (!f.module.empty()) str_.ref(f.module);
        context_region_[k] = it->second;
        context_scl_[k] = scl(f);
      } else {
        const auto& rc = x_.region_cats;
        context_region_[k] =
            static_cast<OTF2_RegionRef>(std::lower_bound(rc.begin(), rc.end(), c.a) - rc.begin());
        const auto* chain = c.b ? &x_.site_frames[c.b - 1] : nullptr;
        context_scl_[k] =
            chain && !chain->empty() ? scl(*x_.frames[chain->front()]) : OTF2_UNDEFINED_SOURCE_CODE_LOCATION;
      }
    }
  }
  // A system tree node per host, in the order of the ranks; "machine" and "node" named first.
  void name_hosts() {
    node_of_rank_.assign(d_.ranks.size(), 0);
    for (size_t r = 0; r < d_.ranks.size(); ++r) {
      const std::string host = d_.ranks[r].host.empty() ? "unknown host" : d_.ranks[r].host;
      auto it = std::find_if(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h.first == host; });
      if (it == hosts_.end())
        it = hosts_.insert(hosts_.end(), {host, static_cast<uint32_t>(hosts_.size() + 1)});
      node_of_rank_[r] = it->second;
    }
    s_machine_ = str_.ref("machine"), s_node_ = str_.ref("node");
  }
  std::string window_name(uint32_t win, uint32_t comm) const {
    return "window " + std::to_string(win & ((1u << detail::ExportState::kWindowBits) - 1)) + " of " +
           (comm < x_.comms.size() ? comm_name(x_.comms[comm], d_.world_size) : std::string("?"));
  }
  // The machine, its nodes, a location group per rank and a location per thread.
  OTF2_ErrorCode write_system_tree(OTF2_GlobalDefWriter* w) {
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, s_machine_, s_machine_,
                                                                OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (const auto& h : hosts_)
      if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteSystemTreeNode(w, h.second, str_.ref(h.first), s_node_, 0);
    for (uint32_t r = 0; r < d_.world_size && e == OTF2_SUCCESS; ++r)
      e = OTF2_GlobalDefWriter_WriteLocationGroup(
          w, r, str_.ref("MPI Rank " + std::to_string(r)), OTF2_LOCATION_GROUP_TYPE_PROCESS,
          r < node_of_rank_.size() ? node_of_rank_[r] : 0, OTF2_UNDEFINED_LOCATION_GROUP);
    for (const auto& l : locs_)
      if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteLocation(
            w, location_ref(l.rank, l.thread),
            str_.ref(l.thread == 0 ? "Master thread" : "Thread " + std::to_string(l.thread)),
            OTF2_LOCATION_TYPE_CPU_THREAD, l.events, l.rank);
    return e;
  }
  // The categories' regions, the frames' regions and the source code locations.
  OTF2_ErrorCode write_regions(OTF2_GlobalDefWriter* w) {
    OTF2_ErrorCode e = OTF2_SUCCESS;
    for (size_t k = 0; k < x_.region_cats.size() && e == OTF2_SUCCESS; ++k) {
      const uint32_t c = x_.region_cats[k];
      const std::string name = log_.category_name(c);
      const bool mpi = c < format::kUserCategoryBase;
      OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
      if (mpi) role = detail::region_role(format::routine_of(log_, c));
      // The colour rides in the description, so that a round trip keeps the user's colours.
      e = OTF2_GlobalDefWriter_WriteRegion(w, static_cast<OTF2_RegionRef>(k), str_.ref(name), str_.ref(name),
                                           str_.ref(color_description(log_, c)), role,
                                           mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER,
                                           OTF2_REGION_FLAG_NONE, OTF2_UNDEFINED_STRING, 0, 0);
    }
    // A frame's function is a region of paradigm SAMPLING, as Score-P names the functions it finds
    // by unwinding.
    for (size_t k = 0; k < frame_regions_.size() && e == OTF2_SUCCESS; ++k) {
      const Frame& f = *frame_regions_[k];
      e = OTF2_GlobalDefWriter_WriteRegion(
          w, static_cast<OTF2_RegionRef>(x_.region_cats.size() + k), str_.ref(f.function),
          str_.ref(f.function), str_.ref(""), OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING,
          OTF2_REGION_FLAG_NONE, f.file.empty() ? OTF2_UNDEFINED_STRING : str_.ref(f.file), 0, 0);
    }
    for (size_t k = 0; k < scls_.size() && e == OTF2_SUCCESS; ++k)
      e = OTF2_GlobalDefWriter_WriteSourceCodeLocation(w, static_cast<OTF2_SourceCodeLocationRef>(k),
                                                       str_.ref(scls_[k].first),
                                                       static_cast<uint32_t>(scls_[k].second));
    return e;
  }
  // The groups, the communicators on them, and the one-sided windows on those.
  OTF2_ErrorCode write_groups_and_comms(OTF2_GlobalDefWriter* w) {
    // Group 0: the location standing for each rank (its thread 0); communicator groups list world
    // ranks, i.e. positions in group 0.
    std::vector<uint64_t> rank_locations;
    for (uint32_t r = 0; r < d_.world_size; ++r) rank_locations.push_back(location_ref(r, 0));
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteGroup(
        w, 0, str_.ref("MPI_COMM_WORLD locations"), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
        OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(rank_locations.size()), rank_locations.data());
    for (size_t k = 0; k < x_.comms.size() && e == OTF2_SUCCESS; ++k) {
      const CommInfo& c = x_.comms[k];
      std::vector<uint64_t> members(c.members.begin(), c.members.end());
      e = OTF2_GlobalDefWriter_WriteGroup(
          w, static_cast<OTF2_GroupRef>(k + 1), str_.ref(comm_name(c, d_.world_size)),
          c.self ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
          OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(members.size()), members.data());
    }
    for (size_t k = 0; k < x_.comms.size() && e == OTF2_SUCCESS; ++k)
      e = OTF2_GlobalDefWriter_WriteComm(
          w, static_cast<OTF2_CommRef>(k), str_.ref(comm_name(x_.comms[k], d_.world_size)),
          static_cast<OTF2_GroupRef>(k + 1), OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    uint32_t window_ref = 0;
    for (const auto& [win, comm] : windows_)
      if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteRmaWin(w, window_ref++, str_.ref(window_name(win, comm)),
                                             comm < x_.comms.size() ? comm : OTF2_UNDEFINED_COMM,
                                             OTF2_RMA_WIN_FLAG_NONE);
    return e;
  }
  // Parents come first (unify_contexts keeps each process's order). A frame's module and offset
  // are the properties Score-P gives an unwound frame.
  OTF2_ErrorCode write_calling_contexts(OTF2_GlobalDefWriter* w) {
    OTF2_ErrorCode e = OTF2_SUCCESS;
    for (size_t k = 0; k < contexts_.size() && e == OTF2_SUCCESS; ++k) {
      const auto self = static_cast<OTF2_CallingContextRef>(k);
      e = OTF2_GlobalDefWriter_WriteCallingContext(w, self, context_region_[k], context_scl_[k],
                                                   contexts_[k].parent);
      if (contexts_[k].kind != kFrameContext || e != OTF2_SUCCESS) continue;
      const Frame& f = *x_.frames[contexts_[k].a];
      OTF2_AttributeValue v;
      if (!f.module.empty()) {
        v.stringRef = str_.ref(f.module);
        e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str_.ref(detail::kModuleProperty),
                                                             OTF2_TYPE_STRING, v);
        v.uint64 = f.offset;
        if (e == OTF2_SUCCESS)
          e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str_.ref(detail::kOffsetProperty),
                                                               OTF2_TYPE_UINT64, v);
      } else if (f.offset) {
        v.uint64 = f.offset;
        e = OTF2_GlobalDefWriter_WriteCallingContextProperty(w, self, str_.ref(detail::kAddressProperty),
                                                             OTF2_TYPE_UINT64, v);
      }
    }
    return e;
  }

  detail::ExportState& x_;
  const format::LogFile& log_;
  const format::Definitions& d_;
  // From the summaries.
  std::vector<LocationSummary> locs_;
  std::set<uint32_t> cats_;
  std::vector<ExportMarker> markers_;
  std::set<std::pair<uint32_t, uint32_t>> windows_;  // (window ref, comm ref)
  std::vector<ContextNode> contexts_;                // unified over the processes
  uint64_t trace_end_ = 0;
  Strings str_;
  // Call sites.
  std::vector<const Frame*> frame_regions_;  // by region ref - region_cats.size()
  std::vector<std::pair<std::string, int>> scls_;
  std::vector<OTF2_RegionRef> context_region_;
  std::vector<OTF2_SourceCodeLocationRef> context_scl_;
  // The system tree.
  std::vector<std::pair<std::string, uint32_t>> hosts_;  // name, node ref
  std::vector<uint32_t> node_of_rank_;
  OTF2_StringRef s_machine_ = 0, s_node_ = 0;
};

}  // namespace

Status Otf2Export::write_global_definitions(const std::vector<std::string>& summaries) {
  GlobalDefinitions defs(*impl_);
  MPE_RETURN_IF_ERROR(defs.gather(summaries));
  defs.name_strings();
  MPE_RETURN_IF_ERROR(defs.write());
  return defs.write_markers();
}

}  // namespace mpe::interop
