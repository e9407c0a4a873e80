// Encoding and validating decoding of the live stream's messages (layout in mpe/live_wire.h).
#include "mpe/byte_codec.h"
#include "mpe/live_wire.h"

namespace mpe::live_stream {

namespace {

// The smallest encoding of each repeated item, so a damaged count cannot ask for a huge
// allocation (ByteReader::count).
constexpr size_t kMinThread = 4 + 1 + 8 + 4 + 4 + 4 * 4 + 1 + 4;
constexpr size_t kMinComm = 8 + 4 + 4;
constexpr size_t kMinEvent = 1 + 8 + 4 + 4 + 8 + 8 + 4;

void header(ByteWriter& w, MessageKind kind) {
  w.u32(kMagic);
  w.u32(kWireVersion);
  w.u8(static_cast<uint8_t>(kind));
}

void i32(ByteWriter& w, int32_t v) { w.u32(static_cast<uint32_t>(v)); }
bool i32(ByteReader& r, int32_t* v) {
  uint32_t u;
  if (!r.u32(&u)) return false;
  *v = static_cast<int32_t>(u);
  return true;
}

Status corrupt(const char* what) {
  return Status(StatusCode::kCorrupt, std::string("live message: ") + what);
}

}  // namespace

uint32_t CommDef::size() const {
  uint64_t n = 0;
  for (const auto& [first, count] : ranges) n += count;
  return static_cast<uint32_t>(n);
}

std::vector<int32_t> CommDef::members() const {
  std::vector<int32_t> m;
  m.reserve(size());
  for (const auto& [first, count] : ranges)
    for (uint32_t i = 0; i < count; ++i) m.push_back(static_cast<int32_t>(first + i));
  return m;
}

std::vector<std::pair<uint32_t, uint32_t>> to_ranges(const std::vector<int32_t>& members) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (int32_t m : members) {
    const auto u = static_cast<uint32_t>(m);
    if (!out.empty() && out.back().first + out.back().second == u)
      ++out.back().second;
    else
      out.emplace_back(u, 1);
  }
  return out;
}

std::string encode(const RankFrame& f) {
  ByteWriter w;
  header(w, MessageKind::kRankFrame);
  w.u32(f.rank);
  w.u32(f.world_size);
  w.u32(f.pid);
  w.str(f.host);
  w.u64(f.seq);
  w.u64(f.interval_start_ns);
  w.u64(f.interval_end_ns);
  w.u8(static_cast<uint8_t>((f.finalized ? 1 : 0) | (f.aggregated ? 2 : 0)));
  for (uint64_t v : {f.frames_dropped, f.events_dropped, f.sends, f.send_bytes, f.recvs, f.recv_bytes,
                     f.collectives, f.mpi_ns})
    w.u64(v);
  w.u32(static_cast<uint32_t>(f.routines.size()));
  for (const RoutineTime& r : f.routines) {
    w.str(r.routine);
    w.u64(r.ns);
    w.u64(r.calls);
  }
  w.u32(static_cast<uint32_t>(f.threads.size()));
  for (const ThreadNow& t : f.threads) {
    w.u32(t.thread);
    w.u8(t.in_mpi ? 1 : 0);
    w.u64(t.since_ns);
    w.str(t.routine);
    w.str(t.callsite);
    for (int32_t v : {t.comm, t.peer, t.tag, t.root}) i32(w, v);
    w.u8(static_cast<uint8_t>(t.wait));
    w.u32(static_cast<uint32_t>(t.peers.size()));
    for (int32_t p : t.peers) i32(w, p);
  }
  w.u32(static_cast<uint32_t>(f.comms.size()));
  for (const CommDef& c : f.comms) {
    w.u64(c.key);
    w.str(c.label);
    w.u32(static_cast<uint32_t>(c.ranges.size()));
    for (const auto& [first, count] : c.ranges) {
      w.u32(first);
      w.u32(count);
    }
  }
  w.u32(static_cast<uint32_t>(f.events.size()));
  for (const TrafficEvent& e : f.events) {
    w.u8(static_cast<uint8_t>(e.kind));
    w.u64(e.t_ns);
    i32(w, e.peer);
    i32(w, e.tag);
    w.u64(e.comm);
    w.u64(e.bytes);
    w.str(e.routine);
  }
  for (const std::vector<PeerTotal>* totals : {&f.per_peer, &f.received_per_peer}) {
    w.u32(static_cast<uint32_t>(totals->size()));
    for (const PeerTotal& p : *totals) {
      i32(w, p.peer);
      w.u64(p.count);
      w.u64(p.bytes);
    }
  }
  return std::move(w.data());
}

std::string encode(const JobEnd& e) {
  ByteWriter w;
  header(w, MessageKind::kJobEnd);
  i32(w, e.exit_status);
  w.str(e.mpelog);
  return std::move(w.data());
}

StatusOr<MessageKind> peek_kind(const void* data, size_t n) {
  ByteReader r(static_cast<const char*>(data), n);
  uint32_t magic = 0, version = 0;
  uint8_t kind = 0;
  if (!r.u32(&magic) || magic != kMagic) return corrupt("not an mpe-tools live message");
  if (!r.u32(&version) || !r.u8(&kind)) return corrupt("truncated header");
  if (version != kWireVersion)
    return Status(StatusCode::kUnsupportedVersion, "live message version " + std::to_string(version) +
                                                       ", this viewer reads " + std::to_string(kWireVersion));
  if (kind != static_cast<uint8_t>(MessageKind::kRankFrame) &&
      kind != static_cast<uint8_t>(MessageKind::kJobEnd))
    return corrupt("unknown message kind");
  return static_cast<MessageKind>(kind);
}

