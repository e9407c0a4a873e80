// `mpe merge --recover`: spill files -> one logfile, laid out by the merge planner.
#include "mpe/recover.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "mpe/log_layout.h"
#include "mpe/part_file.h"

namespace mpe::format {

namespace {

// The run's definitions from what the parts hold: rank 0's base, every rank's meta (defaults for
// missing ones), the union of the user categories.
Definitions recovered_definitions(Definitions defs, const std::map<uint32_t, PartFile>& by_rank,
                                  uint32_t world, RecoverReport* report) {
  defs.world_size = world;
  defs.recovered = true;
  defs.ranks.assign(world, RankMeta{});
  for (uint32_t r = 0; r < world; ++r) {
    RankMeta& m = defs.ranks[r];
    auto it = by_rank.find(r);
    if (it != by_rank.end() && it->second.has_meta) m = it->second.meta;
    m.rank = r;
    m.world_size = world;
    if (it == by_rank.end()) {
      m.ticks_per_second = defs.ticks_per_second;
      report->notes.push_back("rank " + std::to_string(r) + ": no spill file");
    } else if (!it->second.has_meta) {
      m.ticks_per_second = it->second.header.ticks_per_second;
    }
  }
  merge_user_categories(&defs);
  return defs;
}

// Whether two spill files are of the same run: the same number of ranks and the same program.
Status same_run(const PartFile& a, const PartFile& b) {
  if (a.header.size != b.header.size)
    return Status(StatusCode::kInvalidArgument,
                  b.path + " is of a run of " + std::to_string(b.header.size) + " ranks, " + a.path + " of " +
                      std::to_string(a.header.size) + "; give the spill files of one run");
  if (a.has_base && b.has_base && a.base.program != b.base.program)
    return Status(StatusCode::kInvalidArgument, b.path + " is of program '" + b.base.program + "', " +
                                                    a.path + " of '" + a.base.program +
                                                    "'; give the spill files of one run");
  return Status();
}

// Places and copies every rank's chunks, then writes the tail and the header.
Status write_recovered(const std::map<uint32_t, PartFile>& by_rank, const Definitions& defs, int out_fd,
                       RecoverReport* report) {
  std::vector<IndexEntry> index;
  std::string buffer;
  uint64_t before = 0;
  for (const auto& [r, p] : by_rank) {
    const RankPlacement placed = place_rank(p.chunks, before);
    const int fd = ::open(p.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status(StatusCode::kIoError, p.path + ": cannot open: " + std::strerror(errno));
    const Status s = copy_chunks(fd, placed, out_fd, &buffer);
    ::close(fd);
    if (!s.ok()) return Status(s.code(), p.path + ": " + s.message());
    for (const auto& c : placed.chunks) report->records += c.header.nrecords;
    report->chunks += placed.chunks.size();
    index.insert(index.end(), placed.index.begin(), placed.index.end());
    before += placed.bytes;
  }
  return write_tail_and_header(out_fd, defs, index, before).status();
}

}  // namespace

Status recover(const std::vector<std::string>& parts, const std::string& out, RecoverReport* report) {
  std::map<uint32_t, PartFile> by_rank;
  uint32_t world = 0;
  Definitions base;
  bool have_base = false;
  MemberInterner interner;  // one copy of each group however many ranks' parts name it
  for (const auto& path : parts) {
    auto p = read_part(path, &interner);
    if (!p.ok()) {
      report->notes.push_back(p.status().to_string());
      continue;
    }
    if (!p->tail.ok()) report->notes.push_back(path + ": kept the chunks before: " + p->tail.to_string());
    if (!p->has_meta) report->notes.push_back(path + ": no rank definitions survived; using defaults");
    // The parts may come from several directories (one per node): they must be one run's.
    if (!by_rank.empty()) MPE_RETURN_IF_ERROR(same_run(by_rank.begin()->second, *p));
    if (auto twin = by_rank.find(p->header.rank); twin != by_rank.end())
      return Status(StatusCode::kInvalidArgument,
                    "rank " + std::to_string(p->header.rank) + " has two spill files, " + twin->second.path +
                        " and " + path + " (from two runs?); give the directories of one run");
    if (p->has_base && (!have_base || p->header.rank == 0)) {
      base = p->base;
      have_base = true;
    }
    world = std::max(world, p->header.size);
    by_rank.emplace(p->header.rank, std::move(p.value()));
  }
  if (by_rank.empty()) return Status(StatusCode::kInvalidArgument, "no readable spill files");
  if (!have_base) return Status(StatusCode::kCorrupt, "no spill file holds the run's definitions");
  report->ranks = static_cast<int>(by_rank.size());
  report->ranks_missing = static_cast<int>(world - by_rank.size());
  const Definitions defs = recovered_definitions(std::move(base), by_rank, world, report);

  // Written under a temporary name and renamed when complete: an interrupted recovery leaves no
  // partial file by the logfile's name.
  const std::string tmp = out + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status(StatusCode::kIoError, tmp + ": cannot create: " + std::strerror(errno));
  Status s = write_recovered(by_rank, defs, fd, report);
  if (::close(fd) != 0 && s.ok())
    s = Status(StatusCode::kIoError, tmp + ": close failed: " + std::strerror(errno));
  if (s.ok() && ::rename(tmp.c_str(), out.c_str()) != 0)
    s = Status(StatusCode::kIoError, "cannot rename " + tmp + " to " + out + ": " + std::strerror(errno));
  if (!s.ok()) ::unlink(tmp.c_str());
  return s;
}

}  // namespace mpe::format
