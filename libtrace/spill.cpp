// The spill file and the signal flush (see spill.h).
//
// Threads never wait for each other here: a full buffer is compressed by the thread that filled
// it and written at an offset reserved with one atomic add.
#include "spill.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "mpe/clock.h"
#include "mpe/config.h"
#include "mpe/file_io.h"
#include "mpe/part_file.h"

namespace mpe::tools::log {

namespace {

int g_part_fd = -1;
std::string g_part_path;
std::atomic<uint64_t> g_part_offset{0};
std::vector<format::ChunkSource> g_chunks;  // guarded by g_mutex
uint32_t g_nthreads = 0;                    // guarded by g_mutex

// Appends bytes to the spill file at a reserved offset; returns the offset.
uint64_t append(const std::string& bytes) {
  const uint64_t off = g_part_offset.fetch_add(bytes.size());
  if (g_part_fd >= 0 && !io::pwrite_all_raw(g_part_fd, bytes.data(), bytes.size(), off))
    config::warn("liblog: cannot write " + g_part_path + ": " + std::strerror(errno), false);
  return off;
}

struct sigaction g_old_term, g_old_int;
char* g_signal_scratch = nullptr;
size_t g_signal_scratch_size = 0;

// Async-signal-safe: stores every thread's buffered records as raw chunks with pwrite.
void flush_raw_all() {
  for (ThreadLog* t = g_threads; t; t = t->next) {
    const uint32_t n = t->n;
    if (n == 0 || !g_signal_scratch) continue;
    const size_t len = format::encode_events_raw(t->recs, n, static_cast<uint32_t>(g_rank), t->index,
                                                 g_signal_scratch, g_signal_scratch_size);
    if (len == 0) continue;
    const uint64_t off = g_part_offset.fetch_add(len);
    io::pwrite_all_raw(g_part_fd, g_signal_scratch, len, off);
    t->n = 0;
  }
}

void on_signal(int sig) {
  if (g_active.exchange(false)) flush_raw_all();
  sigaction(sig, sig == SIGTERM ? &g_old_term : &g_old_int, nullptr);
  raise(sig);
}

}  // namespace

Status open_spill(const std::string& path, const format::Definitions& base) {
  g_part_path = path;
  g_part_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_part_fd < 0)
    return Status(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  std::string head = format::build_part_header(static_cast<uint32_t>(g_rank), static_cast<uint32_t>(g_size),
                                               mpe_clock_ticks_per_second());
  format::encode_blob(format::ChunkKind::kDefinitions, static_cast<uint32_t>(g_rank),
                      format::serialize_definitions(base), &head);
  g_part_offset.store(0);
  append(head);
  return Status();
}

void write_meta_locked() noexcept {
  if (g_part_fd < 0) return;
  try {
    std::string c;
    format::encode_blob(format::ChunkKind::kRankMeta, static_cast<uint32_t>(g_rank),
                        format::serialize_rank_meta(g_meta), &c);
    append(c);
  } catch (const std::bad_alloc&) {
    config::warn(
        "liblog: out of memory while saving this rank's definitions; `mpe merge --recover` may miss them",
        false);
  }
}

void spill(ThreadLog* t) noexcept {
  if (t->n == 0) return;
  try {
    std::string c;
    format::encode_events(t->recs, t->n, static_cast<uint32_t>(g_rank), t->index, g_zstd_level, &c);
    const uint64_t off = append(c);
    format::ChunkSource source;
    std::memcpy(&source.header, c.data(), sizeof source.header);
    source.source_offset = off;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_chunks.push_back(source);
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while spilling a buffer; its records are dropped", false);
  }
  t->n = 0;
}

ThreadLog* new_thread_log() noexcept {
  auto* t = new (std::nothrow) ThreadLog;
  if (!t) return nullptr;
  t->recs = static_cast<format::Record*>(std::malloc(sizeof(format::Record) * g_buffer_records));
  if (!t->recs) {
    delete t;
    return nullptr;
  }
  t->cap = g_buffer_records;
  std::lock_guard<std::mutex> lock(g_mutex);
  t->index = g_nthreads++;
  t->next = g_threads;
  g_threads = t;
  try {
    g_meta.threads.push_back(format::ThreadDef{t->index, static_cast<int64_t>(syscall(SYS_gettid))});
    write_meta_locked();
  } catch (const std::bad_alloc&) {
    config::warn("liblog: out of memory while naming a new thread; its records are kept unnamed", false);
  }
  t_log = t;
  return t;
}

void spill_all() noexcept {
  for (ThreadLog* t = g_threads; t; t = t->next) spill(t);
  std::lock_guard<std::mutex> lock(g_mutex);
  write_meta_locked();
}

int spill_fd() { return g_part_fd; }

std::vector<format::ChunkSource> spilled_chunks() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_chunks;
}

void close_spill(bool remove) noexcept {
  if (g_part_fd >= 0) ::close(g_part_fd);
  g_part_fd = -1;
  if (remove) ::unlink(g_part_path.c_str());
}

void install_signal_flush() noexcept {
  g_signal_scratch_size =
      sizeof(format::ChunkHeader) + static_cast<size_t>(g_buffer_records) * sizeof(format::Record);
  g_signal_scratch = static_cast<char*>(std::malloc(g_signal_scratch_size));
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g_old_term);
  sigaction(SIGINT, &sa, &g_old_int);
}

void remove_signal_flush() noexcept {
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGINT, &g_old_int, nullptr);
}

}  // namespace mpe::tools::log
