// What each process tells the root after writing its events (Otf2Export::summary(), read back by
// parse_summary()), and what the root hands back to every process for its local definitions
// (region_table(), write_local_definitions()): the maps from local ids to the dense global refs.
#include "otf2_common.h"
#include "otf2_write_state.h"

namespace mpe::interop {

using detail::ContextNode;
using detail::ExportMarker;
using detail::location_ref;
using detail::LocationSummary;
using detail::ProcessContexts;

std::string Otf2Export::summary() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(impl_->locations.size()));
  for (const auto& l : impl_->locations) {
    w.u32(l.rank);
    w.u32(l.thread);
    w.u64(l.events);
    w.u64(l.last_time);
  }
  w.u32(static_cast<uint32_t>(impl_->used_cats.size()));
  for (uint32_t c : impl_->used_cats) w.u32(c);
  w.u32(static_cast<uint32_t>(impl_->markers.size()));
  for (const auto& m : impl_->markers) {
    w.u64(m.time);
    w.u64(m.location);
    w.u32(m.kind);
    w.u32(m.cat);
    w.i64(m.value);
  }
  // The calling contexts this process's events use, named by its first location.
  const auto& locs = impl_->locations;
  w.u64(locs.empty() ? ~0ull : location_ref(locs.front().rank, locs.front().thread));
  w.u32(static_cast<uint32_t>(impl_->contexts.size()));
  for (const auto& c : impl_->contexts) {
    w.u32(c.parent);
    w.u32(c.kind);
    w.u32(c.a);
    w.u32(c.b);
  }
  w.u32(static_cast<uint32_t>(impl_->used_windows.size()));
  for (const auto& [win, comm] : impl_->used_windows) {
    w.u32(win);
    w.u32(comm);
  }
  return std::move(w.data());
}

Status detail::parse_summary(const std::string& s, std::vector<LocationSummary>* locs,
                             std::set<uint32_t>* cats, std::vector<ExportMarker>* markers,
                             ProcessContexts* contexts, std::set<std::pair<uint32_t, uint32_t>>* windows) {
  ByteReader r(s.data(), s.size());
  const Status bad(StatusCode::kCorrupt, "a malformed OTF2 export summary");
  uint32_t n = 0;
  if (!r.u32(&n) || n > r.left() / 24) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    LocationSummary l;
    if (!r.u32(&l.rank) || !r.u32(&l.thread) || !r.u64(&l.events) || !r.u64(&l.last_time)) return bad;
    locs->push_back(l);
  }
  if (!r.u32(&n) || n > r.left() / 4) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t c = 0;
    if (!r.u32(&c)) return bad;
    cats->insert(c);
  }
  if (!r.u32(&n) || n > r.left() / 32) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    ExportMarker m;
    if (!r.u64(&m.time) || !r.u64(&m.location) || !r.u32(&m.kind) || !r.u32(&m.cat) || !r.i64(&m.value))
      return bad;
    markers->push_back(m);
  }
  if (!r.u64(&contexts->key) || !r.u32(&n) || n > r.left() / 16) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    ContextNode c;
    if (!r.u32(&c.parent) || !r.u32(&c.kind) || !r.u32(&c.a) || !r.u32(&c.b)) return bad;
    contexts->nodes.push_back(c);
  }
  if (!r.u32(&n) || n > r.left() / 8) return bad;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t win = 0, comm = 0;
    if (!r.u32(&win) || !r.u32(&comm)) return bad;
    windows->insert({win, comm});
  }
  return Status();
}

std::string Otf2Export::region_table() const {
  ByteWriter w;
  w.u32(static_cast<uint32_t>(impl_->region_cats.size()));
  for (uint32_t c : impl_->region_cats) w.u32(c);
  // Every process's calling-context map: one broadcast serves all, each takes its own.
  w.u32(static_cast<uint32_t>(impl_->context_maps.size()));
  for (const auto& [key, map] : impl_->context_maps) {
    w.u64(key);
    w.u32(static_cast<uint32_t>(map.size()));
    for (uint32_t g : map) w.u32(g);
  }
  w.u32(static_cast<uint32_t>(impl_->window_ids.size()));
  for (uint32_t id : impl_->window_ids) w.u32(id);
  return std::move(w.data());
}

