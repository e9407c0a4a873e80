// liblog: records every MPI call as a state, messages, collectives, communicators and Pcontrol
// markers into per-thread buffers, spills zstd chunks to a per-rank file, and merges all ranks
// into one .mpelog at MPI_Finalize without funnelling the data through rank 0.
//
// Design. Each thread owns a ThreadLog (record buffer, request table, snapshot) reached through
// one initial-exec TLS pointer; the per-call path takes no lock and allocates nothing: ~10 ns
// for a cheap call (one 32-byte record store, two clock reads by the core). A full buffer is
// compressed by the thread that filled it and appended to the rank's spill file at an offset
// reserved with one atomic add, so threads never wait for each other. Definitions (threads,
// communicators, user categories) change rarely; each change rewrites a small rank-meta chunk
// at once, so that a killed run leaves everything `mpe merge --recover` needs on disk.
//
// Finalize (the merge without a funnel). Invariant: the logfile is header | every rank's events
// chunks, rank by rank | definitions | index | footer, and its header is written last, so a
// file with a valid header is complete. Steps: flush; exclusive scan of the ranks' chunk bytes
// gives each rank its offset; each rank pwrites its own chunks (copied verbatim from its spill
// file); rank 0 gathers only the index entries and rank definitions (~100 B per chunk) and
// writes the tail, then the header. Cost: one pass over each rank's own data, in parallel.
// Failure modes: a rank that cannot write makes every rank keep its spill file (allreduce of
// success) and rank 0 says so; a crash before finalize leaves the spill files for --recover.
#include "log_tool.h"
#include "otf2_finalize.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "mpe/bytes.h"
#include "mpe/config.h"
#include "mpe/completion.h"
#include "mpe/core.h"
#include "mpe/log_defs.h"
#include "mpe/log_writer.h"

namespace mpe::liblog {

using log::Record;
using log::RecordKind;
using mpe::Call;
using mpe::CallClass;
using mpe::Mode;
namespace role = mpe::role;

namespace {

// ---- Request tracking ----------------------------------------------------------------------

enum ReqType : uint8_t { kNone = 0, kRecv = 1, kPersistentRecv = 2, kPersistentSend = 3, kSend = 4 };

struct ReqInfo {
  MPI_Request req;
  uint32_t comm;
  uint8_t type;
  int32_t dest;
  int32_t tag;
  uint64_t bytes;
  uint32_t serial = 0;  // kRecv and kSend: the request's serial in its kRequestPost record
  uint32_t snapshot = 0;  // the Wait/Test snapshot that last took this entry (see snapshot())
};

uint64_t req_key(MPI_Request r) {
  uint64_t k = 0;
  std::memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
  return k;
}

// Outstanding requests of one thread: open addressing, linear probing, backward-shift deletion;
// type kNone marks an empty slot. O(1) expected per insert, find and erase (~3-5 ns); doubles
// when half full (the only allocation, amortized).
class RequestTable {
 public:
  RequestTable() { rehash(4096); }
  ReqInfo* find(MPI_Request r) {
    const uint64_t k = req_key(r);
    for (size_t i = home(k);; i = (i + 1) & mask_) {
      if (slots_[i].type == kNone) return nullptr;
      if (req_key(slots_[i].req) == k) return &slots_[i];
    }
  }
  // Stores info under its handle; returns the entry it replaced (type kNone if there was none).
  ReqInfo put(const ReqInfo& info) {
    if (info.req == MPI_REQUEST_NULL) return ReqInfo{};
    if (ReqInfo* old = find(info.req)) {
      const ReqInfo replaced = *old;
      *old = info;
      return replaced;
    }
    if (2 * (count_ + 1) > slots_.size()) rehash(slots_.size() * 2);
    const uint64_t k = req_key(info.req);
    size_t i = home(k);
    while (slots_[i].type != kNone) i = (i + 1) & mask_;
    slots_[i] = info;
    ++count_;
    return ReqInfo{};
  }
  void erase(MPI_Request r) {
    ReqInfo* p = find(r);
    if (!p) return;
    size_t i = static_cast<size_t>(p - slots_.data()), j = i;
    slots_[i].type = kNone;
    --count_;
    for (;;) {
      j = (j + 1) & mask_;
      if (slots_[j].type == kNone) return;
      const size_t h = home(req_key(slots_[j].req));
      if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
        slots_[i] = slots_[j];
        slots_[j].type = kNone;
        i = j;
      }
    }
  }

