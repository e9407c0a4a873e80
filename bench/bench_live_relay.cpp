// The live relay's throughput: messages per second it forwards from publishers to one viewer on
// this machine. The relay (mpe::live_stream::run_relay, as `mpe run --live` runs it, with CURVE keys
// made for this run) runs in a thread; P publisher threads connect to it exactly as liblive's
// publisher does (an XPUB socket, CURVE client, XPUB_NODROP, its own ZeroMQ context as a rank has),
// wait for the viewer's subscription, then offer encoded RankFrames of about the given size as
// fast as the relay takes them (a full queue makes the publisher retry: the relay sets the pace);
// one mpe::live_stream::Subscriber receives. Prints the relay's own count of what it forwarded per second
// (taken in from the publishers and offered to the viewer) and what reached the viewer, per second
// and in MB/s (the difference was dropped at the relay's queue to a viewer slower than the relay).
// Everything shares this machine's cores: the publishers' rate is what the relay leaves them.
// Run: bench_live_relay [publishers (default 4)] [seconds (default 3)] [frame bytes (default 1024)]
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "mpe/live_transport.h"
#include "mpe/live_wire.h"

namespace {

namespace live_stream = mpe::live_stream;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_ready{false};
live_stream::LiveFile g_file;

void relay_ready(const live_stream::LiveFile& f) {
  g_file = f;
  g_ready = true;
}

bool set_key(void* socket, int option, const std::string& z85) {
  uint8_t key[32];
  return z85.size() == 40 && zmq_z85_decode(key, z85.c_str()) && zmq_setsockopt(socket, option, key, 32) == 0;
}

// A rank's frame of about `bytes` encoded bytes: one thread in MPI_Waitall, a few routines, and
// send events until the size is reached.
std::string frame_of(uint32_t rank, size_t bytes) {
  live_stream::RankFrame f;
  f.rank = rank;
  f.world_size = 64;
  f.pid = 1000 + rank;
  f.host = "node01";
  f.interval_start_ns = 1;
  f.interval_end_ns = 100000001;
  f.sends = f.recvs = 40;
  f.send_bytes = f.recv_bytes = 40 * 512;
  f.mpi_ns = 40000000;
  f.routines = {{"MPI_Isend", 200000, 20}, {"MPI_Irecv", 100000, 20}, {"MPI_Waitall", 39000000, 5}};
  live_stream::ThreadNow t;
  t.in_mpi = true;
  t.since_ns = 90000000;
  t.routine = "MPI_Waitall";
  t.callsite = "exchange at halo2d.c:97";
  t.comm = 0;
  t.wait = live_stream::WaitKind::kAllOf;
  t.peers = {static_cast<int32_t>((rank + 1) % 64), static_cast<int32_t>((rank + 63) % 64)};
  f.threads.push_back(t);
  f.comms.push_back(live_stream::CommDef{1, "MPI_COMM_WORLD", {{0, 64}}});
  std::string out = live_stream::encode(f);
  for (int i = 0; out.size() < bytes; ++i) {
    f.events.push_back(live_stream::TrafficEvent{live_stream::EventKind::kSend,
                                                 50000000ull + static_cast<uint64_t>(i),
                                                 static_cast<int32_t>((rank + 1) % 64), 1, 1, 512, ""});
    out = live_stream::encode(f);
  }
  return out;
}

struct PublisherResult {
  uint64_t sent = 0, retries = 0;
  bool subscribed = false;
};

// One rank's publisher: connects as liblive does, waits for the subscription, then offers `frame`
// until `stop`.
void publish(const live_stream::KeyPair& keys, const std::string& frame, const std::atomic<bool>& go,
             const std::atomic<bool>& stop, std::atomic<int>& subscribed, PublisherResult* r) {
  void* context = zmq_ctx_new();
  zmq_ctx_set(context, ZMQ_IO_THREADS, 1);
  zmq_ctx_set(context, ZMQ_BLOCKY, 0);
  void* s = zmq_socket(context, ZMQ_XPUB);
  int v = 1;
  zmq_setsockopt(s, ZMQ_XPUB_NODROP, &v, sizeof v);
  zmq_setsockopt(s, ZMQ_IMMEDIATE, &v, sizeof v);
  v = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &v, sizeof v);
  v = 10000;
  zmq_setsockopt(s, ZMQ_RCVTIMEO, &v, sizeof v);
  if (set_key(s, ZMQ_CURVE_SERVERKEY, g_file.server_public) &&
      set_key(s, ZMQ_CURVE_PUBLICKEY, keys.public_key) && set_key(s, ZMQ_CURVE_SECRETKEY, keys.secret_key) &&
      zmq_connect(s, g_file.publish_endpoint.c_str()) == 0) {
    char sub[256];
    for (int n; (n = zmq_recv(s, sub, sizeof sub, 0)) >= 0;)
      if (n >= 1 && sub[0] == 1) {
        r->subscribed = true;
        break;
      }
  }
  ++subscribed;
  while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  while (r->subscribed && !stop) {
    if (zmq_send(s, frame.data(), frame.size(), ZMQ_DONTWAIT) >= 0) {
      ++r->sent;
    } else {
      ++r->retries;
      std::this_thread::yield();
    }
  }
  zmq_close(s);
  zmq_ctx_term(context);
}

}  // namespace

