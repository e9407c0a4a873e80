// Logfile writing: header, tail (definitions, index, footer), sequential writer, spill-file
// reading and `--recover`.
#include "mpe/log_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace mpe::log {

std::string build_file_header() {
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, 8);
  h.version = kCurrentVersion;
  h.header_size = sizeof h;
  seal(&h);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

IndexEntry index_entry(const ChunkHeader& h, uint64_t offset) {
  IndexEntry e{};
  e.offset = offset;
  e.rank = h.rank;
  e.thread = h.thread;
  e.t_first = h.t_first;
  e.t_last = h.t_last;
  e.nrecords = h.nrecords;
  e.size = static_cast<uint32_t>(sizeof h + h.payload_size);
  std::memcpy(e.summary, h.summary, sizeof e.summary);
  return e;
}

std::string build_tail(const Definitions& defs, const std::vector<IndexEntry>& index, uint64_t tail_offset) {
  std::string out;
  encode_blob(ChunkKind::kDefinitions, 0, serialize_definitions(defs), &out);
  Footer f{};
  f.definitions_offset = tail_offset;
  f.definitions_size = out.size();
  f.index_offset = tail_offset + out.size();
  f.index_count = index.size();
  out.append(reinterpret_cast<const char*>(index.data()), index.size() * sizeof(IndexEntry));
  f.index_hash = hash64(index.data(), index.size() * sizeof(IndexEntry));
  f.file_size = tail_offset + out.size() + sizeof f;
  std::memcpy(f.magic, kFooterMagic, 8);
  seal(&f);
  out.append(reinterpret_cast<const char*>(&f), sizeof f);
  return out;
}

std::vector<Category> mpi_categories(const std::vector<std::string>& names) {
  std::vector<Category> v;
  v.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i)
    v.push_back(
        Category{static_cast<uint32_t>(i), CategoryKind::kState, 0, default_mpi_color(names[i]), names[i]});
  return v;
}

void merge_user_categories(Definitions* defs) {
  std::map<uint32_t, bool> have;
  for (const auto& c : defs->categories) have[c.id] = true;
  for (const auto& r : defs->ranks)
    for (const auto& c : r.user_categories)
      if (!have[c.id]) {
        have[c.id] = true;
        defs->categories.push_back(c);
      }
}

LogWriter::~LogWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status LogWriter::write(const void* p, size_t n) {
  const auto* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd_, c, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kIoError, path_ + ": write failed: " + std::strerror(errno));
    }
    c += w;
    n -= static_cast<size_t>(w);
    offset_ += static_cast<uint64_t>(w);
  }
  return Status();
}

Status LogWriter::open(const std::string& path) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Status(StatusCode::kIoError, path + ": cannot create: " + std::strerror(errno));
  const std::string h = build_file_header();
  return write(h.data(), h.size());
}

Status LogWriter::add_events_chunk(const std::string& chunk) {
  ChunkHeader h;
  if (chunk.size() < sizeof h) return Status(StatusCode::kInvalidArgument, "chunk too small");
  std::memcpy(&h, chunk.data(), sizeof h);
  MPE_RETURN_IF_ERROR(check_chunk_header(h, chunk.size(), 0));
  index_.push_back(index_entry(h, offset_));
  return write(chunk.data(), sizeof h + h.payload_size);
}

Status LogWriter::finish(const Definitions& defs) {
  const std::string tail = build_tail(defs, index_, offset_);
  MPE_RETURN_IF_ERROR(write(tail.data(), tail.size()));
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Status(StatusCode::kIoError, path_ + ": close failed: " + std::strerror(errno));
  }
  fd_ = -1;
  return Status();
}