 private:
  size_t home(uint64_t k) const { return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 20) & mask_; }
  void rehash(size_t n) {
    std::vector<ReqInfo> old;
    old.swap(slots_);
    slots_.assign(n, ReqInfo{});
    mask_ = n - 1;
    count_ = 0;
    for (const auto& s : old)
      if (s.type != kNone) put(s);
  }
  std::vector<ReqInfo> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

// ---- Per-thread log ---------------------------------------------------------------------------

struct ThreadLog {
  Record* recs = nullptr;
  uint32_t n = 0;
  uint32_t cap = 0;
  uint32_t index = 0;
  RequestTable requests;
  uint32_t last_request = 0;     // serial of the last nonblocking request posted on this thread
  uint32_t snapshots = 0;        // Wait/Test snapshots taken on this thread
  std::vector<ReqInfo> snap[2];  // per call depth 0/1: what each request of a Wait/Test was
  struct Msg {
    MPI_Message msg;
    uint32_t comm;
  } messages[16];  // Mprobe'd messages awaiting their Mrecv
  ThreadLog* next = nullptr;
};

struct Chunk {
  uint64_t part_offset;  // where the chunk starts in the spill file
  log::ChunkHeader header;
};

std::atomic<bool> g_active{false};  // between after_init and before_finalize
std::atomic<bool> g_logging{true};  // false while paused by MPI_Pcontrol(0) / MPE_Stop_log
int g_rank = -1, g_size = 0;
MPI_Comm g_comm = MPI_COMM_NULL;  // private: clock sync and finalize traffic
uint32_t g_buffer_records = 0;
int g_zstd_level = 1;

std::mutex g_mutex;  // guards everything below; never taken on the per-call path
ThreadLog* g_threads = nullptr;
uint32_t g_nthreads = 0;
int g_part_fd = -1;
std::string g_part_path;
std::atomic<uint64_t> g_part_offset{0};
std::vector<Chunk> g_chunks;
log::RankMeta g_meta;
std::string g_finish_name;  // MPE_Finish_log's file name, if given
uint64_t g_finalize_enter = 0;
uint32_t g_comm_counter = 1;

__thread ThreadLog* t_log __attribute__((tls_model("initial-exec")));

// Communicator handle -> per-rank index, read lock-free on the per-call path. Inserts happen
// under g_mutex and publish the index before the key. Stale entries of freed communicators are
// overwritten when MPI reuses the handle.
constexpr size_t kCommSlots = 4096;
struct CommSlot {
  std::atomic<uint64_t> key;
  std::atomic<uint32_t> index;
};
CommSlot g_comm_slots[kCommSlots];

uint64_t comm_key(MPI_Comm c) {
  uint64_t k = 0;
  std::memcpy(&k, &c, sizeof c < sizeof k ? sizeof c : sizeof k);
  return k;
}

// ~2 ns for MPI_COMM_WORLD, ~5 ns otherwise.
uint32_t comm_index(MPI_Comm c) {
  if (c == MPI_COMM_WORLD) return 0;
  if (c == MPI_COMM_SELF) return 1;
  const uint64_t k = comm_key(c);
  for (size_t i = (k * 0x9E3779B97F4A7C15ull >> 40) % kCommSlots, n = 0; n < kCommSlots;
       i = (i + 1) % kCommSlots, ++n) {
    const uint64_t s = g_comm_slots[i].key.load(std::memory_order_acquire);
    if (s == k) return g_comm_slots[i].index.load(std::memory_order_relaxed);
    if (s == 0) break;
  }
  return log::kUnknownComm;
}

void comm_insert(MPI_Comm c, uint32_t index) {
  const uint64_t k = comm_key(c);
  for (size_t i = (k * 0x9E3779B97F4A7C15ull >> 40) % kCommSlots, n = 0; n < kCommSlots;
       i = (i + 1) % kCommSlots, ++n) {
    const uint64_t s = g_comm_slots[i].key.load(std::memory_order_acquire);
    if (s == k || s == 0) {
      g_comm_slots[i].index.store(index, std::memory_order_relaxed);
      g_comm_slots[i].key.store(k, std::memory_order_release);
      return;
    }
  }
}

// ---- Spilling ---------------------------------------------------------------------------------

bool pwrite_all(int fd, const char* p, size_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
    off += static_cast<uint64_t>(w);
  }
  return true;
}

// Appends bytes to the spill file at a reserved offset; returns the offset.
uint64_t append_part(const std::string& bytes) {
  const uint64_t off = g_part_offset.fetch_add(bytes.size());
  if (g_part_fd >= 0 && !pwrite_all(g_part_fd, bytes.data(), bytes.size(), off))
    config::warn("liblog: cannot write " + g_part_path + ": " + std::strerror(errno), false);
  return off;
}

// Writes the rank meta chunk; the last one in the spill file wins. Caller holds g_mutex.
void write_meta_locked() {
  std::string c;
  log::encode_blob(log::ChunkKind::kRankMeta, static_cast<uint32_t>(g_rank), log::serialize_rank_meta(g_meta),
                   &c);
  append_part(c);
}

// Compresses a thread's buffer into one chunk and appends it to the spill file. ~3 ns/record.
void spill(ThreadLog* t) noexcept {
  if (t->n == 0) return;
  try {
    std::string c;
    log::encode_events(t->recs, t->n, static_cast<uint32_t>(g_rank), t->index, g_zstd_level, &c);
    const uint64_t off = append_part(c);
    log::ChunkHeader h;
    std::memcpy(&h, c.data(), sizeof h);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_chunks.push_back(Chunk{off, h});
  } catch (...) {
    config::warn("liblog: out of memory while spilling; records dropped", false);
  }
  t->n = 0;
}

ThreadLog* new_thread_log() noexcept {
  auto* t = new (std::nothrow) ThreadLog;
  if (!t) return nullptr;
  t->recs = static_cast<Record*>(std::malloc(sizeof(Record) * g_buffer_records));
  if (!t->recs) {
    delete t;
    return nullptr;
  }
  t->cap = g_buffer_records;
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    t->index = g_nthreads++;
    t->next = g_threads;
    g_threads = t;
    g_meta.threads.push_back(log::ThreadDef{t->index, static_cast<int64_t>(syscall(SYS_gettid))});
    write_meta_locked();
  } catch (...) {
  }
  t_log = t;
  return t;
}

inline ThreadLog* thread_log() {
  ThreadLog* t = t_log;
  return t ? t : new_thread_log();
}

// ~3 ns: bounds check and a 32-byte store.
inline void put(ThreadLog* t, const Record& r) {
  if (__builtin_expect(t->n == t->cap, 0)) spill(t);
  t->recs[t->n++] = r;
}

inline Record make(RecordKind k, uint64_t time, uint16_t cat, int32_t a, int32_t b, uint32_t comm,
                   uint64_t c) {
  return make_record(k, time, cat, a, b, comm, c);
}

// ---- Signals ------------------------------------------------------------------------------------

struct sigaction g_old_term, g_old_int;
char* g_signal_scratch = nullptr;
size_t g_signal_scratch_size = 0;

// Async-signal-safe: stores every thread's buffered records as raw chunks with pwrite.
void flush_raw_all() {
  for (ThreadLog* t = g_threads; t; t = t->next) {
    const uint32_t n = t->n;
    if (n == 0 || !g_signal_scratch) continue;
    const size_t len = log::encode_events_raw(t->recs, n, static_cast<uint32_t>(g_rank), t->index,
                                              g_signal_scratch, g_signal_scratch_size);
    if (len == 0) continue;
    const uint64_t off = g_part_offset.fetch_add(len);
    pwrite_all(g_part_fd, g_signal_scratch, len, off);
    t->n = 0;
  }
}

