// Conversions between our .mpelog and the standard trace formats: OTF2 (Score-P, Vampir, ViTE)
// both ways, and Chrome/Perfetto JSON out. No MPI dependency; liblog's parallel OTF2 finalize
// uses the phases of mpe/otf2_export.h directly. Described in docs/interop.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "mpe/log_reader.h"
#include "mpe/status.h"

namespace mpe::interop {

// True when `path` is an OTF2 archive: an anchor file (`*.otf2`) or a directory holding one.
bool is_otf2(const std::string& path);

// The anchor file of an OTF2 archive given as an anchor or a directory; empty if there is none.
std::string otf2_anchor(const std::string& path);

// What every consumer of .mpelog (viewer, `mpe stat`, `mpe print`) calls to open a file that may
// be OTF2: returns `path` itself when it is not OTF2; otherwise converts the archive into
// `tmp_out` (written to a temporary name and renamed, so it is whole or absent) and returns
// `tmp_out`. The caller owns `tmp_out` and deletes it when done. Errors: io-error, corrupt,
// invalid-argument, each with a one-line message.
StatusOr<std::string> open_as_mpelog(const std::string& path, const std::string& tmp_out);

// A logfile opened for reading, whatever its format: a .mpelog as it is, an OTF2 archive through
// a scratch .mpelog in the temporary directory that goes away with this object. The one way the
// viewer, `mpe stat` and `mpe print` open their input.
class OpenedLog {
 public:
  static StatusOr<std::shared_ptr<OpenedLog>> open(const std::string& path);
  ~OpenedLog();
  const format::LogFile& file() const { return file_; }
  OpenedLog(const OpenedLog&) = delete;
  OpenedLog& operator=(const OpenedLog&) = delete;

 private:
  OpenedLog(format::LogFile file, std::string scratch)
      : file_(std::move(file)), scratch_(std::move(scratch)) {}
  format::LogFile file_;
  std::string scratch_;  // the converted OTF2, or empty
};

// OTF2 archive -> .mpelog: regions become states, MpiSend/MpiIsend and MpiRecv/MpiIrecv become
// send and receive records, MpiCollectiveBegin/End collective records, CommCreate communicator
// creations; a location group is a rank, its locations its threads.
Status otf2_to_mpelog(const std::string& otf2_path, const std::string& out);

// .mpelog -> OTF2 archive in directory `out_dir` (anchor `out_dir/traces.otf2`), one process.
Status mpelog_to_otf2(const std::string& log_path, const std::string& out_dir);

// .mpelog -> Chrome/Perfetto JSON, streamed chunk by chunk: memory does not grow with the log.
struct ChromeCounts {
  uint64_t slices = 0;       // "X" events (states)
  uint64_t flow_starts = 0;  // "s" (sends)
  uint64_t flow_ends = 0;    // "f" (receives)
  uint64_t instants = 0;     // "i" (collectives, markers, user events, communicator creations)
};
Status mpelog_to_chrome(const std::string& log_path, const std::string& out_json,
                        ChromeCounts* counts = nullptr);

// A terminal progress line on stderr ("mpe: <what> 42%"), shown only when stderr is a terminal.
class Progress {
 public:
  Progress(const char* what, uint64_t total);
  ~Progress();
  void advance(uint64_t n = 1);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  const char* what_;
  uint64_t total_;
  uint64_t done_ = 0;
  int shown_ = -1;
  bool tty_;
};

// Output that is whole or absent: work on `tmp_path()`, then commit() renames it to the final
// name; destroying an uncommitted output removes the temporary (file or directory).
class AtomicOutput {
 public:
  explicit AtomicOutput(std::string final_path);
  ~AtomicOutput();
  const std::string& tmp_path() const { return tmp_; }
  Status commit();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

 private:
  std::string final_;
  std::string tmp_;
  bool committed_ = false;
};

}  // namespace mpe::interop