StatusOr<RankFrame> decode_frame(const void* data, size_t n) {
  StatusOr<MessageKind> kind = peek_kind(data, n);
  if (!kind.ok()) return kind.status();
  if (*kind != MessageKind::kRankFrame) return corrupt("not a rank frame");
  ByteReader r(static_cast<const char*>(data) + 9, n - 9);
  RankFrame f;
  uint8_t flags = 0;
  if (!r.u32(&f.rank) || !r.u32(&f.world_size) || !r.u32(&f.pid) || !r.str(&f.host) || !r.u64(&f.seq) ||
      !r.u64(&f.interval_start_ns) || !r.u64(&f.interval_end_ns) || !r.u8(&flags))
    return corrupt("truncated frame header");
  if (f.world_size == 0 || f.rank >= f.world_size) return corrupt("rank outside the job");
  f.finalized = flags & 1;
  f.aggregated = flags & 2;
  for (uint64_t* v : {&f.frames_dropped, &f.events_dropped, &f.sends, &f.send_bytes, &f.recvs, &f.recv_bytes,
                      &f.collectives, &f.mpi_ns})
    if (!r.u64(v)) return corrupt("truncated counters");
  uint32_t count = 0;
  if (!r.count(&count, 4 + 16)) return corrupt("bad routine count");
  f.routines.resize(count);
  for (RoutineTime& rt : f.routines)
    if (!r.str(&rt.routine) || !r.u64(&rt.ns) || !r.u64(&rt.calls)) return corrupt("truncated routine");
  if (!r.count(&count, kMinThread)) return corrupt("bad thread count");
  f.threads.resize(count);
  for (ThreadNow& t : f.threads) {
    uint8_t in_mpi = 0, wait = 0;
    uint32_t npeers = 0;
    if (!r.u32(&t.thread) || !r.u8(&in_mpi) || !r.u64(&t.since_ns) || !r.str(&t.routine) ||
        !r.str(&t.callsite) || !i32(r, &t.comm) || !i32(r, &t.peer) || !i32(r, &t.tag) || !i32(r, &t.root) ||
        !r.u8(&wait) || !r.count(&npeers, 4))
      return corrupt("truncated thread");
    if (wait > static_cast<uint8_t>(WaitKind::kUnknown)) return corrupt("bad wait kind");
    t.in_mpi = in_mpi != 0;
    t.wait = static_cast<WaitKind>(wait);
    t.peers.resize(npeers);
    for (int32_t& p : t.peers)
      if (!i32(r, &p)) return corrupt("truncated peers");
  }
  if (!r.count(&count, kMinComm)) return corrupt("bad communicator count");
  f.comms.resize(count);
  for (CommDef& c : f.comms) {
    uint32_t nranges = 0;
    if (!r.u64(&c.key) || !r.str(&c.label) || !r.count(&nranges, 8)) return corrupt("truncated communicator");
    c.ranges.resize(nranges);
    uint64_t total = 0;
    for (auto& [first, len] : c.ranges) {
      if (!r.u32(&first) || !r.u32(&len)) return corrupt("truncated communicator");
      if (uint64_t{first} + len > f.world_size) return corrupt("communicator member outside the job");
      total += len;
    }
    if (total > f.world_size) return corrupt("communicator larger than the job");
  }
  for (const ThreadNow& t : f.threads) {
    if (t.comm >= static_cast<int32_t>(f.comms.size()) || t.comm < -1)
      return corrupt("bad communicator index");
    for (int32_t p : t.peers)
      if (p < 0 || static_cast<uint32_t>(p) >= f.world_size) return corrupt("peer outside the job");
  }
  if (!r.count(&count, kMinEvent)) return corrupt("bad event count");
  f.events.resize(count);
  for (TrafficEvent& e : f.events) {
    uint8_t kind8 = 0;
    if (!r.u8(&kind8) || !r.u64(&e.t_ns) || !i32(r, &e.peer) || !i32(r, &e.tag) || !r.u64(&e.comm) ||
        !r.u64(&e.bytes) || !r.str(&e.routine))
      return corrupt("truncated event");
    if (kind8 < 1 || kind8 > 3) return corrupt("bad event kind");
    e.kind = static_cast<EventKind>(kind8);
    if (e.kind != EventKind::kCollective && (e.peer < 0 || static_cast<uint32_t>(e.peer) >= f.world_size))
      return corrupt("event peer outside the job");
  }
  for (std::vector<PeerTotal>* totals : {&f.per_peer, &f.received_per_peer}) {
    if (!r.count(&count, 20)) return corrupt("bad per-peer count");
    totals->resize(count);
    for (PeerTotal& p : *totals) {
      if (!i32(r, &p.peer) || !r.u64(&p.count) || !r.u64(&p.bytes))
        return corrupt("truncated per-peer total");
      if (p.peer < 0 || static_cast<uint32_t>(p.peer) >= f.world_size) return corrupt("peer outside the job");
    }
  }
  if (r.left() != 0) return corrupt("trailing bytes");
  return f;
}

StatusOr<JobEnd> decode_job_end(const void* data, size_t n) {
  StatusOr<MessageKind> kind = peek_kind(data, n);
  if (!kind.ok()) return kind.status();
  if (*kind != MessageKind::kJobEnd) return corrupt("not a job end");
  ByteReader r(static_cast<const char*>(data) + 9, n - 9);
  JobEnd e;
  if (!i32(r, &e.exit_status) || !r.str(&e.mpelog) || r.left() != 0) return corrupt("bad job end");
  return e;
}

}  // namespace mpe::live_stream