void on_signal(int sig) {
  if (g_active.exchange(false)) flush_raw_all();
  sigaction(sig, sig == SIGTERM ? &g_old_term : &g_old_int, nullptr);
  raise(sig);
}

// ---- Clock synchronisation ----------------------------------------------------------------

// Clock synchronisation: minimum-round-trip ping-pongs along a binomial tree, one edge at a time.
//
// Invariant: after sync, reference ticks (rank 0's clock) = local ticks + offset, where a rank's
// offset is its tree parent's offset plus the offset measured against that parent. The sample
// with the smallest round trip bounds the error by half that round trip (~0.5 us on one host).
// Two measurements (init, finalize) give offset and drift; the reader applies them linearly.
// Edges run one after another, and ranks not in the current edge sleep instead of spinning,
// so that the two ranks measuring run at once even when ranks outnumber cores (with every
// rank busy-polling, a round trip could take a whole scheduler slice, milliseconds).
// Cost: P-1 edges of >= kRounds round trips plus a ~20 us wake-up: < 1 ms for 8 ranks, ~50 ms
// for 1000. Failure modes: asymmetric links bias an offset by half the asymmetry; a rank stopped
// mid-run skews the drift estimate; if no round trip under kGoodRtt is seen within kBudget the
// best one is used, and `mpe stat` shows its round trip.
class ClockSync {
 public:
  static constexpr int kRounds = 24;
  static constexpr int kMaxRounds = 5000;
  static constexpr double kGoodRtt = 20e-6;  // seconds
  static constexpr double kBudget = 0.05;    // seconds per edge spent looking for a good sample
  static constexpr uint64_t kStop = UINT64_MAX;
  static constexpr int kTag = 7117;

  static int parent(int c) {
    int k = 1;
    while (2 * k <= c) k *= 2;
    return c - k;
  }

  // Receives one message, sleeping between polls so as to leave the cores to the measuring pair.
  static void sleepy_recv(void* buf, MPI_Datatype type, int src, MPI_Comm comm) {
    MPI_Request req;
    PMPI_Irecv(buf, 1, type, src, kTag, comm, &req);
    for (;;) {
      int done = 0;
      PMPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return;
      timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  }

  // Measures this rank's offset to rank 0; collective over comm.
  static void measure(MPI_Comm comm, int rank, int size, uint64_t* at, int64_t* offset, uint64_t* rtt) {
    int64_t total = 0;
    uint64_t best_rtt = 0, when = mpe_clock_now();
    for (int c = 1; c < size; ++c) {
      const int p = parent(c);
      if (rank == p) {
        if (c > 1) {
          int token;
          sleepy_recv(&token, MPI_INT, c - 1, comm);  // the previous edge is done
        }
        PMPI_Send(&total, 1, MPI_INT64_T, c, kTag, comm);  // go, with this rank's offset
        for (;;) {
          uint64_t ping;
          PMPI_Recv(&ping, 1, MPI_UINT64_T, c, kTag, comm, MPI_STATUS_IGNORE);
          if (ping == kStop) break;
          const uint64_t now = mpe_clock_now();
          PMPI_Send(&now, 1, MPI_UINT64_T, c, kTag, comm);
        }
      } else if (rank == c) {
        int64_t parent_total = 0;
        sleepy_recv(&parent_total, MPI_INT64_T, p, comm);
        int64_t off = 0;
        best_rtt = UINT64_MAX;
        const double tps = mpe_clock_ticks_per_second();
        const uint64_t good = static_cast<uint64_t>(tps * kGoodRtt);
        const uint64_t deadline = mpe_clock_now() + static_cast<uint64_t>(tps * kBudget);
        for (int i = 0; i < kMaxRounds && (i < kRounds || (best_rtt > good && mpe_clock_now() < deadline));
             ++i) {
          const uint64_t t0 = mpe_clock_now();
          uint64_t tp;
          PMPI_Send(&t0, 1, MPI_UINT64_T, p, kTag, comm);
          PMPI_Recv(&tp, 1, MPI_UINT64_T, p, kTag, comm, MPI_STATUS_IGNORE);
          const uint64_t t1 = mpe_clock_now();
          if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            off = static_cast<int64_t>(tp) - static_cast<int64_t>(t0 + (t1 - t0) / 2);
            when = t0 + (t1 - t0) / 2;
          }
        }
        PMPI_Send(&kStop, 1, MPI_UINT64_T, p, kTag, comm);
        total = off + parent_total;
        if (c + 1 < size) {
          int token = 1;
          PMPI_Send(&token, 1, MPI_INT, parent(c + 1), kTag, comm);
        }
      }
    }
    *at = when;
    *offset = total;
    *rtt = best_rtt;
  }
};

MPI_Comm g_node_comm = MPI_COMM_NULL;    // ranks sharing this host
MPI_Comm g_leader_comm = MPI_COMM_NULL;  // the lowest rank of each host