Status Otf2Export::write_local_definitions(const std::string& region_table) {
  ByteReader r(region_table.data(), region_table.size());
  const Status bad(StatusCode::kCorrupt, "a malformed OTF2 region table");
  uint32_t n = 0;
  if (!r.u32(&n) || n > r.left() / 4) return bad;
  std::vector<uint32_t> cats(n);
  for (uint32_t& c : cats) r.u32(&c);
  // This process's calling contexts: the map listed under its first location.
  const auto& locs = impl_->locations;
  const uint64_t mine = locs.empty() ? ~0ull : location_ref(locs.front().rank, locs.front().thread);
  std::vector<uint32_t> context_map;
  uint32_t nmaps = 0;
  if (!r.u32(&nmaps)) return bad;
  for (uint32_t i = 0; i < nmaps; ++i) {
    uint64_t key = 0;
    uint32_t m = 0;
    if (!r.u64(&key) || !r.u32(&m) || m > r.left() / 4) return bad;
    std::vector<uint32_t> map(m);
    for (uint32_t& g : map) r.u32(&g);
    if (key == mine) context_map = std::move(map);
  }
  uint32_t nwindows = 0;
  if (!r.u32(&nwindows) || nwindows > r.left() / 4) return bad;
  OTF2_IdMap* windows = nwindows ? OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, nwindows) : nullptr;
  for (uint32_t k = 0, id = 0; k < nwindows && r.u32(&id); ++k)
    if (windows) OTF2_IdMap_AddIdPair(windows, id, k);
  // Opening and closing the definition files are collective: a bad map is reported after them.
  Status map_error;
  if (context_map.size() != impl_->contexts.size()) {
    map_error = Status(StatusCode::kCorrupt, "the OTF2 region table lacks this process's calling contexts");
    context_map.clear();
  }
  // An empty table is unreadable (OTF2 rejects a zero-capacity map): a run logged with every
  // call paused has no regions, and then no table; a log without call sites has no contexts.
  OTF2_IdMap* regions = n ? OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, n) : nullptr;
  for (uint32_t k = 0; k < n && regions; ++k) OTF2_IdMap_AddIdPair(regions, cats[k], k);
  OTF2_IdMap* context_ids =
      context_map.empty() ? nullptr
                          : OTF2_IdMap_CreateFromUint32Array(context_map.size(), context_map.data(), false);
  if (((n && !regions) || (!context_map.empty() && !context_ids) || (nwindows && !windows)) && map_error.ok())
    map_error = Status(StatusCode::kIoError, "out of memory for the OTF2 mapping tables");
  OTF2_ErrorCode e = OTF2_Archive_OpenDefFiles(impl_->archive);
  if (e != OTF2_SUCCESS) {
    if (regions) OTF2_IdMap_Free(regions);
    if (context_ids) OTF2_IdMap_Free(context_ids);
    if (windows) OTF2_IdMap_Free(windows);
    return detail::otf2_error("opening the OTF2 definition files", e);
  }
  OTF2_ErrorCode first = OTF2_SUCCESS;
  for (const auto& l : impl_->locations) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(impl_->archive, location_ref(l.rank, l.thread));
    e = !dw ? OTF2_ERROR_INVALID_CALL : OTF2_SUCCESS;
    if (e == OTF2_SUCCESS && regions) e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, regions);
    if (e == OTF2_SUCCESS && context_ids)
      e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_CALLING_CONTEXT, context_ids);
    if (e == OTF2_SUCCESS && windows) e = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_RMA_WIN, windows);
    if (dw) {
      const OTF2_ErrorCode c = OTF2_Archive_CloseDefWriter(impl_->archive, dw);
      if (e == OTF2_SUCCESS) e = c;
    }
    if (first == OTF2_SUCCESS) first = e;
  }
  if (regions) OTF2_IdMap_Free(regions);
  if (context_ids) OTF2_IdMap_Free(context_ids);
  if (windows) OTF2_IdMap_Free(windows);
  e = OTF2_Archive_CloseDefFiles(impl_->archive);
  if (first == OTF2_SUCCESS) first = e;
  MPE_RETURN_IF_ERROR(map_error);
  return first == OTF2_SUCCESS ? Status() : detail::otf2_error("writing the OTF2 local definitions", first);
}

}  // namespace mpe::interop
