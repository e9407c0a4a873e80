// Format detection, the open-any-trace entry point, progress and whole-or-absent outputs.
#include "mpe/interop.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace mpe::interop {

namespace fs = std::filesystem;

std::string otf2_anchor(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path.ends_with(".otf2") ? path : std::string();
  if (!fs::is_directory(path, ec)) return {};
  // Score-P's and our archives name the anchor traces.otf2; otherwise the only *.otf2 inside.
  const fs::path traces = fs::path(path) / "traces.otf2";
  if (fs::is_regular_file(traces, ec)) return traces.string();
  std::string found;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (!e.is_regular_file(ec) || !e.path().string().ends_with(".otf2")) continue;
    if (!found.empty()) return {};  // ambiguous
    found = e.path().string();
  }
  return found;
}

bool is_otf2(const std::string& path) { return !otf2_anchor(path).empty(); }

StatusOr<std::string> open_as_mpelog(const std::string& path, const std::string& tmp_out) {
  if (!is_otf2(path)) return path;
  if (tmp_out.empty())
    return Status(StatusCode::kInvalidArgument, path + ": OTF2 needs a scratch .mpelog path");
  MPE_RETURN_IF_ERROR(otf2_to_mpelog(path, tmp_out));
  return tmp_out;
}

StatusOr<std::shared_ptr<OpenedLog>> OpenedLog::open(const std::string& path) {
  std::string scratch;
  if (is_otf2(path)) {
    // Unique per process and call: the viewer may open several archives, on several threads.
    static std::atomic<int> serial{0};
    scratch = (std::filesystem::temp_directory_path() /
               ("mpe-otf2-" + std::to_string(getpid()) + "-" + std::to_string(++serial) + ".mpelog"))
                  .string();
  }
  auto converted = open_as_mpelog(path, scratch);
  if (!converted.ok()) return converted.status();
  auto file = format::LogFile::open(*converted);
  if (!file.ok()) {
    std::error_code ec;
    if (!scratch.empty()) std::filesystem::remove(scratch, ec);
    return file.status();
  }
  return std::shared_ptr<OpenedLog>(new OpenedLog(std::move(*file), std::move(scratch)));
}

OpenedLog::~OpenedLog() {
  std::error_code ec;
  if (!scratch_.empty()) std::filesystem::remove(scratch_, ec);
}

Progress::Progress(const char* what, uint64_t total) : what_(what), total_(total), tty_(isatty(2) == 1) {}

Progress::~Progress() {
  if (tty_ && shown_ >= 0) std::fprintf(stderr, "\rmpe: %s 100%%\n", what_);
}

void Progress::advance(uint64_t n) {
  done_ += n;
  if (!tty_ || total_ == 0) return;
  const int pct = static_cast<int>(std::min<uint64_t>(100, done_ * 100 / total_));
  if (pct == shown_) return;
  shown_ = pct;
  std::fprintf(stderr, "\rmpe: %s %3d%%", what_, pct);
  std::fflush(stderr);
}

AtomicOutput::AtomicOutput(std::string final_path)
    : final_(std::move(final_path)), tmp_(final_ + ".tmp-" + std::to_string(getpid())) {
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

AtomicOutput::~AtomicOutput() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(tmp_, ec);
}

Status AtomicOutput::commit() {
  std::error_code ec;
  if (fs::is_directory(final_, ec)) {
    // Replace an earlier archive, never some other directory.
    if (!is_otf2(final_))
      return Status(StatusCode::kInvalidArgument,
                    final_ + " is a directory that is not an OTF2 archive; not replaced");
    fs::remove_all(final_, ec);
  }
  fs::rename(tmp_, final_, ec);
  if (ec)
    return Status(StatusCode::kIoError, "cannot rename " + tmp_ + " to " + final_ + ": " + ec.message());
  committed_ = true;
  return Status();
}

}  // namespace mpe::interop