// Ranks on one host read one clock (the invariant TSC or CLOCK_MONOTONIC are host-wide), so
// only one rank per host measures, against rank 0's host; the others take its offset. With
// MPE_CLOCKS_SYNC=force every rank measures (to exercise the algorithm on one host).
void sync_clocks(bool final) {
  const std::string mode = config::env_string("MPE_CLOCKS_SYNC", "yes");
  if (mode == "no" || mode == "0" || mode == "off" || mode == "false" || g_comm == MPI_COMM_NULL) return;
  const bool force = mode == "force";
  static bool made = false;  // the communicators are made once, at init, by every rank
  int node_rank = 0;
  if (!made) {
    made = true;
    if (force) {
      PMPI_Comm_split(g_comm, 0, g_rank, &g_leader_comm);
    } else {
      PMPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &g_node_comm);
      PMPI_Comm_rank(g_node_comm, &node_rank);
      PMPI_Comm_split(g_comm, node_rank == 0 ? 0 : MPI_UNDEFINED, g_rank, &g_leader_comm);
    }
  }
  if (!force && g_node_comm != MPI_COMM_NULL) PMPI_Comm_rank(g_node_comm, &node_rank);
  if (!force && g_node_comm == MPI_COMM_NULL) return;  // mode changed between init and finalize
  uint64_t at = mpe_clock_now(), rtt = 0;
  int64_t off = 0;
  PMPI_Barrier(g_comm);
  if (g_leader_comm != MPI_COMM_NULL && (force || node_rank == 0)) {
    int lr, ln;
    PMPI_Comm_rank(g_leader_comm, &lr);
    PMPI_Comm_size(g_leader_comm, &ln);
    ClockSync::measure(g_leader_comm, lr, ln, &at, &off, &rtt);
  }
  if (!force) {
    int64_t shared[2] = {off, static_cast<int64_t>(rtt)};
    PMPI_Bcast(shared, 2, MPI_INT64_T, 0, g_node_comm);
    off = shared[0];
    rtt = static_cast<uint64_t>(shared[1]);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  if (final) {
    g_meta.sync.t_final = at;
    g_meta.sync.offset_final = off;
    g_meta.sync.rtt_final = rtt;
    g_meta.sync.valid |= 2;
  } else {
    g_meta.sync.t_init = at;
    g_meta.sync.offset_init = off;
    g_meta.sync.rtt_init = rtt;
    g_meta.sync.valid |= 1;
  }
}

// ---- Communicators ----------------------------------------------------------------------------

std::vector<int32_t> world_ranks(MPI_Group g) {
  int n = 0;
  PMPI_Group_size(g, &n);
  std::vector<int> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) in[static_cast<size_t>(i)] = i;
  MPI_Group world;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  PMPI_Group_translate_ranks(g, n, in.data(), world, out.data());
  PMPI_Group_free(&world);
  std::vector<int32_t> v(out.begin(), out.end());
  for (auto& x : v)
    if (x == MPI_UNDEFINED) x = -1;
  return v;
}

// Gives a new communicator its global id and member list: one allreduce (two for an
// intercommunicator) on the new communicator, whose members are all in this creating call.
// Not for communicators to other jobs (spawn, connect, accept, join), whose other side may not
// run liblog: those get a rank-local id (bit 62), and their messages stay unmatched.
void register_comm(MPI_Comm c, uint64_t time, ThreadLog* t, bool collective) noexcept {
  if (c == MPI_COMM_NULL) return;
  try {
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    uint64_t mine;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      mine = (static_cast<uint64_t>(g_rank) << 32) | g_comm_counter++;
    }
    uint64_t id = 0;
    MPI_Group g;
    if (!collective) {
      id = (1ull << 62) | mine;
      if (inter)
        PMPI_Comm_remote_group(c, &g);
      else
        PMPI_Comm_group(c, &g);
    } else if (!inter) {
      PMPI_Allreduce(&mine, &id, 1, MPI_UINT64_T, MPI_MIN, c);
      PMPI_Comm_group(c, &g);
    } else {
      uint64_t remote_min = 0, local_min = 0;
      PMPI_Allreduce(&mine, &remote_min, 1, MPI_UINT64_T, MPI_MIN, c);
      PMPI_Allreduce(&remote_min, &local_min, 1, MPI_UINT64_T, MPI_MIN, c);
      const uint64_t lo = std::min(remote_min, local_min), hi = std::max(remote_min, local_min);
      id = (1ull << 63) | ((lo * 0x9E3779B97F4A7C15ull) ^ hi);
      PMPI_Comm_remote_group(c, &g);
    }
    log::CommDef def;
    def.global_id = id;
    def.inter = inter != 0;
    def.members = world_ranks(g);
    PMPI_Group_free(&g);
    uint32_t index;
    const auto members = static_cast<int32_t>(def.members.size());
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      index = static_cast<uint32_t>(g_meta.comms.size());
      def.index = index;
      g_meta.comms.push_back(std::move(def));
      comm_insert(c, index);
      write_meta_locked();
    }
    if (t) put(t, make(RecordKind::kCommCreate, time, 0, members, 0, index, 0));
  } catch (...) {
  }
}

// ---- Hooks --------------------------------------------------------------------------------------

int64_t type_bytes(MPI_Datatype t, int64_t count) { return count > 0 ? count * mpe::type_size(t) : 0; }

// Tracks a nonblocking send's or receive's request under a new serial, which its kRequestPost
// and kRequestDone records carry (for OTF2's MpiIsend ... MpiIrecv); returns the serial.
// MPICH hands out one builtin handle for every send that completed inside its call, so the
// handle can still name an older send: that one was complete, so say so now, before the new
// request's records (which must stay next to its message record).
uint32_t track_request(ThreadLog* t, const Call& c, ReqInfo info) {
  info.serial = ++t->last_request;
  const ReqInfo replaced = t->requests.put(info);
  if (replaced.type == kSend)
    put(t, make(RecordKind::kRequestDone, c.t_enter, static_cast<uint16_t>(c.fn), static_cast<int32_t>(replaced.serial),
                static_cast<int32_t>(log::RequestWhat::kSend), 0, 0));
  return info.serial;
}

void put_request_post(ThreadLog* t, const Call& c, uint32_t serial, log::RequestWhat what) {
  put(t, make(RecordKind::kRequestPost, c.t_enter, static_cast<uint16_t>(c.fn), static_cast<int32_t>(serial),
              static_cast<int32_t>(what), 0, 0));
}

// True when st says its request was cancelled.
bool cancelled(const MPI_Status* st) {
  int flag = 0;
  if (st != nullptr && st != MPI_STATUS_IGNORE) PMPI_Test_cancelled(st, &flag);
  return flag != 0;
}

