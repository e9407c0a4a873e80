// The publisher thread. Each interval (MPE_LIVE_INTERVAL ms, default 100) it copies every
// thread's "now" slot, drains the threads' event rings, takes the counters' growth since the last
// frame sent, and, when a viewer subscribes, encodes one frame and offers it to ZeroMQ without
// waiting. The frame's events stay under MPE_LIVE_BUDGET bytes per second (default 64 KiB/s);
// above it the interval's sends are aggregated per destination and the frame says so.
//
// Never blocking a rank: the threads only store into their own slots and rings; this thread is the
// only consumer. Never queueing without bound: a ring holds kRingSize events (64 KiB per thread)
// and overflows into a counter; ZeroMQ holds at most kSendQueue frames (XPUB_NODROP makes a full
// queue refuse the frame instead of blocking, and it is counted). With no viewer, the XPUB socket
// has no subscription and sends nothing; the counters and the per-peer totals then keep growing so
// that the next frame sent covers everything since the last one (the sum over frames equals the
// run's totals).
//
// Security: the rank connects to the relay with CURVE, as the client whose key pair `mpe run
// --live` made for this run (MPE_LIVE_PUBLIC_KEY / MPE_LIVE_SECRET_KEY), and checks the relay's
// identity (MPE_LIVE_SERVER_KEY).
#include "publisher.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include "live_state.h"
#include "mpe/callsite.h"
#include "mpe/clock.h"
#include "mpe/config.h"
#include "mpe/frame.h"
#include "mpe/symbolizer.h"

namespace mpe::tools::live {

namespace {

using live_stream::EventKind;

constexpr int kSendQueue = 4;  // frames ZeroMQ may hold for the relay

struct Settings {
  std::string endpoint, server_key, public_key, secret_key;
  int64_t interval_ms = 100;
  int64_t budget = 64 * 1024;  // bytes per second of events
};

std::mutex g_mutex;
std::condition_variable g_wake;
bool g_stop = false;
pthread_t g_thread;
bool g_running = false;

uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool set_key(void* socket, int option, const std::string& z85) {
  uint8_t key[32];
  if (z85.size() != 40 || !zmq_z85_decode(key, z85.c_str())) return false;
  return zmq_setsockopt(socket, option, key, sizeof key) == 0;
}

class Publisher {
 public:
  Publisher(Settings settings, int rank, int size) : s_(std::move(settings)), rank_(rank), size_(size) {
    tick0_ = mpe_clock_now();
    ns0_ = realtime_ns();
    ns_per_tick_ = 1e9 / mpe_clock_ticks_per_second();
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    host_ = host;
    last_sent_ns_ = ns0_;
  }

  // Opens the socket; false (and one line) when ZeroMQ cannot.
  bool open() {
    context_ = zmq_ctx_new();
    if (!context_) return fail("cannot start ZeroMQ");
    zmq_ctx_set(context_, ZMQ_IO_THREADS, 1);
    zmq_ctx_set(context_, ZMQ_BLOCKY, 0);
    socket_ = zmq_socket(context_, ZMQ_XPUB);
    if (!socket_) return fail("cannot make a socket");
    int v = kSendQueue;
    zmq_setsockopt(socket_, ZMQ_SNDHWM, &v, sizeof v);
    v = 1;
    zmq_setsockopt(socket_, ZMQ_XPUB_NODROP, &v, sizeof v);
    zmq_setsockopt(socket_, ZMQ_IMMEDIATE, &v, sizeof v);  // nothing queued for a relay not (yet) there
    v = 1000;  // at most this long at MPI_Finalize to flush the last frames to a connected relay
    zmq_setsockopt(socket_, ZMQ_LINGER, &v, sizeof v);
    if (!set_key(socket_, ZMQ_CURVE_SERVERKEY, s_.server_key) ||
        !set_key(socket_, ZMQ_CURVE_PUBLICKEY, s_.public_key) ||
        !set_key(socket_, ZMQ_CURVE_SECRETKEY, s_.secret_key))
      return fail(
          "MPE_LIVE_SERVER_KEY, MPE_LIVE_PUBLIC_KEY or MPE_LIVE_SECRET_KEY is not a CURVE key; run under "
          "`mpe run --live`");
    // Connection events, so that a relay that never answers gets one line instead of silence.
    const std::string monitor = "inproc://mpe-live-monitor";
    if (zmq_socket_monitor(socket_, monitor.c_str(),
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) == 0) {
      monitor_ = zmq_socket(context_, ZMQ_PAIR);
      if (monitor_ && zmq_connect(monitor_, monitor.c_str()) != 0) {
        zmq_close(monitor_);
        monitor_ = nullptr;
      }
    }
    if (zmq_connect(socket_, s_.endpoint.c_str()) != 0)
      return fail("cannot connect to MPE_LIVE_ENDPOINT=" + s_.endpoint + " (" + zmq_strerror(zmq_errno()) +
                  ")");
    return true;
  }

