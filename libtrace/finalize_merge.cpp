// The merge without a funnel.
//
// Steps: an allgather of the ranks' chunk bytes (a running sum of them) gives each rank where
// its chunks start; the planner places them; each rank copies its own chunks from its spill file
// into the logfile with pread/pwrite, all ranks at once; rank 0 gathers only the index entries
// and rank definitions (~100 B per chunk) and writes the tail, then the header. Cost: one pass
// over each rank's own data, in parallel, plus one gather of the index.
// Unshared directories: rank 0 writes a token at the start of the file, and a rank writes its own
// part only when it reads that token back under rank 0's path. One allgather tells every rank who
// sees the file and where each rank's part starts; the ranks that do not see it stream their
// chunks to ranks that do (merge_relay.h), in bounded memory. When every rank sees the file this
// costs nothing more: the allgather (24 bytes per rank) replaces the scan and the sum of the totals.
// The file is written under a temporary name and renamed when complete, so a merge that fails or
// dies never leaves a partial file by the logfile's name.
// Failure modes: a local step that fails (a write, an allocation) only sets this rank's flag; the
// ranks run the same collectives whatever happens, and agree on the flags (one allreduce) before
// rank 0 completes the file, so one rank's error cannot leave the others waiting. A failed merge
// removes the output; the spill files are kept for `mpe merge --recover`.
#include "finalize_merge.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <new>
#include <vector>

#include "log_state.h"
#include "merge_relay.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/file_io.h"
#include "mpe/log_layout.h"
#include "spill.h"

namespace mpe::tools::log {

namespace {

// What rank 0 gathers from each rank: [uint64 index bytes][index entries][serialized rank meta].
std::string tail_contribution(const std::vector<format::IndexEntry>& index) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const std::string meta = format::serialize_rank_meta(g_meta);
  const uint64_t n = index.size() * sizeof(format::IndexEntry);
  std::string out(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(index.data()), n);
  out += meta;
  return out;
}

// Rank 0: the definitions and index of the whole run from every rank's contribution.
Status complete_file(int fd, const format::Definitions& base, const std::vector<std::string>& parts,
                     uint64_t events_total, uint64_t* file_size) {
  format::Definitions d = base;
  d.world_size = static_cast<uint32_t>(parts.size());
  d.ranks.resize(parts.size());
  std::vector<format::IndexEntry> index;
  format::MemberInterner interner;  // one copy of each group (MPI_COMM_WORLD's...) for all ranks
  for (size_t r = 0; r < parts.size(); ++r) {
    const std::string& p = parts[r];
    uint64_t n = 0;
    if (p.size() < sizeof n)
      return Status(StatusCode::kCorrupt, "rank " + std::to_string(r) + " sent no index");
    std::memcpy(&n, p.data(), sizeof n);
    if (n % sizeof(format::IndexEntry) != 0 || n > p.size() - sizeof n)
      return Status(StatusCode::kCorrupt, "rank " + std::to_string(r) + " sent a damaged index");
    const size_t at = index.size();
    index.resize(at + n / sizeof(format::IndexEntry));
    if (n) std::memcpy(index.data() + at, p.data() + sizeof n, n);
    MPE_RETURN_IF_ERROR(format::parse_rank_meta(p.data() + sizeof n + n, p.size() - sizeof n - n, &d.ranks[r],
                                                format::kCurrentVersion, &interner));
  }
  format::merge_user_categories(&d);
  StatusOr<uint64_t> size = format::write_tail_and_header(fd, d, index, events_total);
  if (!size.ok()) return size.status();
  *file_size = size.value();
  return Status();
}

// The logfile's name while it is being written.
constexpr const char* kTemporarySuffix = ".tmp";

// What rank 0 tells the others once it created the file: whether it could, the token it wrote at
// the file's start, and the file's name (fixed size: broadcast without allocating).
struct Created {
  int32_t ok = 0;
  uint64_t relay_piece = kRelayPieceBytes;  // rank 0's MPE_LOG_RELAY_PIECE: both ends of a relay agree
  char token[16] = {};
  char path[4096] = {};
};

// What each rank tells every rank: its chunk bytes and records, and whether it sees rank 0's file.
struct RankFacts {
  uint64_t bytes = 0;
  uint64_t records = 0;
  uint64_t sees = 0;
};

// Creates the file and writes at its start a token no other run writes (host, pid, time); the
// header later overwrites it. Returns the descriptor, or -1 with errno set.
int create_with_token(const char* path, char* token) {
  const int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const uint64_t words[2] = {
      static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec),
      (static_cast<uint64_t>(::getpid()) << 32) ^ static_cast<uint64_t>(::gethostid())};
  std::memcpy(token, words, sizeof words);
  if (!io::pwrite_all_raw(fd, token, sizeof words, 0)) {
    const int err = errno;
    ::close(fd);
    ::unlink(path);
    errno = err;
    return -1;
  }
  ::fdatasync(fd);  // a network file system shows other nodes the token once its server has it
  return fd;
}