// Writes the receive a completed, not cancelled status describes, unless it was from PROC_NULL.
void put_received(ThreadLog* t, uint64_t time, uint16_t cat, uint32_t comm, const MPI_Status* st) {
  if (st == nullptr || st == MPI_STATUS_IGNORE || st->MPI_SOURCE == MPI_PROC_NULL || st->MPI_SOURCE < 0)
    return;
  put(t, make(RecordKind::kRecv, time, cat, st->MPI_SOURCE, st->MPI_TAG, comm, static_cast<uint64_t>(mpe::status_bytes(st))));
}

void put_recv(ThreadLog* t, uint64_t time, uint16_t cat, uint32_t comm, const MPI_Status* st) {
  if (!cancelled(st)) put_received(t, time, cat, comm, st);
}

// Before a Wait/Test: remembers what each request was, since MPI nulls completed handles.
// ~3 ns per request.
void snapshot(ThreadLog* t, const Call& c) {
  if (c.depth > 1 || !c.requests) return;
  const int n = c.nreq();
  auto& s = t->snap[c.depth];
  if (s.size() < static_cast<size_t>(n)) s.resize(static_cast<size_t>(n));
  const uint32_t id = ++t->snapshots;
  for (int i = 0; i < n; ++i) {
    const MPI_Request r = c.requests[i];
    ReqInfo* p = r == MPI_REQUEST_NULL ? nullptr : t->requests.find(r);
    // A handle that several requests share (MPICH's builtin completed request, also returned
    // for MPI_PROC_NULL) stands for its tracked request once per call, not once per copy.
    if (p && p->snapshot == id) p = nullptr;
    if (p) p->snapshot = id;
    s[static_cast<size_t>(i)] = p ? *p : ReqInfo{};
  }
}

// After a Wait/Test: a receive record for every completed tracked receive.
void completions(ThreadLog* t, const Call& c) {
  if (c.depth > 1 || !c.requests) return;
  auto& s = t->snap[c.depth];
  const int n = std::min<int>(c.nreq(), static_cast<int>(s.size()));
  const uint16_t cat = static_cast<uint16_t>(c.fn);
  auto one = [&](int i, const MPI_Status* st) {
    if (i < 0 || i >= n) return;
    ReqInfo& info = s[static_cast<size_t>(i)];
    const bool was_cancelled = info.type != kNone && info.type != kPersistentSend && cancelled(st);
    if (info.type == kRecv || info.type == kSend) {
      const auto what = was_cancelled          ? log::RequestWhat::kCancelled
                        : info.type == kSend ? log::RequestWhat::kSend
                                             : log::RequestWhat::kRecv;
      put(t, make(RecordKind::kRequestDone, c.t_leave, cat, static_cast<int32_t>(info.serial),
                  static_cast<int32_t>(what), 0, 0));
    }
    if ((info.type == kRecv || info.type == kPersistentRecv) && !was_cancelled)
      put_received(t, c.t_leave, cat, info.comm, st);
    if (info.type == kRecv || info.type == kSend) t->requests.erase(info.req);
    info.type = kNone;
  };
  mpe::for_each_completed(c, one);
}

void on_enter(Call& c) noexcept {
  if (mpe::completes_requests(c.cls)) {
    if (g_active.load(std::memory_order_relaxed))
      if (ThreadLog* t = thread_log()) snapshot(t, c);
    return;
  }
  switch (c.cls) {
    case CallClass::request_free:
      if (g_active.load(std::memory_order_relaxed) && c.requests)
        if (ThreadLog* t = thread_log()) t->requests.erase(*c.requests);
      return;
    case CallClass::finalize:
      g_finalize_enter = mpe_clock_now();
      return;
    case CallClass::abort:
      flush_now();
      return;
    default:
      return;
  }
}