  ~Publisher() {
    if (monitor_) zmq_close(monitor_);
    if (socket_) zmq_close(socket_);
    if (context_) zmq_ctx_term(context_);
  }

  // One interval: read the subscriptions, build the frame, offer it.
  void tick(bool last) {
    read_subscriptions();
    watch_connection(last);
    drain();
    live_stream::RankFrame f;
    if (subscribers_ <= 0 && !last) return;  // nobody watching: send nothing, keep the counters' growth
    fill(&f, last);
    const std::string bytes = live_stream::encode(f);
    if (zmq_send(socket_, bytes.data(), bytes.size(), ZMQ_DONTWAIT) < 0) {
      ++frames_dropped_;
      return;  // the counters' growth goes into the next frame
    }
    ++seq_;
    commit(f.interval_end_ns);
  }

 private:
  bool fail(const std::string& what) {
    config::warn(
        "liblive: rank " + std::to_string(rank_) + ": " + what + "; the live view is off for this rank",
        false);
    return false;
  }

  uint64_t to_ns(uint64_t ticks) const {
    return ns0_ +
           static_cast<uint64_t>(static_cast<double>(static_cast<int64_t>(ticks - tick0_)) * ns_per_tick_);
  }

  // Says once when the relay has not let this rank in after kConnectGraceNs (or by the end of a
  // shorter job): nothing it records
  // reaches a viewer (wrong address, relay gone, or keys not of this run).
  void watch_connection(bool last) {
    if (!monitor_) return;
    read_monitor();
    // At the end of a job that never got in, the handshake's verdict may still be on its way:
    // wait for it up to 1 s, so that the line says why (this rank's MPI_Finalize waits that long
    // only when its live view has failed).
    for (int i = 0; last && !admitted_ && !refused_ && !said_unreachable_ && i < 20; ++i) {
      zmq_pollitem_t item{monitor_, 0, ZMQ_POLLIN, 0};
      zmq_poll(&item, 1, 50);
      read_monitor();
    }
    if (!admitted_ && !said_unreachable_ && (last || realtime_ns() - ns0_ > kConnectGraceNs)) {
      said_unreachable_ = true;
      config::warn(std::string("liblive: ") +
                       (refused_ ? "the live relay at " : "no live relay answers at ") + s_.endpoint +
                       (refused_ ? " refused this job's key" : "") +
                       "; the live view shows nothing of this job (the job itself runs on)",
                   true);
    }
  }

  // Takes the connection events the monitor has queued.
  void read_monitor() {
    for (;;) {
      zmq_msg_t m;
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, monitor_, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return;
      }
      uint16_t event = 0;
      if (zmq_msg_size(&m) >= 2) std::memcpy(&event, zmq_msg_data(&m), 2);
      const bool more = zmq_msg_more(&m);
      zmq_msg_close(&m);
      if (more) {  // the second part names the endpoint
        zmq_msg_init(&m);
        zmq_msg_recv(&m, monitor_, ZMQ_DONTWAIT);
        zmq_msg_close(&m);
      }
      if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) admitted_ = true;
      if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        refused_ = true;
    }
  }

