// The merge without a funnel.
//
// Steps: an exclusive scan of the ranks' chunk bytes gives each rank where its chunks start; the
// planner places them; each rank copies its own chunks from its spill file into the logfile with
// pread/pwrite, all ranks at once; rank 0 gathers only the index entries and rank definitions
// (~100 B per chunk) and writes the tail, then the header. Cost: one pass over each rank's own
// data, in parallel, plus one gather of the index.
// Failure modes: a local step that fails (a write, an allocation) only sets this rank's flag; the
// ranks run the same collectives whatever happens, and agree on the flags (one allreduce) before
// rank 0 completes the file, so one rank's error cannot leave the others waiting. A failed merge
// removes the output; the spill files are kept for `mpe merge --recover`.
#include "finalize_merge.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "log_state.h"
#include "mpe/collective.h"
#include "mpe/config.h"
#include "mpe/log_layout.h"
#include "spill.h"

namespace mpe::liblog {

namespace {

// What rank 0 gathers from each rank: [uint64 index bytes][index entries][serialized rank meta].
std::string tail_contribution(const std::vector<log::IndexEntry>& index) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const std::string meta = log::serialize_rank_meta(g_meta);
  const uint64_t n = index.size() * sizeof(log::IndexEntry);
  std::string out(reinterpret_cast<const char*>(&n), sizeof n);
  out.append(reinterpret_cast<const char*>(index.data()), n);
  out += meta;
  return out;
}

// Rank 0: the definitions and index of the whole run from every rank's contribution.
Status complete_file(int fd, const log::Definitions& base, const std::vector<std::string>& parts,
                     uint64_t events_total, uint64_t* file_size) {
  log::Definitions d = base;
  d.world_size = static_cast<uint32_t>(parts.size());
  d.ranks.resize(parts.size());
  std::vector<log::IndexEntry> index;
  for (size_t r = 0; r < parts.size(); ++r) {
    const std::string& p = parts[r];
    uint64_t n = 0;
    if (p.size() < sizeof n)
      return Status(StatusCode::kCorrupt, "rank " + std::to_string(r) + " sent no index");
    std::memcpy(&n, p.data(), sizeof n);
    if (n % sizeof(log::IndexEntry) != 0 || n > p.size() - sizeof n)
      return Status(StatusCode::kCorrupt, "rank " + std::to_string(r) + " sent a damaged index");
    const size_t at = index.size();
    index.resize(at + n / sizeof(log::IndexEntry));
    if (n) std::memcpy(index.data() + at, p.data() + sizeof n, n);
    MPE_RETURN_IF_ERROR(log::parse_rank_meta(p.data() + sizeof n + n, p.size() - sizeof n - n, &d.ranks[r]));
  }
  log::merge_user_categories(&d);
  StatusOr<uint64_t> size = log::write_tail_and_header(fd, d, index, events_total);
  if (!size.ok()) return size.status();
  *file_size = size.value();
  return Status();
}

}  // namespace

StatusOr<MergeTotals> merge_at_finalize(const std::string& out, const log::Definitions& base) {
  // Between the collectives nothing may throw on one rank only, so a failure is noted without
  // allocating (a literal and errno) and turned into a Status after the last collective.
  bool ok = true;
  const char* why = nullptr;
  int why_errno = 0;
  Status detail;  // a failure that came with its own Status
  auto fail = [&](const char* reason, const Status* s = nullptr, int err = 0) noexcept {
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
  };
  log::RankPlacement placed;
  uint64_t mine[2] = {0, 0};  // chunk bytes, records
  try {
    placed.chunks = spilled_chunks();
    mine[0] = log::chunk_bytes(placed.chunks);
    for (const auto& c : placed.chunks) mine[1] += c.header.nrecords;
  } catch (const std::bad_alloc&) {
    fail("out of memory listing the spilled chunks");
  }
  uint64_t before = 0, totals[2] = {0, 0};
  PMPI_Exscan(&mine[0], &before, 1, MPI_UINT64_T, MPI_SUM, g_comm);
  if (g_rank == 0) before = 0;
  PMPI_Allreduce(mine, totals, 2, MPI_UINT64_T, MPI_SUM, g_comm);
  try {
    if (ok) placed = log::place_rank(std::move(placed.chunks), before);
  } catch (const std::bad_alloc&) {
    fail("out of memory placing the chunks");
  }

  // Rank 0 creates the file empty; the others open it once it exists.
  int fd = -1;
  if (g_rank == 0) {
    fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot create the logfile", nullptr, errno);
  }
  int created = g_rank == 0 ? (fd >= 0) : 0;
  PMPI_Bcast(&created, 1, MPI_INT, 0, g_comm);
  if (!created)
    return Status(StatusCode::kIoError,
                  "cannot create " + out + (g_rank == 0 ? std::string(": ") + std::strerror(why_errno) : ""));
  if (g_rank != 0) {
    fd = ::open(out.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      fail("cannot open the logfile rank 0 created (is the directory shared by every node?)", nullptr, errno);
  }
  if (ok) {
    try {
      std::string buffer;
      const Status s = log::copy_chunks(spill_fd(), placed, fd, &buffer);
      if (!s.ok()) fail("cannot copy the chunks", &s);
    } catch (const std::bad_alloc&) {
      fail("out of memory for the copy buffer");
    }
  }

  std::string contribution;
  try {
    contribution = tail_contribution(placed.index);
  } catch (const std::bad_alloc&) {
    fail("out of memory serializing this rank's index");
  }
  StatusOr<std::vector<std::string>> parts = collective::gather_to_root(contribution, 0, g_comm);
  if (!parts.ok()) fail("the gather of the index failed", &parts.status());
  const bool all_ok = collective::all_ok(ok, g_comm);

  int complete = 0;
  MergeTotals totals_out;
  totals_out.records = totals[1];
  if (g_rank == 0 && all_ok) {
    try {
      const Status s = complete_file(fd, base, parts.value(), totals[0], &totals_out.bytes);
      if (s.ok())
        complete = 1;
      else
        fail("cannot complete the logfile", &s);
    } catch (const std::bad_alloc&) {
      fail("out of memory assembling the definitions and index");
    }
  }
  if (fd >= 0) ::close(fd);
  PMPI_Bcast(&complete, 1, MPI_INT, 0, g_comm);
  if (complete) return totals_out;
  if (g_rank == 0) ::unlink(out.c_str());  // no partial file that could pass for a logfile
  if (!why) return Status(StatusCode::kIoError, kAnotherRankFailed);
  std::string message = why;
  if (!detail.ok())
    message += ": " + detail.to_string();
  else if (why_errno)
    message += std::string(": ") + std::strerror(why_errno);
  return Status(detail.ok() ? StatusCode::kIoError : detail.code(), message);
}

}  // namespace mpe::liblog
