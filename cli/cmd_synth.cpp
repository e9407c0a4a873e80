// `mpe synth`: writes a realistic synthetic logfile (nested states, halo messages, collectives,
// Pcontrol markers) of a chosen size, for the viewer's tests and benchmarks.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/log_writer.h"

namespace mpe::cli {

namespace {

using log::Record;
using log::RecordKind;

Record rec(RecordKind k, uint64_t t, uint16_t cat, int32_t a = 0, int32_t b = 0, uint64_t c = 0) {
  return log::make_record(k, t, cat, a, b, 0, c);
}

// MPI categories of the synthetic run (id = position).
enum Cat : uint16_t { kInit, kFinalize, kSend, kIrecv, kWait, kAllreduce, kBarrier, kIprobe, kPcontrol };
const std::vector<std::string> kNames = {"MPI_Init",    "MPI_Finalize", "MPI_Send",
                                         "MPI_Irecv",   "MPI_Wait",     "MPI_Allreduce",
                                         "MPI_Barrier", "MPI_Iprobe",   "MPI_Pcontrol"};
constexpr uint16_t kCompute = log::kUserCategoryBase;    // user state "compute" (start, end = +1)
constexpr uint16_t kSolve = log::kUserCategoryBase + 2;  // user state "solve", nested in compute

}  // namespace

void add_synth_command(CLI::App& app) {
  struct Options {
    uint32_t ranks = 4;
    uint64_t events = 100000;
    uint64_t seed = 1;
    std::string out;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("synth", "Write a synthetic logfile (nested states, messages, collectives)");
  cmd->add_option("--ranks", opts->ranks, "number of ranks")->check(CLI::Range(1u, 65536u));
  cmd->add_option("--events", opts->events, "approximate number of records in total")
      ->check(CLI::Range(1ull, 10000000000ull));
  cmd->add_option("--seed", opts->seed, "random seed");
  cmd->add_option("out", opts->out, "the .mpelog to write")->required();
  set_action(cmd, [opts]() -> Status {
    const uint32_t R = opts->ranks;
    // Per rank and iteration: compute (2 records), solve nested in it (2), an Iprobe nested in
    // solve (1), Irecv (1), Send + its message (2), Wait + its message (2); every 8th iteration an
    // Allreduce (2). About 10.25 records per iteration.
    const uint64_t iters = std::max<uint64_t>(1, opts->events / (R * 41ull / 4));
    const size_t flush = std::clamp<size_t>((64u << 20) / (32u * R), 1024, 65536);
    log::LogWriter w;
    MPE_RETURN_IF_ERROR(w.open(opts->out));
    std::vector<std::vector<Record>> buf(R);
    std::mt19937_64 rng(opts->seed);
    std::uniform_real_distribution<double> u(0, 1);
    Status written;  // the first failed write; the loops stop at it
    auto spill = [&](uint32_t r) {
      std::string chunk;
      log::encode_events(buf[r].data(), static_cast<uint32_t>(buf[r].size()), r, 0, 1, &chunk);
      if (written.ok()) written = w.add_events_chunk(chunk);
      buf[r].clear();
    };
    auto put = [&](uint32_t r, const Record& x) {
      buf[r].push_back(x);
      if (buf[r].size() >= flush) spill(r);
    };
    std::vector<uint64_t> now(R), sendAt(R);
    for (uint32_t r = 0; r < R; ++r) {
      const uint64_t d = 200000 + static_cast<uint64_t>(u(rng) * 50000);
      put(r, rec(RecordKind::kState, 0, kInit, 0, 0, d));
      put(r, rec(RecordKind::kMarker, d + 10, kPcontrol, 1, 1));
      now[r] = d + 100;
    }
    uint64_t total = 0;
    for (uint64_t k = 0; k < iters && written.ok(); ++k) {
      // Compute phases: rank-dependent imbalance plus noise; sends leave at the end.
      for (uint32_t r = 0; r < R; ++r) {
        const uint64_t t = now[r];
        const uint64_t c =
            static_cast<uint64_t>(4000 * (1 + 0.3 * r / std::max(1u, R - 1)) * (0.8 + 0.4 * u(rng)));
        put(r, rec(RecordKind::kUserEvent, t, kCompute));
        put(r, rec(RecordKind::kUserEvent, t + c / 4, kSolve));
        put(r, rec(RecordKind::kState, t + c / 2, kIprobe, 2, 0, 60));
        put(r, rec(RecordKind::kUserEvent, t + 3 * c / 4, kSolve + 1));
        put(r, rec(RecordKind::kUserEvent, t + c, kCompute + 1));
        put(r, rec(RecordKind::kState, t + c + 20, kIrecv, 0, 0, 150));
        sendAt[r] = t + c + 200;
        const uint64_t sd = 300 + static_cast<uint64_t>(u(rng) * 200);
        const uint64_t bytes = 8192u << (k % 3);
        put(r, rec(RecordKind::kState, sendAt[r], kSend, 0, 0, sd));
        Record s = rec(RecordKind::kSend, sendAt[r], kSend, static_cast<int32_t>((r + 1) % R), 1, bytes);
        put(r, s);
        now[r] = sendAt[r] + sd + 30;
      }
      // Waits complete after the left neighbour's message arrived.
      for (uint32_t r = 0; r < R; ++r) {
        const uint32_t left = (r + R - 1) % R;
        const uint64_t arrive = sendAt[left] + 1500 + static_cast<uint64_t>(u(rng) * 500);
        const uint64_t done = std::max(now[r] + 100, arrive);
        put(r, rec(RecordKind::kState, now[r], kWait, 0, 0, done - now[r]));
        put(r, rec(RecordKind::kRecv, done, kWait, static_cast<int32_t>(left), 1, 8192u << (k % 3)));
        now[r] = done + 50;
      }
      if (k % 8 == 7) {
        uint64_t last = 0;
        for (uint32_t r = 0; r < R; ++r) last = std::max(last, now[r]);
        for (uint32_t r = 0; r < R; ++r) {
          const uint64_t end = last + 3000;
          put(r, rec(RecordKind::kState, now[r], kAllreduce, 0, 0, end - now[r]));
          put(r, rec(RecordKind::kCollective, now[r], kAllreduce, -1, 0, 8));
          now[r] = end + 100;
        }
      }
      total += R * 10ull + (k % 8 == 7 ? 2ull * R : 0);
    }
    for (uint32_t r = 0; r < R; ++r) {
      put(r, rec(RecordKind::kMarker, now[r], kPcontrol, 0, 0));
      put(r, rec(RecordKind::kState, now[r] + 100, kFinalize, 0, 0, 50000));
      if (!buf[r].empty()) spill(r);
    }
    MPE_RETURN_IF_ERROR(written);
    log::Definitions d;
    d.world_size = R;
    d.program = "synth";
    d.clock = "monotonic";
    d.ticks_per_second = 1e9;
    d.categories = log::mpi_categories(kNames);
    std::vector<int32_t> world(R);
    for (uint32_t r = 0; r < R; ++r) world[r] = static_cast<int32_t>(r);
    for (uint32_t r = 0; r < R; ++r) {
      log::RankMeta m;
      m.rank = r;
      m.world_size = R;
      m.host = "synth";
      m.threads = {log::ThreadDef{0, 1000 + r}};
      m.comms = {log::CommDef{0, 0, false, world},
                 log::CommDef{1, 1000000u + r, false, {static_cast<int32_t>(r)}}};
      if (r == 0)
        m.user_categories = {
            log::Category{kCompute, log::CategoryKind::kState, kCompute + 1u, 0xC04040, "compute"},
            log::Category{kSolve, log::CategoryKind::kState, kSolve + 1u, 0x7050C0, "solve"}};
      d.ranks.push_back(std::move(m));
    }
    log::merge_user_categories(&d);
    MPE_RETURN_IF_ERROR(w.finish(d));
    std::printf("wrote %s: %u ranks, %llu iterations, about %llu records\n", opts->out.c_str(), R,
                static_cast<unsigned long long>(iters), static_cast<unsigned long long>(total + 4ull * R));
    return Status();
  });
}

}  // namespace mpe::cli
