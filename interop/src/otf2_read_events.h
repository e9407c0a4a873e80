// The OTF2 reader's events pass: one location's events become records, spilled as chunks, and the
// archive's markers become user events and MPI_Pcontrol markers.
#pragma once

#include <otf2/otf2.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mpe/log_writer.h"
#include "mpe/records.h"
#include "mpe/rma.h"
#include "otf2_read_model.h"

namespace mpe::interop::otf2_in {

// One location's events -> records, spilled as chunks.
struct LocationReader {
  const Globals* g = nullptr;
  Model* m = nullptr;
  format::LogWriter* out = nullptr;
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
    return it == index.end() ? format::kUnknownComm : it->second;
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
    format::encode_events(records.data(), static_cast<uint32_t>(n), rank, thread, 1, &chunk);
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
  // A request's kRequestPost or kRequestDone (`kind`).
  void request(RecordKind kind, OTF2_TimeStamp time, uint16_t cat, uint32_t serial,
               format::RequestWhat what) {
    put(format::RequestRecord{ticks(time), cat, serial, what}.to_record(kind));
  }
  bool collective_category(uint32_t cat) {
    if (cat == kNoCategory) return false;
    auto [it, fresh] = is_collective.try_emplace(cat, false);
    if (fresh)
      for (const auto& c : m->categories)
        if (c.id == cat) it->second = detail::collective_op(c.routine).has_value();
    return it->second;
  }
  // The category of an RMA operation: its enclosing call when that names one, else `fallback`.
  uint16_t rma_cat(const char* fallback) {
    if (!stack.empty()) {
      const uint32_t cat = stack.back().cat;
      auto [it, fresh] = is_rma_op.try_emplace(cat, false);
      format::RmaKind kind;
      if (fresh)
        for (const auto& c : m->categories)
          if (c.id == cat) it->second = format::rma_kind_of(c.routine, &kind);
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
      put(format::WinCreateRecord{ticks(time), cat, static_cast<uint32_t>(w->second.first),
                                  static_cast<uint32_t>(w->second.second), comm(c->second), 0}
              .to_record());
    }
    return true;
  }
  void rma_op(OTF2_TimeStamp time, uint32_t win, uint32_t remote, const char* fallback, uint64_t sent,
              uint64_t received, uint64_t matching) {
    if (!window_created(win, time, static_cast<uint16_t>(m->category("MPI_Win_create", true)))) return;
    put(format::RmaOpRecord{ticks(time), rma_cat(fallback), static_cast<int32_t>(remote),
                            static_cast<uint32_t>(m->window[win].first), sent,
                            static_cast<int32_t>(std::min<uint64_t>(received, INT32_MAX))}
            .to_record());
    rma_open[matching] = {win, remote};
  }
  // An operation's completion: a kRmaComplete for its target (the operations to that target
  // issued before it complete with it).
  void rma_complete(OTF2_TimeStamp time, uint64_t matching) {
    const auto it = rma_open.find(matching);
    if (it == rma_open.end()) return;
    put(format::RmaCompleteRecord{ticks(time), enclosing_cat("MPI_Win_flush"),
                                  static_cast<int32_t>(it->second.second),
                                  static_cast<uint32_t>(m->window[it->second.first].first)}
            .to_record());
    rma_open.erase(it);
  }
  void leave(uint64_t t) {
    const Open f = stack.back();
    stack.pop_back();
    put(format::StateRecord{f.enter, static_cast<uint16_t>(f.cat), static_cast<uint32_t>(stack.size()),
                            f.site, t >= f.enter ? t - f.enter : 0}
            .to_record());
  }
  // Returns the message record's category.
  uint16_t message(RecordKind kind, OTF2_TimeStamp time, uint32_t peer, OTF2_CommRef c, uint32_t tag,
                   uint64_t len) {
    const uint16_t cat = enclosing_cat(kind == RecordKind::kSend ? "MPI_Send" : "MPI_Recv");
    const auto p = static_cast<int32_t>(peer);
    const auto g = static_cast<int32_t>(tag);
    put(kind == RecordKind::kSend ? format::SendRecord{ticks(time), cat, p, g, comm(c), len}.to_record()
                                  : format::RecvRecord{ticks(time), cat, p, g, comm(c), len}.to_record());
    return cat;
  }
};

// Markers (our user events and MPI_Pcontrol calls, or another producer's markers) with a
// location scope become records of that location: user events, or Pcontrol markers.
struct Markers {
  const Globals* g = nullptr;
  Model* m = nullptr;
  std::map<OTF2_MarkerRef, std::pair<std::string, std::string>> defs;  // group, category
  std::map<uint64_t, std::vector<Record>> of_location;
};

// Sets the event callbacks, which feed the LocationReader they are registered with.
void set_event_callbacks(OTF2_EvtReaderCallbacks* cb);
// Reads the archive's marker file, if it has one (`<anchor without .otf2>.marker`).
Status read_markers(OTF2_Reader* reader, const std::string& anchor, Markers* markers);

}  // namespace mpe::interop::otf2_in