  void read_subscriptions() {
    for (;;) {
      zmq_msg_t m;
      zmq_msg_init(&m);
      if (zmq_msg_recv(&m, socket_, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return;
      }
      if (zmq_msg_size(&m) >= 1) {
        const uint8_t what = *static_cast<const uint8_t*>(zmq_msg_data(&m));
        subscribers_ += what == 1 ? 1 : what == 0 ? -1 : 0;
      }
      zmq_msg_close(&m);
    }
  }

  // Empties every thread's ring into the next frame's events (while under the budget) and
  // per-peer totals. With nobody watching they wait for the next frame sent, like the counters,
  // so that the first frame a viewer gets covers the time before it too; both stay bounded (the
  // budget's events, one total per peer).
  void drain() {
    const double interval_s = static_cast<double>(s_.interval_ms) / 1000.0;
    const size_t max_events =
        std::max<size_t>(16, static_cast<size_t>(static_cast<double>(s_.budget) * interval_s / 40.0));
    for (LiveThread* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
      const uint32_t head = t->head.load(std::memory_order_acquire);
      uint32_t tail = t->tail.load(std::memory_order_relaxed);
      for (; tail != head; ++tail) {
        const Event& e = t->ring[tail % kRingSize];
        if (e.kind != static_cast<uint8_t>(EventKind::kCollective)) {
          live_stream::PeerTotal& p =
              (e.kind == static_cast<uint8_t>(EventKind::kSend) ? sent_per_peer_
                                                                : received_per_peer_)[e.peer];
          p.peer = e.peer;
          ++p.count;
          p.bytes += e.bytes;
        }
        if (pending_.size() < max_events) {
          pending_.push_back(live_stream::TrafficEvent{
              static_cast<EventKind>(e.kind), to_ns(e.ticks), e.peer, e.tag, comm_key(e.comm), e.bytes,
              e.kind == static_cast<uint8_t>(EventKind::kCollective) ? kFnInfo[static_cast<int>(e.fn)].name
                                                                     : ""});
        } else {
          over_budget_ = true;
        }
      }
      t->tail.store(tail, std::memory_order_release);
    }
  }

  // The run-wide key of the communicator an event names by its index; 0 for none.
  static uint64_t comm_key(uint32_t index) {
    const CommInfo* info = index ? comm_at(index) : nullptr;
    return info ? info->key : 0;
  }

  void fill(live_stream::RankFrame* f, bool last) {
    f->rank = static_cast<uint32_t>(rank_);
    f->world_size = static_cast<uint32_t>(size_);
    f->pid = static_cast<uint32_t>(getpid());
    f->host = host_;
    f->seq = seq_;
    f->interval_start_ns = last_sent_ns_;
    f->interval_end_ns = realtime_ns();
    f->finalized = last;
    f->frames_dropped = frames_dropped_;
    std::map<const CommInfo*, int32_t> comms;
    next_ = Totals{};
    for (LiveThread* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
      next_.events_dropped += t->dropped.load(std::memory_order_relaxed);
      next_.sends += t->sends.load(std::memory_order_relaxed);
      next_.send_bytes += t->send_bytes.load(std::memory_order_relaxed);
      next_.recvs += t->recvs.load(std::memory_order_relaxed);
      next_.recv_bytes += t->recv_bytes.load(std::memory_order_relaxed);
      next_.collectives += t->collectives.load(std::memory_order_relaxed);
      if (!t->gone.load(std::memory_order_acquire)) f->threads.push_back(now_of(t, f, comms));
    }
    std::sort(f->threads.begin(), f->threads.end(),
              [](const auto& a, const auto& b) { return a.thread < b.thread; });
    f->events_dropped = next_.events_dropped;
    f->sends = next_.sends - sent_.sends;
    f->send_bytes = next_.send_bytes - sent_.send_bytes;
    f->recvs = next_.recvs - sent_.recvs;
    f->recv_bytes = next_.recv_bytes - sent_.recv_bytes;
    f->collectives = next_.collectives - sent_.collectives;
    // Time per routine since the last frame sent.
    next_fn_.assign(static_cast<size_t>(kFnCount) * 2, 0);
    for (LiveThread* t = g_threads.load(std::memory_order_acquire); t; t = t->next)
      for (size_t i = 0; i < static_cast<size_t>(kFnCount); ++i) {
        next_fn_[2 * i] += t->fn_ticks[i].load(std::memory_order_relaxed);
        next_fn_[2 * i + 1] += t->fn_calls[i].load(std::memory_order_relaxed);
      }
    if (sent_fn_.size() != next_fn_.size()) sent_fn_.assign(next_fn_.size(), 0);
    std::map<std::string, live_stream::RoutineTime> by_routine;
    for (size_t i = 0; i < static_cast<size_t>(kFnCount); ++i) {
      const uint64_t ticks = next_fn_[2 * i] - sent_fn_[2 * i],
                     calls = next_fn_[2 * i + 1] - sent_fn_[2 * i + 1];
      if (calls == 0 && ticks == 0) continue;
      by_routine[kFnInfo[i].name] = live_stream::RoutineTime{
          kFnInfo[i].name, static_cast<uint64_t>(static_cast<double>(ticks) * ns_per_tick_), calls};
    }
    // A call in progress has not reached its leave hook, yet its time so far belongs to this
    // interval; it is credited here, and taken back from the interval where the call ends (whose
    // counters then hold its whole duration).
    next_credit_ = sent_credit_;
    for (const live_stream::ThreadNow& t : f->threads) {
      Credit& c = next_credit_[t.thread];
      if (c.ns && !(t.in_mpi && t.since_ns == c.since_ns)) {
        live_stream::RoutineTime& r = by_routine[c.routine];
        r.routine = c.routine;
        r.ns -= std::min(r.ns, c.ns);
        c = Credit{};
      }
      if (!t.in_mpi) continue;
      const uint64_t from = std::max(t.since_ns, f->interval_start_ns);
      const uint64_t in_call = f->interval_end_ns > from ? f->interval_end_ns - from : 0;
      live_stream::RoutineTime& r = by_routine[t.routine];
      r.routine = t.routine;
      r.ns += in_call;
      c.since_ns = t.since_ns;
      c.routine = t.routine;
      c.ns += in_call;
    }
    for (auto& [name, r] : by_routine) {
      f->mpi_ns += r.ns;
      if (r.ns || r.calls) f->routines.push_back(r);
    }
    if (over_budget_) {
      f->aggregated = true;
      for (auto& [peer, total] : sent_per_peer_) f->per_peer.push_back(total);
      for (auto& [peer, total] : received_per_peer_) f->received_per_peer.push_back(total);
    } else {
      f->events = std::move(pending_);
    }
    pending_.clear();
    sent_per_peer_.clear();
    received_per_peer_.clear();
    over_budget_ = false;
  }

  // Makes the counters' values in this frame the base of the next.
  void commit(uint64_t end_ns) {
    sent_ = next_;
    sent_fn_ = next_fn_;
    sent_credit_ = next_credit_;
    last_sent_ns_ = end_ns;
  }

  live_stream::ThreadNow now_of(LiveThread* t, live_stream::RankFrame* f,
                                std::map<const CommInfo*, int32_t>& comms) {
    NowSlot copy;
    for (int attempt = 0; attempt < 100; ++attempt) {
      const uint32_t q1 = t->now.seq.load(std::memory_order_acquire);
      if (q1 & 1) continue;
      copy.in_mpi = t->now.in_mpi;
      copy.wait = t->now.wait;
      copy.npeers = t->now.npeers;
      copy.fn = t->now.fn;
      copy.since = t->now.since;
      copy.caller = t->now.caller;
      copy.comm = t->now.comm;
      copy.peer = t->now.peer;
      copy.tag = t->now.tag;
      copy.root = t->now.root;
      std::copy(t->now.peers, t->now.peers + kMaxWaitPeers, copy.peers);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (t->now.seq.load(std::memory_order_relaxed) == q1) break;
    }
    live_stream::ThreadNow n;
    n.thread = t->index;
    n.in_mpi = copy.in_mpi;
    n.since_ns = copy.since ? to_ns(copy.since) : ns0_;
    if (!copy.in_mpi) return n;
    n.routine = kFnInfo[static_cast<int>(copy.fn)].name;
    n.callsite = site_text(copy.caller);
    n.peer = copy.peer == traffic::kPeerNull ? traffic::kPeerUnknown : copy.peer;
    n.tag = copy.tag;
    n.root = copy.root;
    n.wait = static_cast<live_stream::WaitKind>(copy.wait);
    for (int i = 0; i < copy.npeers && i < kMaxWaitPeers; ++i)
      if (copy.peers[i] >= 0 && copy.peers[i] < size_) n.peers.push_back(copy.peers[i]);
    if (copy.comm != MPI_COMM_NULL) {
      if (const CommInfo* info = comm_info(copy.comm)) {
        auto [it, added] = comms.emplace(info, static_cast<int32_t>(f->comms.size()));
        if (added) {
          const bool in_job = std::all_of(info->members.begin(), info->members.end(),
                                          [&](int32_t m) { return m >= 0 && m < size_; });
          if (in_job)
            f->comms.push_back(
                live_stream::CommDef{info->key, info->label, live_stream::to_ranges(info->members)});
          else
            it->second = -1;
        }
        n.comm = it->second;
      }
    }
    if ((n.wait == live_stream::WaitKind::kAnyInComm || n.wait == live_stream::WaitKind::kCollective) &&
        n.comm < 0)
      n.wait = live_stream::WaitKind::kUnknown;
    if ((n.wait == live_stream::WaitKind::kAllOf || n.wait == live_stream::WaitKind::kAnyOf) &&
        n.peers.empty())
      n.wait = live_stream::WaitKind::kUnknown;
    return n;
  }

  // "halo2d.c:57 (exchange)" (mpe::callsite_text, the form every report uses), symbolized once per
  // address against this process's own map; a caller tagged with its site's id (a call from
  // Python) by that site's frames.
  const std::string& site_text(uintptr_t pc) {
    auto it = sites_.find(pc);
    if (it != sites_.end()) return it->second;
    std::string text;
    if (pc & core::kResolvedSite)
      text = callsite_text(symbolize_callsite(symbolizer_, core::callsite_of(pc)));
    else if (pc)
      text = callsite_text({symbolizer_.symbolize(pc, true)});
    if (sites_.size() > 4096) sites_.clear();
    return sites_.emplace(pc, std::move(text)).first->second;
  }

  // The part of a call in progress already credited to sent frames.
  struct Credit {
    uint64_t since_ns = 0, ns = 0;
    std::string routine;
  };
  std::map<uint32_t, Credit> sent_credit_, next_credit_;

  struct Totals {
    uint64_t events_dropped = 0, sends = 0, send_bytes = 0, recvs = 0, recv_bytes = 0, collectives = 0;
  };

  Settings s_;
  int rank_, size_;
  std::string host_;
  uint64_t tick0_, ns0_;
  double ns_per_tick_;
  void* context_ = nullptr;
  void* socket_ = nullptr;
  void* monitor_ = nullptr;
  static constexpr uint64_t kConnectGraceNs = 3'000'000'000;
  bool admitted_ = false, refused_ = false, said_unreachable_ = false;
  int subscribers_ = 0;
  uint64_t seq_ = 0, frames_dropped_ = 0;
  uint64_t last_sent_ns_;
  Totals sent_, next_;
  std::vector<uint64_t> sent_fn_, next_fn_;
  std::vector<live_stream::TrafficEvent> pending_;
  // The interval's messages per destination and per source, sent instead of its events when
  // they are over the budget.
  std::map<int32_t, live_stream::PeerTotal> sent_per_peer_, received_per_peer_;
  bool over_budget_ = false;
  Symbolizer symbolizer_;
  std::unordered_map<uintptr_t, std::string> sites_;
};

Publisher* g_publisher = nullptr;

void* run(void*) {
  Publisher* p = g_publisher;
  int64_t interval_ms = 100;
  {
    std::unique_lock<std::mutex> lock(g_mutex);
    interval_ms = config::env_int("MPE_LIVE_INTERVAL", 100, 10, 60000);
  }
  for (;;) {
    bool stop;
    {
      std::unique_lock<std::mutex> lock(g_mutex);
      g_wake.wait_for(lock, std::chrono::milliseconds(interval_ms), [] { return g_stop; });
      stop = g_stop;
    }
    try {
      p->tick(stop);
    } catch (const std::bad_alloc&) {
      static bool said = false;
      if (!said)
        config::warn("liblive: out of memory while publishing; a frame was dropped", false), said = true;
    }
    if (stop) return nullptr;
  }
}

}  // namespace