__attribute__((noinline)) void on_leave_slow(ThreadLog* t, Call& c, bool logging) noexcept {
  const uint16_t cat = static_cast<uint16_t>(c.fn);
  const bool ok = c.rc == MPI_SUCCESS;
  switch (c.cls) {
    case CallClass::pcontrol: {
      const bool on = c.level != 0;
      g_logging.store(on, std::memory_order_relaxed);
      put(t, make(RecordKind::kState, c.t_enter, cat, c.depth, 0, 0, c.t_leave - c.t_enter));
      put(t, make(RecordKind::kMarker, c.t_enter, cat, c.level, on ? 1 : 0, 0, 0));
      return;
    }
    case CallClass::comm_create:
      if (ok && c.newcomm && c.mode == Mode::Blocking)
        register_comm(*c.newcomm, c.t_leave, logging ? t : nullptr,
                      c.fn != Fn::MPI_Comm_spawn && c.fn != Fn::MPI_Comm_spawn_multiple && c.fn != Fn::MPI_Comm_accept &&
                          c.fn != Fn::MPI_Comm_connect && c.fn != Fn::MPI_Comm_join);
      if (!logging) return;
      break;
    default:
      if (!logging) return;
      break;
  }
  if (!ok) return;
  if (mpe::completes_requests(c.cls)) {
    completions(t, c);
    return;
  }
  switch (c.cls) {
    case CallClass::send: {
      if (!c.has(role::dest) || c.dest == MPI_PROC_NULL) return;
      int64_t bytes = type_bytes(c.sendtype, c.sendcount);
      if (c.has(role::partitions)) bytes *= c.partitions;
      const uint32_t comm = comm_index(c.comm);
      if (c.mode == Mode::PersistentInit) {
        if (c.requests)
          t->requests.put(
              ReqInfo{*c.requests, comm, kPersistentSend, c.dest, c.sendtag, static_cast<uint64_t>(bytes)});
        return;
      }
      const uint32_t serial =
          c.mode == Mode::Nonblocking && c.requests
              ? track_request(t, c, ReqInfo{*c.requests, comm, kSend, c.dest, c.sendtag, static_cast<uint64_t>(bytes)})
              : 0;
      put(t, make(RecordKind::kSend, c.t_enter, cat, c.dest, c.sendtag, comm, static_cast<uint64_t>(bytes)));
      if (serial) put_request_post(t, c, serial, log::RequestWhat::kSend);
      return;
    }
    case CallClass::recv:
    case CallClass::mrecv: {
      uint32_t comm = log::kUnknownComm;
      if (c.cls == CallClass::recv) {
        comm = comm_index(c.comm);
      } else if (c.message) {  // the message handle is already MPI_MESSAGE_NULL; take the oldest Mprobe'd
        for (auto& m : t->messages)
          if (m.msg != MPI_MESSAGE_NULL) {
            comm = m.comm;
            m.msg = MPI_MESSAGE_NULL;
            break;
          }
      }
      if (c.mode == Mode::Blocking) {
        put_recv(t, c.t_leave, cat, comm, c.status);
      } else if (c.requests) {
        if (c.cls == CallClass::recv && c.source == MPI_PROC_NULL) return;
        if (c.mode == Mode::PersistentInit)
          t->requests.put(ReqInfo{*c.requests, comm, kPersistentRecv, 0, 0, 0});
        else
          put_request_post(t, c, track_request(t, c, ReqInfo{*c.requests, comm, kRecv, 0, 0, 0}),
                           log::RequestWhat::kRecv);
      }
      return;
    }
    case CallClass::sendrecv: {
      const uint32_t comm = comm_index(c.comm);
      if (c.dest != MPI_PROC_NULL)
        put(t, make(RecordKind::kSend, c.t_enter, cat, c.dest, c.sendtag, comm,
                    static_cast<uint64_t>(type_bytes(c.sendtype, c.sendcount))));
      if (c.mode == Mode::Blocking)
        put_recv(t, c.t_leave, cat, comm, c.status);
      else if (c.requests && c.source != MPI_PROC_NULL)
        put_request_post(t, c, track_request(t, c, ReqInfo{*c.requests, comm, kRecv, 0, 0, 0}),
                         log::RequestWhat::kRecv);
      return;
    }
    case CallClass::mprobe:
      if (c.message && *c.message != MPI_MESSAGE_NULL && *c.message != MPI_MESSAGE_NO_PROC &&
          (c.mode == Mode::Blocking || (c.flag && *c.flag)))
        for (auto& m : t->messages)
          if (m.msg == MPI_MESSAGE_NULL) {
            m.msg = *c.message;
            m.comm = comm_index(c.comm);
            break;
          }
      return;
    case CallClass::start:
      if (!c.requests) return;
      for (int i = 0; i < c.nreq(); ++i) {
        const ReqInfo* p = c.requests[i] == MPI_REQUEST_NULL ? nullptr : t->requests.find(c.requests[i]);
        if (p && p->type == kPersistentSend)
          put(t, make(RecordKind::kSend, c.t_enter, cat, p->dest, p->tag, p->comm, p->bytes));
      }
      return;
    case CallClass::barrier:
    case CallClass::bcast:
    case CallClass::reduce:
    case CallClass::allreduce:
    case CallClass::reduce_scatter:
    case CallClass::reduce_scatter_block:
    case CallClass::scan:
    case CallClass::exscan:
    case CallClass::gather:
    case CallClass::gatherv:
    case CallClass::scatter:
    case CallClass::scatterv:
    case CallClass::allgather:
    case CallClass::allgatherv:
    case CallClass::alltoall:
    case CallClass::alltoallv:
    case CallClass::alltoallw:
    case CallClass::neighbor_allgather:
    case CallClass::neighbor_allgatherv:
    case CallClass::neighbor_alltoall:
    case CallClass::neighbor_alltoallv:
    case CallClass::neighbor_alltoallw: {
      const int root = c.has(role::root) ? c.root : -1;
      const mpe::Bytes bytes = mpe::collective_bytes(c);
      const auto received = static_cast<int32_t>(std::min<int64_t>(bytes.recv, INT32_MAX));
      put(t, make(RecordKind::kCollective, c.t_enter, cat, root, received, comm_index(c.comm),
                  static_cast<uint64_t>(bytes.sent)));
      return;
    }
    default:
      return;
  }
}

// The per-call path: ~8-12 ns for a cheap call (TLS load, one record, one class test).
void on_leave(Call& c) noexcept {
  if (!g_active.load(std::memory_order_relaxed)) return;
  ThreadLog* t = thread_log();
  if (!t) return;
  const bool logging = g_logging.load(std::memory_order_relaxed);
  if (logging && c.cls != CallClass::pcontrol)
    put(t, make(RecordKind::kState, c.t_enter, static_cast<uint16_t>(c.fn), c.depth, 0, 0,
                c.t_leave - c.t_enter));
  if (c.cls != CallClass::other && c.cls != CallClass::probe) on_leave_slow(t, c, logging);
}

// ---- Life cycle ---------------------------------------------------------------------------------

std::string part_path(int rank) {
  return config::output_dir() + "/" + config::output_prefix() + ".mpelog." + std::to_string(rank) + ".part";
}

std::string final_path() {
  if (!g_finish_name.empty()) {
    const bool has_ext =
        g_finish_name.size() > 7 && g_finish_name.compare(g_finish_name.size() - 7, 7, ".mpelog") == 0;
    return has_ext ? g_finish_name : g_finish_name + ".mpelog";
  }
  const std::string dir = config::env_string("MPE_LOG_DIR", ".");
  return dir + "/" + config::output_prefix() + ".mpelog";
}

log::Definitions base_definitions() {
  log::Definitions d;
  d.program = config::output_prefix();
  d.clock = mpe_clock_name();
  d.ticks_per_second = mpe_clock_ticks_per_second();
  std::vector<std::string> names;
  names.reserve(kFnCount);
  for (int i = 0; i < kFnCount; ++i) names.push_back(kFnInfo[i].name);
  d.categories = log::mpi_categories(names);
  return d;
}

