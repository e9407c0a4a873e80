// The live view's latency: from a send's call (the event's wall-clock time, CLOCK_REALTIME at
// the call's entry, which liblive records) to its arrow reaching a viewer. A viewer of its own:
// it reads the run's `.live` file (waiting for it to appear), subscribes to the relay, and for
// every send event in every rank frame takes (receipt wall clock - event time); when the job ends
// (the relay's JobEnd) or the time limit passes it prints the median, p90 and max, and the part
// that is transport alone (receipt - the frame's interval end, once per frame). By design the
// figure includes the wait for the interval's end (up to MPE_LIVE_INTERVAL, default 100 ms).
// Frames over the traffic budget carry per-peer totals instead of events: they are counted, not
// timed.
// Run: bench_live_latency <prefix>.live [time limit in seconds (default 300)]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mpe/live_transport.h"
#include "mpe/live_wire.h"

namespace {

int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The q-quantile (0..1) of v, in ms; v is sorted here.
double quantile_ms(std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return static_cast<double>(v[i]) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_live_latency <prefix>.live [time limit in seconds]\n");
    return 2;
  }
  const std::string path = argv[1];
  const double limit_s = argc > 2 ? std::atof(argv[2]) : 300.0;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  while (!std::filesystem::exists(path) && elapsed() < limit_s)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto file = mpe::live_stream::read_live_file(path);
  if (!file.ok()) {
    std::fprintf(stderr, "bench_live_latency: %s\n", file.status().message().c_str());
    return 1;
  }
  mpe::live_stream::Subscriber sub;
  if (auto s = sub.connect(*file); !s.ok()) {
    std::fprintf(stderr, "bench_live_latency: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<int64_t> event_latency, frame_latency;
  std::set<uint32_t> ranks;
  uint64_t frames = 0, aggregated = 0, rejected = 0, frames_dropped = 0, events_dropped = 0;
  uint32_t world_size = 0;
  bool ended = false;
  while (!ended && elapsed() < limit_s) {
    auto msg = sub.receive(200);
    if (!msg) continue;
    const int64_t now = realtime_ns();
    auto kind = mpe::live_stream::peek_kind(msg->data(), msg->size());
    if (!kind.ok()) {
      ++rejected;
    } else if (*kind == mpe::live_stream::MessageKind::kJobEnd) {
      ended = true;
    } else if (auto f = mpe::live_stream::decode_frame(msg->data(), msg->size()); !f.ok()) {
      ++rejected;
    } else {
      ++frames;
      ranks.insert(f->rank);
      world_size = f->world_size;
      frames_dropped = std::max(frames_dropped, f->frames_dropped);
      events_dropped = std::max(events_dropped, f->events_dropped);
      if (f->aggregated) ++aggregated;
      frame_latency.push_back(now - static_cast<int64_t>(f->interval_end_ns));
      for (const auto& e : f->events)
        if (e.kind == mpe::live_stream::EventKind::kSend)
          event_latency.push_back(now - static_cast<int64_t>(e.t_ns));
    }
  }
  const size_t sends = event_latency.size();
  const double median = quantile_ms(event_latency, 0.5), p90 = quantile_ms(event_latency, 0.9),
               max = quantile_ms(event_latency, 1.0);
  const double frame_median = quantile_ms(frame_latency, 0.5), frame_p90 = quantile_ms(frame_latency, 0.9);
  std::printf(
      "send to arrow at the viewer: median %.1f ms, p90 %.1f ms, max %.1f ms over %zu sends from %zu of %u "
      "ranks "
      "(%lu frames, %lu aggregated over the budget, %lu rejected; largest drop counts: %lu frames, %lu "
      "events); "
      "of which transport (frame's end to receipt): median %.1f ms, p90 %.1f ms; %s\n",
      median, p90, max, sends, ranks.size(), world_size, static_cast<unsigned long>(frames),
      static_cast<unsigned long>(aggregated), static_cast<unsigned long>(rejected),
      static_cast<unsigned long>(frames_dropped), static_cast<unsigned long>(events_dropped), frame_median,
      frame_p90, ended ? "the job ended" : "time limit reached before the job ended");
  std::printf("bench_live_latency: median_ms=%.1f p90_ms=%.1f sends=%zu ranks=%zu frames=%lu ended=%d\n",
              median, p90, sends, ranks.size(), static_cast<unsigned long>(frames), ended ? 1 : 0);
  return sends > 0 ? 0 : 1;
}
