// libmpetime's profile in the tools' one gather encoding (mpe/byte_codec.h): what each rank sends
// rank 0 at finalize.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "mpe/byte_codec.h"
#include "profile.h"

namespace mpe::tools::time {

namespace {

// Routines and sites are at least their eight counters (64 bytes) and a name's length.
constexpr size_t kMinStatsBytes = 8 * 8 + 4;

void put_stats(ByteWriter& out, const CallStats& c) {
  out.u64(c.calls);
  out.u64(c.incl_ns);
  out.u64(c.excl_ns);
  out.u64(c.min_ns);
  out.u64(c.max_ns);
  out.u64(c.bytes_sent);
  out.u64(c.bytes_recv);
  out.u64(c.messages);
}

bool get_stats(ByteReader& in, CallStats* c) {
  return in.u64(&c->calls) && in.u64(&c->incl_ns) && in.u64(&c->excl_ns) && in.u64(&c->min_ns) &&
         in.u64(&c->max_ns) && in.u64(&c->bytes_sent) && in.u64(&c->bytes_recv) && in.u64(&c->messages);
}

bool get_int(ByteReader& in, int* v) {
  int64_t x = 0;
  if (!in.i64(&x) || x < INT32_MIN || x > INT32_MAX) return false;
  *v = static_cast<int>(x);
  return true;
}

}  // namespace

std::string encode_profile(const RankProfile& p) {
  ByteWriter out;
  out.i64(p.rank);
  out.i64(p.size);
  out.i64(p.threads);
  out.str(p.host);
  out.str(p.command);
  out.str(p.mpi);
  out.str(p.timer);
  out.u64(p.run_ns);
  out.u64(p.mpi_ns);
  out.u32(static_cast<uint32_t>(p.routines.size()));
  for (const RoutineStats& r : p.routines) {
    out.str(r.name);
    put_stats(out, r);
  }
  out.u32(static_cast<uint32_t>(p.sites.size()));
  for (const SiteStats& c : p.sites) {
    out.u32(c.id);
    out.str(c.routine);
    put_stats(out, c);
    encode_frames(out, c.frames);
  }
  return std::move(out.data());
}

StatusOr<RankProfile> decode_profile(std::string_view bytes) {
  ByteReader in(bytes.data(), bytes.size());
  const Status truncated(StatusCode::kTruncated, "the profile's bytes end early");
  RankProfile p;
  if (!get_int(in, &p.rank) || !get_int(in, &p.size) || !get_int(in, &p.threads) || !in.str(&p.host) ||
      !in.str(&p.command) || !in.str(&p.mpi) || !in.str(&p.timer) || !in.u64(&p.run_ns) || !in.u64(&p.mpi_ns))
    return truncated;
  if (p.size < 1 || p.rank < 0 || p.rank >= p.size)
    return Status(StatusCode::kCorrupt, "rank " + std::to_string(p.rank) + " of " + std::to_string(p.size));
  uint32_t n = 0;
  if (!in.count(&n, kMinStatsBytes)) return truncated;
  p.routines.resize(n);
  for (RoutineStats& r : p.routines)
    if (!in.str(&r.name) || !get_stats(in, &r)) return truncated;
  if (!in.count(&n, kMinStatsBytes + 4 + 4)) return truncated;
  p.sites.resize(n);
  for (SiteStats& c : p.sites)
    if (!in.u32(&c.id) || !in.str(&c.routine) || !get_stats(in, &c) || !decode_frames(in, &c.frames))
      return truncated;
  if (in.left() != 0)
    return Status(StatusCode::kCorrupt, std::to_string(in.left()) + " bytes after the profile");
  return p;
}

}  // namespace mpe::tools::time