void after_init() noexcept {
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
  PMPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  const int64_t buffer = config::env_int("MPE_LOG_BUFFER", 4 << 20, 4096, int64_t{1} << 31);
  g_buffer_records = static_cast<uint32_t>(buffer / static_cast<int64_t>(sizeof(Record)));
  g_zstd_level = static_cast<int>(config::env_int("MPE_LOG_ZSTD_LEVEL", 1, -5, 19));
  g_logging.store(!config::env_bool("MPE_LOG_PAUSED", false));
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_meta.rank = static_cast<uint32_t>(g_rank);
    g_meta.world_size = static_cast<uint32_t>(g_size);
    g_meta.pid = getpid();
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    g_meta.host = host;
    g_meta.ticks_per_second = mpe_clock_ticks_per_second();
    g_meta.logging_at_start = g_logging.load();
    g_meta.comms.push_back(log::CommDef{0, 0, false, {}});
    for (int i = 0; i < g_size; ++i) g_meta.comms[0].members.push_back(i);
    g_meta.comms.push_back(log::CommDef{1, (1ull << 62) | static_cast<uint64_t>(g_rank), false, {g_rank}});
  }
  g_part_path = part_path(g_rank);
  g_part_fd = ::open(g_part_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_part_fd < 0) {
    config::warn("liblog: cannot create " + g_part_path + ": " + std::strerror(errno) + "; logging is off",
                 false);
    return;
  }
  log::PartHeader h{};
  std::memcpy(h.magic, log::kPartMagic, 8);
  h.version = log::kCurrentVersion;
  h.header_size = sizeof h;
  h.rank = static_cast<uint32_t>(g_rank);
  h.size = static_cast<uint32_t>(g_size);
  h.ticks_per_second = mpe_clock_ticks_per_second();
  log::seal(&h);
  std::string head(reinterpret_cast<const char*>(&h), sizeof h);
  log::encode_blob(log::ChunkKind::kDefinitions, h.rank, log::serialize_definitions(base_definitions()),
                   &head);
  g_part_offset.store(0);
  append_part(head);
  sync_clocks(false);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    write_meta_locked();
  }
  g_signal_scratch_size = sizeof(log::ChunkHeader) + static_cast<size_t>(g_buffer_records) * sizeof(Record);
  g_signal_scratch = static_cast<char*>(std::malloc(g_signal_scratch_size));
  if (config::env_bool("MPE_LOG_SIGNALS", true)) {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &g_old_term);
    sigaction(SIGINT, &sa, &g_old_int);
  }
  g_active.store(true);
}

bool read_at(int fd, char* p, size_t n, uint64_t off) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r <= 0) {
      if (r < 0 && errno == EINTR) continue;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
    off += static_cast<uint64_t>(r);
  }
  return true;
}

// The parallel merge; see the design note at the top of this file.
bool merge_into(const std::string& out, uint64_t* total_bytes, uint64_t* total_records) {
  // Order this rank's chunks by thread, then time, as the index promises.
  std::sort(g_chunks.begin(), g_chunks.end(), [](const Chunk& a, const Chunk& b) {
    return a.header.thread != b.header.thread ? a.header.thread < b.header.thread
                                              : a.header.t_first < b.header.t_first;
  });
  uint64_t mine = 0, nrec = 0;
  for (const auto& c : g_chunks) {
    mine += sizeof(log::ChunkHeader) + c.header.payload_size;
    nrec += c.header.nrecords;
  }
  uint64_t before = 0;
  PMPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, g_comm);
  if (g_rank == 0) before = 0;
  uint64_t sums[2] = {mine, nrec}, totals[2];
  PMPI_Allreduce(sums, totals, 2, MPI_UINT64_T, MPI_SUM, g_comm);
  const uint64_t base = sizeof(log::FileHeader) + before;

  // Rank 0 creates the file empty; the others open it once it exists.
  int fd = -1, ok = 1;
  if (g_rank == 0) {
    fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) config::warn("liblog: cannot create " + out + ": " + std::strerror(errno), false);
  }
  int created = g_rank == 0 ? (fd >= 0) : 0;
  PMPI_Bcast(&created, 1, MPI_INT, 0, g_comm);
  if (!created) return false;
  if (g_rank != 0) fd = ::open(out.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) ok = 0;

  std::vector<log::IndexEntry> entries;
  entries.reserve(g_chunks.size());
  uint64_t off = base;
  std::string buf;
  for (const auto& c : g_chunks) {
    const size_t len = sizeof(log::ChunkHeader) + c.header.payload_size;
    entries.push_back(log::index_entry(c.header, off));
    if (ok) {
      buf.resize(len);
      if (!read_at(g_part_fd, buf.data(), len, c.part_offset) || !pwrite_all(fd, buf.data(), len, off))
        ok = 0;
    }
    off += len;
  }

  // Rank 0 gathers the index entries and the rank definitions: ~100 B per chunk.
  const std::string meta = log::serialize_rank_meta(g_meta);
  int lens[2] = {static_cast<int>(entries.size() * sizeof(log::IndexEntry)), static_cast<int>(meta.size())};
  std::vector<int> all_lens(g_rank == 0 ? 2 * static_cast<size_t>(g_size) : 0);
  PMPI_Gather(lens, 2, MPI_INT, all_lens.data(), 2, MPI_INT, 0, g_comm);
  std::vector<int> counts_i, displs_i, counts_m, displs_m;
  std::string idx_bytes, meta_bytes;
  if (g_rank == 0) {
    int di = 0, dm = 0;
    for (int r = 0; r < g_size; ++r) {
      counts_i.push_back(all_lens[2 * static_cast<size_t>(r)]);
      displs_i.push_back(di);
      di += counts_i.back();
      counts_m.push_back(all_lens[2 * static_cast<size_t>(r) + 1]);
      displs_m.push_back(dm);
      dm += counts_m.back();
    }
    idx_bytes.resize(static_cast<size_t>(di));
    meta_bytes.resize(static_cast<size_t>(dm));
  }
  PMPI_Gatherv(entries.data(), lens[0], MPI_BYTE, idx_bytes.data(), counts_i.data(), displs_i.data(),
               MPI_BYTE, 0, g_comm);
  PMPI_Gatherv(meta.data(), lens[1], MPI_BYTE, meta_bytes.data(), counts_m.data(), displs_m.data(), MPI_BYTE,
               0, g_comm);

  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, g_comm);
  if (g_rank == 0 && all_ok) {
    log::Definitions d = base_definitions();
    d.world_size = static_cast<uint32_t>(g_size);
    d.ranks.resize(static_cast<size_t>(g_size));
    for (int r = 0; r < g_size && all_ok; ++r) {
      if (!log::parse_rank_meta(meta_bytes.data() + displs_m[static_cast<size_t>(r)],
                                static_cast<size_t>(counts_m[static_cast<size_t>(r)]),
                                &d.ranks[static_cast<size_t>(r)])
               .ok())
        all_ok = 0;
    }
    log::merge_user_categories(&d);
    std::vector<log::IndexEntry> index(idx_bytes.size() / sizeof(log::IndexEntry));
    if (!index.empty()) std::memcpy(index.data(), idx_bytes.data(), idx_bytes.size());
    const uint64_t tail_at = sizeof(log::FileHeader) + totals[0];
    const std::string tail = log::build_tail(d, index, tail_at);
    const std::string head = log::build_file_header();
    // The header goes last: a file with a valid header is complete.
    if (!all_ok || !pwrite_all(fd, tail.data(), tail.size(), tail_at) ||
        ftruncate(fd, static_cast<off_t>(tail_at + tail.size())) != 0 ||
        !pwrite_all(fd, head.data(), head.size(), 0))
      all_ok = 0;
    *total_bytes = tail_at + tail.size();
  }
  if (fd >= 0) ::close(fd);
  PMPI_Bcast(&all_ok, 1, MPI_INT, 0, g_comm);
  *total_records = totals[1];
  return all_ok != 0;
}