int main(int argc, char** argv) {
  const int publishers = argc > 1 ? std::atoi(argv[1]) : 4;
  const double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const size_t frame_bytes = argc > 3 ? static_cast<size_t>(std::atol(argv[3])) : 1024;
  auto server = live_stream::new_key_pair(), publisher = live_stream::new_key_pair(),
       viewer = live_stream::new_key_pair();
  if (!server.ok() || !publisher.ok() || !viewer.ok()) {
    std::fprintf(stderr, "bench_live_relay: %s\n", server.status().message().c_str());
    return 1;
  }
  live_stream::RelayConfig config;
  config.server = *server;
  config.publisher_public = publisher->public_key;
  config.viewer_public = viewer->public_key;
  config.file.server_public = server->public_key;
  config.file.viewer = *viewer;
  int control[2];
  if (pipe(control) != 0) return 1;
  live_stream::RelayStats stats;
  mpe::Status relay_status;
  std::thread relay([&] { relay_status = live_stream::run_relay(config, control[0], &stats, relay_ready); });
  for (int i = 0; i < 1000 && !g_ready; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!g_ready) {
    close(control[1]);
    relay.join();
    std::fprintf(stderr, "bench_live_relay: the relay did not start: %s\n", relay_status.message().c_str());
    return 1;
  }
  live_stream::Subscriber sub;
  if (auto s = sub.connect(g_file, 1000000); !s.ok()) {
    std::fprintf(stderr, "bench_live_relay: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<std::string> frames;
  for (int p = 0; p < publishers; ++p) frames.push_back(frame_of(static_cast<uint32_t>(p), frame_bytes));
  std::atomic<bool> go{false}, stop{false};
  std::atomic<int> subscribed{0};
  std::vector<PublisherResult> results(static_cast<size_t>(publishers));
  std::vector<std::thread> threads;
  for (int p = 0; p < publishers; ++p)
    threads.emplace_back(publish, std::cref(*publisher), std::cref(frames[static_cast<size_t>(p)]),
                         std::cref(go), std::cref(stop), std::ref(subscribed),
                         &results[static_cast<size_t>(p)]);
  while (subscribed < publishers) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  int ok = 0;
  for (const auto& r : results) ok += r.subscribed;
  if (ok < publishers)
    std::fprintf(stderr, "bench_live_relay: %d of %d publishers saw no subscription\n", publishers - ok,
                 publishers);

  uint64_t received = 0, received_bytes = 0;
  const auto t0 = Clock::now();
  go = true;
  const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    if (auto m = sub.receive(50)) {
      ++received;
      received_bytes += m->size();
    }
  }
  stop = true;
  const double window = std::chrono::duration<double>(Clock::now() - t0).count();
  for (auto& t : threads) t.join();
  // What was still in flight reaches the viewer after the window: counted in the totals only.
  uint64_t total = received;
  while (auto m = sub.receive(300)) ++total;
  close(control[1]);
  relay.join();
  uint64_t sent = 0;
  for (const auto& r : results) sent += r.sent;
  const size_t size = frames[0].size();
  const double rate = static_cast<double>(received) / window,
               mb = static_cast<double>(received_bytes) / window / 1e6;
  const double forwarded_rate = static_cast<double>(stats.forwarded) / window;
  std::printf(
      "relay: %d publisher(s), %zu-byte frames, %.1f s: the relay took in and forwarded %lu (%.0f "
      "messages/s, %.1f "
      "MB/s); the viewer received %lu of them in the window (%.0f messages/s, %.1f MB/s), %lu in all (the "
      "rest "
      "dropped at the relay's queue to the slower viewer); publishers handed over %lu\n",
      publishers, size, window, static_cast<unsigned long>(stats.forwarded), forwarded_rate,
      forwarded_rate * static_cast<double>(size) / 1e6, static_cast<unsigned long>(received), rate, mb,
      static_cast<unsigned long>(total), static_cast<unsigned long>(sent));
  std::printf(
      "bench_live_relay: publishers=%d frame_bytes=%zu forwarded_per_s=%.0f viewer_per_s=%.0f "
      "viewer_mb_per_s=%.1f "
      "dropped=%ld\n",
      publishers, size, forwarded_rate, rate, mb,
      static_cast<long>(stats.forwarded) - static_cast<long>(total));
  return relay_status.ok() ? 0 : 1;
}
