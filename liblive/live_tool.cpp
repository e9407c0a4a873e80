// liblive: the live view's recorder. Every MPI call of the application updates its thread's "now"
// slot (what it is in, since when, what it waits for) and, for messages and collectives, puts an
// event in the thread's ring; a publisher thread (publisher.cpp) turns both into one frame per
// interval. The per-call path takes no lock, makes no allocation (but a thread's first call) and
// makes no MPI call except those liblog makes too (a datatype's size, a collective's bytes).
#include <pthread.h>

#include <new>

#include "live_hooks.h"
#include "live_state.h"
#include "mpe/bytes.h"
#include "mpe/call_filter.h"
#include "mpe/callsite.h"
#include "mpe/clock.h"
#include "mpe/completion.h"
#include "mpe/config.h"
#include "mpe/core.h"
#include "mpe/python_frames.h"
#include "mpe/traffic.h"
#include "publisher.h"

namespace mpe::tools::live {

std::atomic<LiveThread*> g_threads{nullptr};
__thread LiveThread* t_live __attribute__((tls_model("initial-exec")));
std::atomic<bool> g_recording{false};
int g_world_rank = -1;

bool g_filtered = false;
std::atomic<bool> g_filter_on{true};

namespace {

using live_stream::EventKind;
using live_stream::WaitKind;

pthread_key_t g_gone_key;
pthread_once_t g_gone_once = PTHREAD_ONCE_INIT;

// A thread that ends is no longer listed as somewhere; its counters and events still count.
void thread_gone(void* p) {
  auto* t = static_cast<LiveThread*>(p);
  t->gone.store(true, std::memory_order_release);
  t_live = nullptr;
}

}  // namespace

__attribute__((noinline)) WaitKind snapshot_requests(LiveThread* t, const Call& c, NowSlot& s,
                                                     bool any) noexcept {
  t->snapshot_n = 0;
  if (!c.has(role::requests)) return WaitKind::kUnknown;
  const int n = c.nreq();
  int known = 0;
  bool unknown = false;
  for (int i = 0; i < n; ++i) {
    const MPI_Request r = c.requests[i];
    const RequestPeer* p = r == MPI_REQUEST_NULL ? nullptr : t->requests.find(r);
    if (i < LiveThread::kMaxSnapshot) {
      t->snapshot_req[i] = r;
      t->snapshot[i] = p ? *p : RequestPeer{};
    }
    if (r == MPI_REQUEST_NULL) continue;
    if (!p || p->world_peer < 0) {
      unknown = true;
      continue;
    }
    bool dup = false;
    for (int k = 0; k < known && !dup; ++k) dup = s.peers[k] == p->world_peer;
    if (!dup && known < kMaxWaitPeers)
      s.peers[known++] = p->world_peer;
    else if (!dup)
      unknown = true;
  }
  t->snapshot_n = n < LiveThread::kMaxSnapshot ? n : LiveThread::kMaxSnapshot;
  s.npeers = static_cast<uint8_t>(known);
  if ((any && unknown) || known == 0) return WaitKind::kUnknown;
  return any ? WaitKind::kAnyOf : WaitKind::kAllOf;
}

namespace {

void put_event(LiveThread* t, EventKind kind, uint64_t ticks, Fn fn, WorldPeer peer, int32_t tag,
               uint64_t bytes) {
  push(t, Event{ticks, bytes, peer.rank, tag, peer.comm, fn, static_cast<uint8_t>(kind)});
}

// What the traffic rule (mpe/traffic.h) says a call moved, as liblive's counters and events, its
// peers named in world ranks.
struct LiveSink {
  LiveThread* t;

  void send(const Call& c, const traffic::Message& m, const MPI_Request* req) {
    const WorldPeer to = world_peer(m.comm, m.peer);
    if (req) follow(c, *req, traffic::Posted{traffic::RequestKind::kSend, false, m}, to.rank);
    if (to.rank < 0) return;  // a communicator liblive does not know
    bump(t->sends, 1);
    bump(t->send_bytes, m.bytes);
    put_event(t, EventKind::kSend, c.t_enter, c.fn, to, m.tag, m.bytes);
  }
  void recv(const Call& c, const traffic::Message& m) {
    const WorldPeer from = world_peer(m.comm, m.peer);
    if (from.rank < 0) return;
    bump(t->recvs, 1);
    bump(t->recv_bytes, m.bytes);
    put_event(t, EventKind::kRecv, c.t_leave, c.fn, from, m.tag, m.bytes);
  }
  void post(const Call& c, MPI_Request r, const traffic::Posted& p) {
    follow(c, r, p, world_peer(p.msg.comm, p.msg.peer).rank);
  }
  const traffic::Posted* find(MPI_Request r) {
    const RequestPeer* p = t->requests.find(r);
    return p ? &p->posted : nullptr;
  }
  traffic::ProbedMessages& probed() { return t->probed; }