StatusOr<PartFile> read_part(const std::string& path) {
  PartFile p;
  p.path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, path + ": cannot open: " + std::strerror(errno));
  std::string all;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Status(StatusCode::kIoError, path + ": read failed: " + std::strerror(errno));
    }
    if (n == 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (all.size() < sizeof(PartHeader) || std::memcmp(all.data(), kPartMagic, 8) != 0)
    return Status(StatusCode::kNotALogfile, path + " is not a liblog spill file");
  std::memcpy(&p.header, all.data(), sizeof p.header);
  if (p.header.version > kCurrentVersion || p.header.version < kMinSupportedVersion)
    return Status(StatusCode::kUnsupportedVersion,
                  path + ": spill file version " + std::to_string(p.header.version));
  if (p.header.header_hash != hash64(&p.header, offsetof(PartHeader, header_hash)) ||
      p.header.rank >= p.header.size)
    return Status(StatusCode::kCorrupt, path + ": spill file header is damaged");
  uint64_t off = sizeof(PartHeader);
  while (off < all.size()) {
    ChunkHeader h;
    const uint64_t avail = all.size() - off;
    if (avail < sizeof h) {
      p.tail = Status(StatusCode::kTruncated, "last chunk header cut short at offset " + std::to_string(off));
      break;
    }
    std::memcpy(&h, all.data() + off, sizeof h);
    Status s = check_chunk_header(h, avail, off);
    if (s.ok() && h.rank != p.header.rank)
      s = Status(StatusCode::kCorrupt, "chunk of another rank at offset " + std::to_string(off));
    const char* payload = all.data() + off + sizeof h;
    if (s.ok() && h.kind == static_cast<uint16_t>(ChunkKind::kEvents)) {
      std::vector<Record> recs;
      s = decode_events(h, payload, &recs);  // verifies the checksum and the compression
      if (s.ok()) p.chunks.emplace_back(all.data() + off, sizeof h + h.payload_size);
    } else if (s.ok()) {
      std::string blob;
      s = decode_blob(h, payload, &blob);
      if (s.ok() && h.kind == static_cast<uint16_t>(ChunkKind::kRankMeta)) {
        RankMeta m;
        s = parse_rank_meta(blob.data(), blob.size(), &m);
        if (s.ok()) {
          p.meta = std::move(m);
          p.has_meta = true;
        }
      } else if (s.ok()) {
        Definitions d;
        s = parse_definitions(blob.data(), blob.size(), &d);
        if (s.ok()) {
          p.base = std::move(d);
          p.has_base = true;
        }
      }
    }
    if (!s.ok()) {
      p.tail = s;
      break;
    }
    off += sizeof h + h.payload_size;
  }
  return p;
}

Status recover(const std::vector<std::string>& parts, const std::string& out, RecoverReport* report) {
  std::map<uint32_t, PartFile> by_rank;
  uint32_t world = 0;
  Definitions defs;
  bool have_base = false;
  for (const auto& path : parts) {
    auto p = read_part(path);
    if (!p.ok()) {
      report->notes.push_back(p.status().to_string());
      continue;
    }
    if (!p->tail.ok()) report->notes.push_back(path + ": kept the chunks before: " + p->tail.to_string());
    if (!p->has_meta) report->notes.push_back(path + ": no rank definitions survived; using defaults");
    if (p->has_base && (!have_base || p->header.rank == 0)) {
      defs = p->base;
      have_base = true;
    }
    world = std::max(world, p->header.size);
    const uint32_t r = p->header.rank;
    if (by_rank.count(r)) {
      report->notes.push_back(path + ": a second file for rank " + std::to_string(r) + "; ignored");
      continue;
    }
    by_rank.emplace(r, std::move(p.value()));
  }
  if (by_rank.empty()) return Status(StatusCode::kInvalidArgument, "no readable spill files");
  if (!have_base) return Status(StatusCode::kCorrupt, "no spill file holds the run's definitions");
  defs.world_size = world;
  defs.recovered = true;
  defs.ranks.assign(world, RankMeta{});
  report->ranks = static_cast<int>(by_rank.size());
  report->ranks_missing = static_cast<int>(world - by_rank.size());
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
  LogWriter w;
  MPE_RETURN_IF_ERROR(w.open(out));
  for (auto& [r, p] : by_rank) {
    // Order each rank's chunks by thread, then time, as the index promises.
    std::stable_sort(p.chunks.begin(), p.chunks.end(), [](const std::string& a, const std::string& b) {
      ChunkHeader x, y;
      std::memcpy(&x, a.data(), sizeof x);
      std::memcpy(&y, b.data(), sizeof y);
      return x.thread != y.thread ? x.thread < y.thread : x.t_first < y.t_first;
    });
    for (const auto& c : p.chunks) {
      ChunkHeader h;
      std::memcpy(&h, c.data(), sizeof h);
      report->chunks++;
      report->records += h.nrecords;
      MPE_RETURN_IF_ERROR(w.add_events_chunk(c));
    }
  }
  return w.finish(defs);
}

}  // namespace mpe::log
