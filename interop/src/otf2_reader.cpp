// OTF2 -> .mpelog, so that every consumer of our format (viewer, `mpe stat`, `mpe print`) reads
// OTF2 unchanged. Streams: one location at a time, records spilled as chunks every 32768, so
// memory holds one location's call stack and one chunk, not the trace. Calling contexts (ours,
// or Score-P's when it unwinds) give each state its call site. OTF2's request events (MpiIsend
// ... MpiIrecv, NonBlockingCollectiveRequest/Complete) become liblog's request records.
#include <filesystem>
#include <map>
#include <string>

#include "mpe/interop.h"
#include "mpe/log_writer.h"
#include "otf2_common.h"
#include "otf2_read_events.h"
#include "otf2_read_model.h"

namespace mpe::interop {

namespace {

using format::Record;
using otf2_in::Globals;
using otf2_in::LocationReader;
using otf2_in::Markers;
using otf2_in::Model;
using otf2_in::set_definition_callbacks;
using otf2_in::set_event_callbacks;

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
  set_definition_callbacks(G.defs);
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
  set_event_callbacks(G.events);

  AtomicOutput out(out_path);
  format::LogWriter writer;
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
