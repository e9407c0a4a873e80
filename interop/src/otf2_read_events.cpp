// The OTF2 reader's events pass (otf2_read_events.h): OTF2's event callbacks, in the order OTF2
// declares them, and the markers.
#include "otf2_read_events.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "mpe/records.h"
#include "mpe/routine.h"

namespace mpe::interop::otf2_in {

namespace {

LocationReader* self(void* u) { return static_cast<LocationReader*>(u); }

// A collective's root as a record holds it: -1 for none (OTF2_UNDEFINED_UINT32).
int32_t root_of(uint32_t root) { return root == OTF2_UNDEFINED_UINT32 ? -1 : static_cast<int32_t>(root); }
// Bytes received as a collective record holds them, saturated at 2^31-1.
int32_t saturated(uint64_t bytes) { return static_cast<int32_t>(std::min<uint64_t>(bytes, INT32_MAX)); }

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
  L->request(RecordKind::kRequestPost, time, cat, L->post(id), format::RequestWhat::kSend);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                    OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  if (const uint32_t serial = L->done(id))
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
               format::RequestWhat::kSend);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                   OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  L->request(RecordKind::kRequestPost, time, L->enclosing_cat("MPI_Irecv"), L->post(id),
             format::RequestWhat::kRecv);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_request_cancelled(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                       OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  L->open_collectives.erase(id);
  if (const uint32_t serial = L->done(id))
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
               format::RequestWhat::kCancelled);
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
    L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
               format::RequestWhat::kRecv);
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
  L->put(format::CollectiveRecord{begin, L->enclosing_cat(detail::collective_name(op)), root_of(root),
                                  L->comm(c), sent, saturated(received)}
             .to_record());
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
// A nonblocking collective's start, inside its call (MPI_Iallreduce...): its collective record,
// completed when its NonBlockingCollectiveComplete comes, and its request's post.
OTF2_CallbackCode ev_nbc_request(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                 OTF2_AttributeList*, uint64_t id) {
  auto* L = self(u);
  const uint16_t cat = L->stack.empty() ? kNoCategory : static_cast<uint16_t>(L->stack.back().cat);
  L->open_collectives[id] = L->records.size();
  L->put(format::CollectiveRecord{L->ticks(time), cat, -1, format::kUnknownComm, 0, 0}.to_record());
  L->request(RecordKind::kRequestPost, time, cat, L->post(id), format::RequestWhat::kCollective);
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
    format::CollectiveRecord coll = format::as<format::CollectiveRecord>(r);
    // Its call was not a collective's region (another producer's trace): name it by the operation.
    if (!L->collective_category(coll.cat))
      coll.cat = static_cast<uint16_t>(L->m->category(nonblocking_name(op), true));
    coll.root = root_of(root);
    coll.received = saturated(received);
    coll.comm = L->comm(c);
    coll.sent = sent;
    r = coll.to_record();
    L->open_collectives.erase(open);
  }
  L->request(RecordKind::kRequestDone, time, L->enclosing_cat("MPI_Wait"), serial,
             format::RequestWhat::kCollective);
  return L->error.ok() ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
OTF2_CallbackCode ev_comm_create(OTF2_LocationRef, OTF2_TimeStamp time, uint64_t, void* u,
                                 OTF2_AttributeList*, OTF2_CommRef c) {
  auto* L = self(u);
  const auto size = L->m->comm_size.find(c);
  L->put(format::CommCreateRecord{L->ticks(time), 0, L->comm(c),
                                  size == L->m->comm_size.end() ? 0 : static_cast<int32_t>(size->second)}
             .to_record());
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
  // A foreign archive names the routine only: its class comes from the routine table.
  const std::string& name = def->second.second;
  if (def->second.first == "MPI" &&
      format::routine_by_name(name).family == format::RoutineFamily::kPcontrol) {
    const auto level = static_cast<int32_t>(number_after(text, "level="));
    r = format::MarkerRecord{t, static_cast<uint16_t>(M->m->category(name, true)), level, level != 0}
            .to_record();
  } else {
    const uint32_t cat = M->m->category(name, false, format::CategoryKind::kEvent);
    r = format::UserEventRecord{t, static_cast<uint16_t>(cat), 0,
                                static_cast<uint64_t>(number_after(text, "data="))}
            .to_record();
  }
  M->of_location[location].push_back(r);
  return OTF2_CALLBACK_SUCCESS;
}

}  // namespace

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

void set_event_callbacks(OTF2_EvtReaderCallbacks* cb) {
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
  OTF2_EvtReaderCallbacks_SetCallingContextEnterCallback(cb, ev_context_enter);
  OTF2_EvtReaderCallbacks_SetCallingContextLeaveCallback(cb, ev_context_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, ev_request_cancelled);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, ev_nbc_request);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, ev_nbc_complete);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, ev_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_coll_end);
  OTF2_EvtReaderCallbacks_SetCommCreateCallback(cb, ev_comm_create);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cb, ev_metric);
  OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(cb, ev_rma_win_create);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, ev_rma_put);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, ev_rma_get);
  OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cb, ev_rma_atomic);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, ev_rma_complete);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cb, ev_rma_complete);
  OTF2_EvtReaderCallbacks_SetRmaOpCompleteRemoteCallback(cb, ev_rma_complete);
}

}  // namespace mpe::interop::otf2_in
