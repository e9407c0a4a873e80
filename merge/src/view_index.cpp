// The view index read back, from a file or from `mpe serve` (io::ByteSource); the design comment
// is in mpe/view_index.h.
#include "mpe/view_index.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "mpe/file_io.h"
#include "mpe/log_reader.h"
#include "view_index_codec.h"

namespace mpe::format {

StatusOr<std::unique_ptr<ViewIndex>> ViewIndex::open(const LogFile& file, const std::string& path) {
  auto source = io::open_file_source(path);
  if (!source.ok()) return source.status();
  return open(file, *source);
}

StatusOr<std::unique_ptr<ViewIndex>> ViewIndex::open(const LogFile& file,
                                                     std::shared_ptr<const io::ByteSource> source) {
  std::unique_ptr<ViewIndex> v(new ViewIndex());
  v->source_ = std::move(source);
  const io::ByteSource& in = *v->source_;
  const std::string& path = in.name();
  const uint64_t size = in.size();
  ViewFooter f{};
  if (size < sizeof f) return corrupt(path, "too short");
  MPE_RETURN_IF_ERROR(in.read(&f, sizeof f, size - sizeof f));
  if (std::memcmp(f.magic, kViewMagic, sizeof f.magic) != 0)
    return Status(StatusCode::kNotALogfile, path + " is not a view index");
  if (f.footer_hash != hash64(&f, offsetof(ViewFooter, footer_hash)) || f.version != kVersion)
    return corrupt(path, "damaged footer or another version");
  if (f.log_size != file.file_size() || f.log_index_hash != index_hash(file))
    return Status(StatusCode::kInvalidArgument, "view index " + path + " describes another log (stale)");
  const uint64_t body = size - sizeof f;
  if (f.codes_offset > body || f.codes_size > body - f.codes_offset || f.tables_offset > body ||
      f.tables_size > body - f.tables_offset)
    return corrupt(path, "sections out of the file");
  std::string codes(f.codes_size, '\0'), tables(f.tables_size, '\0');
  MPE_RETURN_IF_ERROR(in.read(codes.data(), codes.size(), f.codes_offset));
  MPE_RETURN_IF_ERROR(in.read(tables.data(), tables.size(), f.tables_offset));
  const unsigned long long raw = ZSTD_getFrameContentSize(tables.data(), tables.size());
  if (raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN || raw > (uint64_t{1} << 32))
    return corrupt(path, "damaged tables");
  std::string plain(raw, '\0');
  if (!ViewIndexCodec::decompress(tables, plain.data(), plain.size())) return corrupt(path, "damaged tables");
  ByteReader r(plain.data(), plain.size());
  if (!ViewIndexCodec::read_tables(r, *v)) return corrupt(path, "damaged tables");
  v->codes_.resize(size_t{v->bins_} * v->timelines_.size());
  if (!ViewIndexCodec::decompress(codes, v->codes_.data(), v->codes_.size()))
    return corrupt(path, "damaged bins");
  for (const Block& b : v->blocks_)
    if (b.offset > f.codes_offset || b.size > f.codes_offset - b.offset)
      return corrupt(path, "block out of the file");
  return v;
}

std::string ViewIndex::path_for(const std::string& log_path) {
  namespace fs = std::filesystem;
  const fs::path log = fs::absolute(log_path);
  if (::access(log.parent_path().c_str(), W_OK) == 0) return log.string() + ".view";
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path dir = cache && *cache ? fs::path(cache) / "mpe-tools"
                                       : fs::path(home && *home ? home : "/tmp") / ".cache/mpe-tools";
  std::error_code ignored;
  fs::create_directories(dir, ignored);
  const uint64_t h = hash64(log.string().data(), log.string().size());
  char name[32];
  std::snprintf(name, sizeof name, "-%016llx.view", static_cast<unsigned long long>(h));
  return (dir / (log.filename().string() + name)).string();
}

Status ViewIndex::messages_crossing(int64_t t0, int64_t t1,
                                    const std::function<void(const ViewMessage&)>& f) const {
  std::vector<ViewMessage> block;
  std::string z;
  for (const Block& b : blocks_) {
    if (b.first_send > t1) break;
    if (b.last_recv < t0) continue;
    z.resize(b.size);
    MPE_RETURN_IF_ERROR(source_->read(z.data(), z.size(), b.offset));
    block.resize(b.count);
    if (!ViewIndexCodec::decompress(z, block.data(), block.size() * sizeof(ViewMessage)))
      return corrupt(source_->name(), "damaged message block");
    for (const ViewMessage& m : block)
      if (m.send_time <= t1 && m.recv_time >= t0) f(m);
  }
  return Status();
}

std::pair<int64_t, int64_t> ViewIndex::chunk_span(const LogFile& file, size_t i) const {
  const IndexEntry& e = file.index()[i];
  const int64_t d = shift_of(e.rank);
  return {saturating_add(file.to_ns(e.rank, e.t_first), d), saturating_add(file.to_ns(e.rank, e.t_last), d)};
}

size_t ViewIndex::memory_bytes() const {
  return codes_.capacity() + sample_.capacity() * sizeof(ViewMessage) + blocks_.capacity() * sizeof(Block) +
         timelines_.capacity() * 8 + categories_.capacity() * sizeof(CategoryTotal);
}

}  // namespace mpe::format