void before_finalize() noexcept {
  if (!g_active.load()) return;
  ThreadLog* me = thread_log();
  if (me && g_logging.load() && g_finalize_enter)
    put(me, make(RecordKind::kState, g_finalize_enter, static_cast<uint16_t>(Fn::MPI_Finalize), 0, 0, 0,
                 mpe_clock_now() - g_finalize_enter));
  sync_clocks(true);
  g_active.store(false);
  if (config::env_bool("MPE_LOG_SIGNALS", true)) {
    sigaction(SIGTERM, &g_old_term, nullptr);
    sigaction(SIGINT, &g_old_int, nullptr);
  }
  for (ThreadLog* t = g_threads; t; t = t->next) spill(t);
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    write_meta_locked();
  }
  try {
    const std::string out = final_path();
    uint64_t bytes = 0, records = 0;
    const bool ok = merge_into(out, &bytes, &records);
    const bool keep = !ok || !config::env_bool("MPE_DELETE_LOCALFILE", true);
    const OutputFormats formats = output_formats();
    const bool otf2_ok = ok && formats.otf2 && write_otf2(g_comm, out, otf2_path(out));
    const bool drop_mpelog = otf2_ok && !formats.mpelog;  // it was only the way to OTF2
    if (g_part_fd >= 0) ::close(g_part_fd);
    g_part_fd = -1;
    if (!keep) ::unlink(g_part_path.c_str());
    if (g_rank == 0 && drop_mpelog) ::unlink(out.c_str());
    if (g_rank == 0 && !drop_mpelog) {
      if (ok)
        std::fprintf(stderr, "mpe-tools: liblog wrote %s (%llu records, %llu bytes)\n", out.c_str(),
                     static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes));
      else
        config::warn("liblog: the merge into " + out + " failed; the per-rank files " +
                     config::output_prefix() + ".mpelog.<rank>.part are kept: run `mpe merge --recover`");
    }
  } catch (...) {
    config::warn("liblog: out of memory at finalize; the per-rank files are kept", false);
  }
  if (g_node_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_node_comm);
  if (g_leader_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_leader_comm);
  if (g_comm != MPI_COMM_NULL) PMPI_Comm_free(&g_comm);
}

// on_enter acts on these classes only (see there); every other call goes straight to on_leave.
constexpr uint64_t kEnterClasses =
    mpe::kCompletingClasses | classes(CallClass::request_free, CallClass::finalize, CallClass::abort);

const Tool kTool = {"log", kNeedsTime | kNeedsStatus, on_enter, on_leave, after_init, before_finalize, kEnterClasses};

__attribute__((constructor)) void register_log_tool() {
  if (mpe_core_register_tool(&kTool) != 0) config::warn("liblog: too many tools loaded; logging is off");
}

}  // namespace

// ---- Interface for the MPE user API (log_tool.h) ------------------------------------------------

bool active() { return g_active.load(std::memory_order_relaxed); }
bool logging() { return g_logging.load(std::memory_order_relaxed); }
void set_logging(bool on) { g_logging.store(on, std::memory_order_relaxed); }

void put_record(const Record& r) {
  if (!g_active.load(std::memory_order_relaxed)) return;
  if (ThreadLog* t = thread_log()) put(t, r);
}

void define_category(const log::Category& c) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& old : g_meta.user_categories)
    if (old.id == c.id) {
      old = c;
      if (g_part_fd >= 0) write_meta_locked();
      return;
    }
  g_meta.user_categories.push_back(c);
  if (g_part_fd >= 0) write_meta_locked();
}

void set_finish_name(const std::string& name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_finish_name = name;
}

void flush_now() noexcept {
  if (!g_active.load()) return;
  for (ThreadLog* t = g_threads; t; t = t->next) spill(t);
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    write_meta_locked();
  } catch (...) {
  }
}

}  // namespace mpe::liblog