// Opens rank 0's file when this rank sees it: a file by that name holding the same token. The
// token, not the inode, decides: a node-local directory may hold another run's file by the same
// name, and NFS clients may number the same file's device differently. Returns -1 otherwise.
int open_if_seen(const Created& c) {
  const int fd = ::open(c.path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  char token[sizeof c.token];
  if (::pread(fd, token, sizeof token, 0) == static_cast<ssize_t>(sizeof token) &&
      std::memcmp(token, c.token, sizeof token) == 0)
    return fd;
  ::close(fd);
  return -1;
}

// A failure of this rank's part of the merge. Between the collectives nothing may throw on one
// rank only, so a failure is noted without allocating (a literal and errno) and turned into a
// Status after the last collective; the first one noted is reported.
struct Failure {
  bool ok = true;
  const char* why = nullptr;
  int why_errno = 0;
  Status detail;  // a failure that came with its own Status

  void operator()(const char* reason, const Status* s = nullptr, int err = 0) noexcept {
    if (ok) {
      why = reason;
      why_errno = err;
      try {
        if (s) detail = *s;
      } catch (const std::bad_alloc&) {
        // The literal reason alone is reported.
      }
    }
    ok = false;
  }
  // This rank's reason, or that another rank failed.
  Status status() const {
    if (!why) return Status(StatusCode::kIoError, kAnotherRankFailed);
    std::string message = why;
    if (!detail.ok())
      message += ": " + detail.to_string();
    else if (why_errno)
      message += std::string(": ") + std::strerror(why_errno);
    return Status(detail.ok() ? StatusCode::kIoError : detail.code(), message);
  }
};

// Rank 0: creates the file under a temporary name, renamed once complete, so that no partial
// file ever carries the logfile's name; *created says what the others need to know. Returns the
// descriptor, or -1.
int create_temporary(const std::string& tmp, Created* created, Failure& fail) {
  created->relay_piece =
      static_cast<uint64_t>(config::env_int("MPE_LOG_RELAY_PIECE", kRelayPieceBytes, 4096, int64_t{1} << 30));
  if (tmp.size() >= sizeof created->path) {
    fail("the logfile's path is too long", nullptr, ENAMETOOLONG);
    return -1;
  }
  const int fd = create_with_token(tmp.c_str(), created->token);
  if (fd < 0) fail("cannot create the logfile", nullptr, errno);
  created->ok = fd >= 0;
  std::memcpy(created->path, tmp.c_str(), tmp.size() + 1);
  return fd;
}

// The fallback for the ranks that do not see the file: each streams its chunks to a rank that
// does (merge_relay.h). Collective over g_comm; skipped by every rank when any rank has failed
// (a relay needs both ends).
void relay_blind_ranks(const std::vector<RankFacts>& facts, const format::RankPlacement& placed, int fd,
                       uint64_t piece_bytes, Failure& fail) {
  std::vector<int> writer;
  RelayBuffers buffers;
  buffers.piece_bytes = piece_bytes;
  try {
    std::vector<char> sees;
    for (const RankFacts& f : facts) sees.push_back(f.sees != 0);
    writer = relay_writers(sees);
  } catch (const std::bad_alloc&) {
    fail("out of memory planning the relay");
  }
  const bool blind = fd < 0;
  bool writes_for_others = false;
  for (size_t r = 0; r < writer.size(); ++r)
    writes_for_others |= writer[r] == g_rank && static_cast<int>(r) != g_rank;
  if (fail.ok && (blind || writes_for_others) && !buffers.allocate())
    fail("out of memory for the relay buffers");
  if (!collective::all_ok(fail.ok, g_comm)) return;
  if (blind) {
    const Status s = relay_send(spill_fd(), placed, writer[static_cast<size_t>(g_rank)], g_comm, buffers);
    if (!s.ok()) fail("cannot relay the chunks to a rank that sees the logfile", &s);
    return;
  }
  uint64_t start = format::kEventsStart;
  for (size_t r = 0; r < facts.size(); ++r) {
    if (writer[r] == g_rank && static_cast<int>(r) != g_rank) {
      const Status s = relay_receive(static_cast<int>(r), start, facts[r].bytes, fd, g_comm, buffers);
      if (!s.ok()) fail("cannot write the chunks relayed by a rank that does not see the logfile", &s);
    }
    start += facts[r].bytes;
  }
}

}  // namespace