  void follow(const Call& c, MPI_Request r, const traffic::Posted& p, int32_t world) {
    if (c.rc == MPI_SUCCESS) t->requests.put(r, RequestPeer{p, world});
  }
};

}  // namespace

__attribute__((noinline)) void record_traffic(LiveThread* t, const Call& c) noexcept {
  LiveSink sink{t};
  if (traffic::moves_messages(c.cls)) {
    if (c.rc == MPI_SUCCESS) traffic::visit(c, sink);
    return;
  }
  switch (c.cls) {
    case CallClass::kCommCreate:
      if (c.rc == MPI_SUCCESS && c.mode == Mode::kBlocking && c.has(role::newcomm)) register_comm(*c.newcomm);
      return;
    default:
      break;
  }
  if (completes_requests(c.cls)) {
    // What completed, by the snapshot taken on entry: receives deliver what the traffic rule says;
    // requests that end at completion are forgotten.
    for_each_completed(c, [&](int i, const MPI_Status* st) {
      if (i < 0 || i >= t->snapshot_n) return;
      const RequestPeer& p = t->snapshot[i];
      traffic::Message m;
      if (traffic::delivered(p.posted, st, &m)) sink.recv(c, m);
      if (traffic::ends_at_completion(p.posted.kind)) t->requests.erase(t->snapshot_req[i]);
    });
    return;
  }
  if (is_collective(c.cls)) {
    bump(t->collectives, 1);
    const uint64_t bytes = c.rc == MPI_SUCCESS ? static_cast<uint64_t>(collective_bytes(c).sent) : 0;
    put_event(t, EventKind::kCollective, c.t_enter, c.fn, WorldPeer{traffic::kPeerUnknown, 0}, 0, bytes);
    if (c.mode == Mode::kNonblocking && c.has(role::requests))
      sink.follow(c, *c.requests, traffic::Posted{traffic::RequestKind::kCollective, false, {}},
                  traffic::kPeerUnknown);
  }
}

__attribute__((noinline)) void on_leave_filtered(LiveThread* t, Call& c) noexcept {
  if (c.cls == CallClass::kPcontrol)
    g_filter_on.store(call_filter::records_rank(g_world_rank) &&
                          call_filter::records_at_level(c.has(role::level) ? c.level : 1),
                      std::memory_order_relaxed);
  const bool on = g_filter_on.load(std::memory_order_relaxed);
  if (on && !(call_filter::g_active && call_filter::leaves_out(c))) return record_call(t, c, shape_of(c));
  if (c.cls == CallClass::kOther || c.cls == CallClass::kProbe) return;  // nothing to follow
  if (t->now.in_mpi) leave_slot(t, c);  // a Wait/Test left out entered its slot, for its snapshot
  if ((on && !call_filter::drops_messages()) || completes_requests(c.cls) || c.cls == CallClass::kCommCreate)
    record_traffic(t, c);
}

namespace {

void after_init() noexcept {
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  int size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  define_builtin_comms(size);
  call_filter::load("liblive");
  g_filter_on.store(call_filter::records_rank(g_world_rank) && call_filter::records_at_level(1));
  g_filtered = !call_filter::text().empty();
  core::python::detect();
  start_publisher(g_world_rank, size);
}

void before_finalize() noexcept { stop_publisher(); }

constexpr Tool kTool = core::solo_tool<Hooks>("live", after_init, before_finalize);

__attribute__((constructor)) void register_live_tool() {
  if (mpe_core_register_tool(&kTool) != 0)
    config::warn("liblive: too many tools loaded; the live view is off");
}

}  // namespace

LiveThread* new_live_thread() noexcept {
  static std::atomic<uint32_t> next_index{0};
  auto* t = new (std::nothrow) LiveThread;
  if (!t) return nullptr;
  for (size_t i = 0; i < static_cast<size_t>(kFnCount); ++i) {
    t->fn_ticks[i].store(0, std::memory_order_relaxed);
    t->fn_calls[i].store(0, std::memory_order_relaxed);
  }
  t->index = next_index.fetch_add(1);
  LiveThread* head = g_threads.load();
  do t->next = head;
  while (!g_threads.compare_exchange_weak(head, t));
  t_live = t;
  pthread_once(&g_gone_once, [] { pthread_key_create(&g_gone_key, thread_gone); });
  pthread_setspecific(g_gone_key, t);
  return t;
}

}  // namespace mpe::tools::live
