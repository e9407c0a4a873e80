// Spill files: the header liblog writes, and the reader `--recover` uses on them.
#include "mpe/part_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "mpe/file_io.h"

namespace mpe::format {

std::string build_part_header(uint32_t rank, uint32_t world_size, double ticks_per_second) {
  PartHeader h{};
  std::memcpy(h.magic, kPartMagic, 8);
  h.version = kCurrentVersion;
  h.header_size = sizeof h;
  h.rank = rank;
  h.size = world_size;
  h.ticks_per_second = ticks_per_second;
  seal(&h);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

namespace {

// Reads and checks the chunk at `off`; fills the part from it. Not ok: the chunk is damaged.
Status read_chunk(int fd, uint64_t off, uint64_t avail, PartFile* p, uint64_t* size,
                  MemberInterner* interner) {
  ChunkHeader h;
  if (avail < sizeof h)
    return Status(StatusCode::kTruncated, "last chunk header cut short at offset " + std::to_string(off));
  MPE_RETURN_IF_ERROR(io::pread_all(fd, &h, sizeof h, off));
  MPE_RETURN_IF_ERROR(check_chunk_header(h, avail, off));
  if (h.rank != p->header.rank)
    return Status(StatusCode::kCorrupt, "chunk of another rank at offset " + std::to_string(off));
  std::string payload(h.payload_size, '\0');
  MPE_RETURN_IF_ERROR(io::pread_all(fd, payload.data(), payload.size(), off + sizeof h));
  *size = sizeof h + h.payload_size;
  if (h.kind == static_cast<uint16_t>(ChunkKind::kEvents)) {
    std::vector<Record> recs;
    MPE_RETURN_IF_ERROR(decode_events(h, payload.data(), &recs));  // verifies checksum and compression
    p->chunks.push_back(ChunkSource{h, off});
    return Status();
  }
  std::string blob;
  MPE_RETURN_IF_ERROR(decode_blob(h, payload.data(), &blob));
  if (h.kind == static_cast<uint16_t>(ChunkKind::kRankMeta)) {
    RankMeta m;
    MPE_RETURN_IF_ERROR(parse_rank_meta(blob.data(), blob.size(), &m, p->header.version, interner));
    p->meta = std::move(m);
    p->has_meta = true;
  } else {
    Definitions d;
    MPE_RETURN_IF_ERROR(parse_definitions(blob.data(), blob.size(), &d, p->header.version));
    p->base = std::move(d);
    p->has_base = true;
  }
  return Status();
}

}  // namespace

StatusOr<PartFile> read_part(const std::string& path, MemberInterner* interner) {
  PartFile p;
  p.path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(StatusCode::kIoError, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  const uint64_t file_size = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  Status s = file_size >= sizeof(PartHeader) ? io::pread_all(fd, &p.header, sizeof p.header, 0)
                                             : Status(StatusCode::kNotALogfile, "too short");
  if (!s.ok() || std::memcmp(p.header.magic, kPartMagic, 8) != 0) {
    ::close(fd);
    return Status(StatusCode::kNotALogfile, path + " is not a liblog spill file");
  }
  if (p.header.version > kCurrentVersion || p.header.version < kMinSupportedVersion) {
    ::close(fd);
    return Status(StatusCode::kUnsupportedVersion,
                  path + ": spill file version " + std::to_string(p.header.version));
  }
  if (p.header.header_hash != hash64(&p.header, offsetof(PartHeader, header_hash)) ||
      p.header.rank >= p.header.size) {
    ::close(fd);
    return Status(StatusCode::kCorrupt, path + ": spill file header is damaged");
  }
  try {
    for (uint64_t off = sizeof(PartHeader), size = 0; off < file_size; off += size) {
      p.tail = read_chunk(fd, off, file_size - off, &p, &size, interner);
      if (!p.tail.ok()) break;
    }
  } catch (const std::bad_alloc&) {
    p.tail = Status(StatusCode::kOutOfMemory, "a chunk too large to check");
  }
  ::close(fd);
  return p;
}

}  // namespace mpe::format