void start_publisher(int rank, int size) noexcept {
  Settings s;
  s.endpoint = config::env_string("MPE_LIVE_ENDPOINT", "");
  s.server_key = config::env_string("MPE_LIVE_SERVER_KEY", "");
  s.public_key = config::env_string("MPE_LIVE_PUBLIC_KEY", "");
  s.secret_key = config::env_string("MPE_LIVE_SECRET_KEY", "");
  s.interval_ms = config::env_int("MPE_LIVE_INTERVAL", 100, 10, 60000);
  s.budget = config::env_int("MPE_LIVE_BUDGET", 64 * 1024, 1024, int64_t{1} << 32);
  if (s.endpoint.empty() || s.server_key.empty()) {
    config::warn(
        "liblive: MPE_LIVE_ENDPOINT or MPE_LIVE_SERVER_KEY is not set; run the program under "
        "`mpe run --live`; the live view is off");
    return;
  }
  try {
    g_publisher = new Publisher(std::move(s), rank, size);
    if (!g_publisher->open()) {
      delete g_publisher;
      g_publisher = nullptr;
      return;
    }
  } catch (const std::bad_alloc&) {
    config::warn("liblive: out of memory at start; the live view is off", false);
    return;
  }
  // The thread (and ZeroMQ's I/O thread it starts) takes no signal meant for the application.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 512 * 1024);
  g_running = pthread_create(&g_thread, &attr, run, nullptr) == 0;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!g_running) config::warn("liblive: cannot start the publisher thread; the live view is off", false);
}

void stop_publisher() noexcept {
  if (!g_running) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_stop = true;
  }
  g_wake.notify_all();
  pthread_join(g_thread, nullptr);
  g_running = false;
  delete g_publisher;
  g_publisher = nullptr;
}

}  // namespace mpe::tools::live
