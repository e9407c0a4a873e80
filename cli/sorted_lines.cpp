#include "sorted_lines.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <queue>

namespace mpe::cli {

namespace {

// Runs merged at once: each open run costs a read buffer; more runs are merged into one first.
constexpr size_t kMergeFanIn = 64;
constexpr size_t kRunBuffer = size_t{1} << 18;

bool before(const LineKey& ka, std::string_view ta, const LineKey& kb, std::string_view tb) {
  const auto a = ka.tied(), b = kb.tied();
  return a != b ? a < b : ta < tb;
}

using format::TemporaryDirectory;

// A run file read back line by line: key, length, text, as spill() wrote them.
class RunReader {
 public:
  explicit RunReader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (f_) std::setvbuf(f_, nullptr, _IOFBF, kRunBuffer);
  }
  ~RunReader() {
    if (f_) std::fclose(f_);
  }
  bool opened() const { return f_ != nullptr; }
  // The next line; false at the end. A short read is an io-error (the file was cut behind us).
  StatusOr<bool> next() {
    if (std::fread(&key, sizeof key, 1, f_) != 1) {
      if (std::feof(f_)) return false;
      return Status(StatusCode::kIoError, "cannot read the sort's temporary file " + path_);
    }
    uint32_t n = 0;
    if (std::fread(&n, sizeof n, 1, f_) != 1) return Status(StatusCode::kIoError, path_ + " is cut short");
    text.resize(n);
    if (n && std::fread(text.data(), 1, n, f_) != n)
      return Status(StatusCode::kIoError, path_ + " is cut short");
    return true;
  }
  LineKey key;
  std::string text;

 private:
  std::string path_;
  std::FILE* f_;
};

}  // namespace

SortedLines::SortedLines(size_t memory_bytes)
    : memory_bytes_(std::max<size_t>(memory_bytes, 1)), dir_("print") {}

Status SortedLines::add(const LineKey& key, std::string_view text) {
  held_.push_back(Held{key, static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(text.size())});
  text_.append(text);
  if (text_.size() + held_.size() * sizeof(Held) >= memory_bytes_) return spill();
  return Status();
}

// The held lines, sorted, to a new run file; many runs are merged into one first.
Status SortedLines::spill() {
  if (runs_.size() >= kMergeFanIn) MPE_RETURN_IF_ERROR(merge_runs(nullptr, true));
  auto path = dir_.new_file();
  if (!path.ok()) return path.status();
  std::vector<uint32_t> order(held_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto text_of = [&](const Held& h) { return std::string_view(text_).substr(h.offset, h.length); };
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return before(held_[x].key, text_of(held_[x]), held_[y].key, text_of(held_[y]));
  });
  std::FILE* f = std::fopen(path->c_str(), "wb");
  if (!f) return TemporaryDirectory::write_failed(*path);
  std::setvbuf(f, nullptr, _IOFBF, kRunBuffer);
  bool ok = true;
  for (const uint32_t i : order) {
    const Held& h = held_[i];
    ok = ok && std::fwrite(&h.key, sizeof h.key, 1, f) == 1 &&
         std::fwrite(&h.length, sizeof h.length, 1, f) == 1 &&
         std::fwrite(text_.data() + h.offset, 1, h.length, f) == h.length;
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) return TemporaryDirectory::write_failed(*path);
  runs_.push_back(*path);
  ++spilled_;
  held_.clear();
  text_.clear();
  return Status();
}

// Merges every run (to `out` as text lines, or, to_run, into one new run that replaces them).
Status SortedLines::merge_runs(std::FILE* out, bool to_run) {
  std::vector<std::unique_ptr<RunReader>> readers;
  for (const std::string& path : runs_) {
    readers.push_back(std::make_unique<RunReader>(path));
    if (!readers.back()->opened())
      return Status(StatusCode::kIoError, "cannot read the sort's temporary file " + path);
  }
  std::string target;
  if (to_run) {
    auto path = dir_.new_file();
    if (!path.ok()) return path.status();
    target = *path;
    out = std::fopen(target.c_str(), "wb");
    if (!out) return TemporaryDirectory::write_failed(target);
    std::setvbuf(out, nullptr, _IOFBF, kRunBuffer);
  }
  auto later = [&](size_t x, size_t y) {
    return before(readers[y]->key, readers[y]->text, readers[x]->key, readers[x]->text);
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  Status status;
  for (size_t i = 0; i < readers.size(); ++i) {
    auto more = readers[i]->next();
    if (!more.ok()) status = more.status();
    if (more.ok() && *more) heap.push(i);
  }
  bool ok = true;
  while (status.ok() && ok && !heap.empty()) {
    const size_t i = heap.top();
    heap.pop();
    const RunReader& r = *readers[i];
    if (to_run) {
      const uint32_t n = static_cast<uint32_t>(r.text.size());
      ok = std::fwrite(&r.key, sizeof r.key, 1, out) == 1 && std::fwrite(&n, sizeof n, 1, out) == 1 &&
           std::fwrite(r.text.data(), 1, n, out) == n;
    } else {
      ok = std::fwrite(r.text.data(), 1, r.text.size(), out) == r.text.size() && std::fputc('\n', out) != EOF;
    }
    auto more = readers[i]->next();
    if (!more.ok()) status = more.status();
    if (more.ok() && *more) heap.push(i);
  }
  readers.clear();
  for (const std::string& path : runs_) std::remove(path.c_str());
  runs_.clear();
  if (to_run) {
    ok = std::fclose(out) == 0 && ok;
    if (!ok) return TemporaryDirectory::write_failed(target);
    runs_.push_back(target);
  } else if (!ok) {
    return Status(StatusCode::kIoError, std::string("cannot write the output: ") + std::strerror(errno));
  }
  return status;
}

Status SortedLines::write_to(std::FILE* out) {
  if (!runs_.empty()) {
    if (!held_.empty()) MPE_RETURN_IF_ERROR(spill());
    return merge_runs(out, false);
  }
  // Everything fits: sorted here, written in blocks of about 1 MiB.
  auto text_of = [&](const Held& h) { return std::string_view(text_).substr(h.offset, h.length); };
  std::sort(held_.begin(), held_.end(),
            [&](const Held& x, const Held& y) { return before(x.key, text_of(x), y.key, text_of(y)); });
  std::string block;
  for (const Held& h : held_) {
    block += text_of(h);
    block += '\n';
    if (block.size() > (size_t{1} << 20)) {
      if (std::fwrite(block.data(), 1, block.size(), out) != block.size())
        return Status(StatusCode::kIoError, std::string("cannot write the output: ") + std::strerror(errno));
      block.clear();
    }
  }
  if (std::fwrite(block.data(), 1, block.size(), out) != block.size())
    return Status(StatusCode::kIoError, std::string("cannot write the output: ") + std::strerror(errno));
  return Status();
}

}  // namespace mpe::cli