StatusOr<MergeTotals> merge_at_finalize(const std::string& out, const format::Definitions& base) {
  Failure fail;
  std::vector<RankFacts> facts;
  std::string tmp;
  format::RankPlacement placed;
  RankFacts mine;
  try {
    facts.resize(static_cast<size_t>(g_size));
    tmp = out + kTemporarySuffix;
    placed.chunks = spilled_chunks();
    mine.bytes = format::chunk_bytes(placed.chunks);
    for (const auto& c : placed.chunks) mine.records += c.header.nrecords;
  } catch (const std::bad_alloc&) {
    fail("out of memory listing the spilled chunks");
  }
  // The allgather below needs every rank's buffer: agree first, and stop before any file exists.
  if (!collective::all_ok(fail.ok, g_comm))
    return fail.why ? Status::out_of_memory() : Status(StatusCode::kIoError, kAnotherRankFailed);

  Created created;
  int fd = g_rank == 0 ? create_temporary(tmp, &created, fail) : -1;
  collective::broadcast_value(&created, 0, g_comm);
  if (!created.ok)
    return Status(
        StatusCode::kIoError,
        "cannot create " + out + (g_rank == 0 ? std::string(": ") + std::strerror(fail.why_errno) : ""));
  if (g_rank != 0) fd = open_if_seen(created);
  mine.sees = fd >= 0;
  collective::all_gather_values(mine, facts.data(), g_comm);
  uint64_t before = 0, events_total = 0;
  MergeTotals totals_out;
  for (int r = 0; r < g_size; ++r) {
    const RankFacts& f = facts[static_cast<size_t>(r)];
    if (r < g_rank) before += f.bytes;
    events_total += f.bytes;
    totals_out.records += f.records;
    totals_out.relayed_ranks += f.sees ? 0 : 1;
  }
  try {
    if (fail.ok) placed = format::place_rank(std::move(placed.chunks), before);
  } catch (const std::bad_alloc&) {
    fail("out of memory placing the chunks");
  }
  if (fail.ok && fd >= 0) {
    try {
      std::string buffer;
      const Status s = format::copy_chunks(spill_fd(), placed, fd, &buffer);
      if (!s.ok()) fail("cannot copy the chunks", &s);
    } catch (const std::bad_alloc&) {
      fail("out of memory for the copy buffer");
    }
  }
  if (totals_out.relayed_ranks > 0) relay_blind_ranks(facts, placed, fd, created.relay_piece, fail);

  std::string contribution;
  try {
    contribution = tail_contribution(placed.index);
  } catch (const std::bad_alloc&) {
    fail("out of memory serializing this rank's index");
  }
  StatusOr<std::vector<std::string>> parts = collective::gather_to_root(contribution, 0, g_comm);
  if (!parts.ok()) fail("the gather of the index failed", &parts.status());
  const bool all_ok = collective::all_ok(fail.ok, g_comm);

  int complete = 0;
  if (g_rank == 0 && all_ok) {
    try {
      const Status s = complete_file(fd, base, parts.value(), events_total, &totals_out.bytes);
      if (!s.ok())
        fail("cannot complete the logfile", &s);
      else if (::rename(tmp.c_str(), out.c_str()) != 0)
        fail("cannot rename the complete logfile into place", nullptr, errno);
      else
        complete = 1;
    } catch (const std::bad_alloc&) {
      fail("out of memory assembling the definitions and index");
    }
  }
  if (fd >= 0) ::close(fd);
  collective::broadcast_value(&complete, 0, g_comm);
  if (complete) return totals_out;
  if (g_rank == 0) {
    // No partial file, and no older logfile that could pass for this run's.
    ::unlink(tmp.c_str());
    ::unlink(out.c_str());
  }
  return fail.status();
}

}  // namespace mpe::tools::log
