// The merge planner: chunk placement, the tail, and the header-last rule (see log_layout.h).
#include "mpe/log_layout.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <set>

#include "mpe/file_io.h"

namespace mpe::format {

uint64_t chunk_bytes(const std::vector<ChunkSource>& chunks) {
  uint64_t n = 0;
  for (const auto& c : chunks) n += c.bytes();
  return n;
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

RankPlacement place_rank(std::vector<ChunkSource> chunks, uint64_t events_before) {
  // Stable: a thread's chunks with equal start times keep the order they were spilled in.
  std::stable_sort(chunks.begin(), chunks.end(), [](const ChunkSource& a, const ChunkSource& b) {
    return a.header.thread != b.header.thread ? a.header.thread < b.header.thread
                                              : a.header.t_first < b.header.t_first;
  });
  RankPlacement p;
  p.file_offsets.reserve(chunks.size());
  p.index.reserve(chunks.size());
  uint64_t at = kEventsStart + events_before;
  for (const auto& c : chunks) {
    p.file_offsets.push_back(at);
    p.index.push_back(index_entry(c.header, at));
    at += c.bytes();
  }
  p.bytes = at - kEventsStart - events_before;
  p.chunks = std::move(chunks);
  return p;
}

Status copy_chunks(int source_fd, const RankPlacement& placed, int out_fd, std::string* buffer) {
  for (size_t i = 0; i < placed.chunks.size(); ++i)
    MPE_RETURN_IF_ERROR(io::copy_range(source_fd, placed.chunks[i].source_offset, out_fd,
                                       placed.file_offsets[i], placed.chunks[i].bytes(), buffer));
  return Status();
}

std::string build_file_header() {
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, 8);
  h.version = kCurrentVersion;
  h.header_size = sizeof h;
  seal(&h);
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

std::string build_tail(const Definitions& defs, const std::vector<IndexEntry>& index, uint64_t tail_offset,
                       size_t max_piece) {
  std::string out;
  // The definitions in chunks of at most kMaxBlobChunkBytes each, back to back (v5): a chunk's
  // 32-bit sizes then limit nothing, and the footer's 64-bit definitions_size spans them all.
  const std::string blob = serialize_definitions(defs);
  size_t at = 0;
  do {
    const size_t piece = std::min(blob.size() - at, std::min(max_piece, kMaxBlobChunkBytes));
    encode_blob(ChunkKind::kDefinitions, 0, blob.substr(at, piece), &out);
    at += piece;
  } while (at < blob.size());
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

StatusOr<uint64_t> write_tail_and_header(int out_fd, const Definitions& defs,
                                         const std::vector<IndexEntry>& index, uint64_t events_total) {
  const uint64_t tail_at = kEventsStart + events_total;
  const std::string tail = build_tail(defs, index, tail_at);
  MPE_RETURN_IF_ERROR(io::pwrite_all(out_fd, tail.data(), tail.size(), tail_at));
  const uint64_t size = tail_at + tail.size();
  if (::ftruncate(out_fd, static_cast<off_t>(size)) != 0)
    return Status(StatusCode::kIoError,
                  std::string("cannot set the logfile's size: ") + std::strerror(errno));
  // The header goes last: a file with a valid header is complete.
  const std::string head = build_file_header();
  MPE_RETURN_IF_ERROR(io::pwrite_all(out_fd, head.data(), head.size(), 0));
  return size;
}

std::vector<Category> mpi_categories(const std::vector<std::string>& names) {
  std::vector<Category> v;
  v.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    // The routine's class from the table (core/mpi_calls.tsv), written with the category (v6).
    RoutineInfo routine = routine_by_name(names[i]);
    const uint32_t color = default_mpi_color(routine);
    v.push_back(
        Category{static_cast<uint32_t>(i), CategoryKind::kState, 0, color, names[i], std::move(routine)});
  }
  return v;
}

void merge_user_categories(Definitions* defs) {
  std::set<uint32_t> have;
  for (const auto& c : defs->categories) have.insert(c.id);
  for (const auto& r : defs->ranks)
    for (const auto& c : r.user_categories)
      if (have.insert(c.id).second) defs->categories.push_back(c);
}

}  // namespace mpe::format
