// `mpe top`: a terminal view of a running job (refreshes in place, like top), or one snapshot
// (--once, --json for scripts), read from the job's live relay through its `.live` file.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "mpe/live_transport.h"
#include "mpe/live_view.h"

namespace mpe::cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile sig_atomic_t g_interrupted = 0;

// "0-3,5,7-9"
std::string rank_list(const json& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1].get<int>() == ranks[j].get<int>() + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ranks[i].get<int>()) +
           (j > i ? "-" + std::to_string(ranks[j].get<int>()) : "");
    i = j + 1;
  }
  return out;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", share * 100);
  return buf;
}

// One call as a phrase: "MPI_Recv from 1 (tag 0) at ring.c:20, 3.2 s".
// The text of a row's call: the snapshot carries it (live_stream::call_text, as upshot shows it).
std::string call_text(const json& r) { return r.value("text", std::string("?")); }

// The text view, from the same snapshot --json prints (so the two never disagree).
std::string render(const json& j) {
  std::string out;
  char line[512];
  std::string state;
  if (j["ended"].get<bool>())
    state = j.value("end_message_lost", false)
                ? "; the job ended (its end message was lost on the way)"
                : "; the job ended (exit status " + std::to_string(j.value("exit_status", 0)) + ")";
  std::snprintf(line, sizeof line, "mpe top: %d ranks, %d seen, %d finalized%s\n", j["world_size"].get<int>(),
                j["ranks_seen"].get<int>(), j["ranks_finalized"].get<int>(), state.c_str());
  out += line;
  const json& p = j["profile"];
  if (p.contains("mpi_share_mean")) {
    out += "MPI share per rank: min " + percent(p["mpi_share_min"]) + ", mean " +
           percent(p["mpi_share_mean"]) + ", max " + percent(p["mpi_share_max"]) + "; most in MPI:";
    for (const json& w : p["worst"])
      out += " " + std::to_string(w["rank"].get<int>()) + " (" + percent(w["mpi_share"]) + ")";
    out += "\n";
  }
  out += "\nCurrent calls\n";
  std::snprintf(line, sizeof line, "  %6s  %-24s %-40s %s\n", "RANKS", "ROUTINE", "CALL SITE", "WHICH");
  out += line;
  for (const json& g : j["current_calls"]) {
    std::snprintf(line, sizeof line, "  %6d  %-24s %-40s %s\n", g["count"].get<int>(),
                  g["routine"].get<std::string>().c_str(), g["callsite"].get<std::string>().c_str(),
                  rank_list(g["ranks"]).c_str());
    out += line;
  }
  const json& t = j["traffic"];
  out += "\nTop traffic (last seconds)\n";
  int shown = 0;
  for (const json& pr : t["recent_pairs"]) {
    if (++shown > 10) break;
    std::snprintf(line, sizeof line, "  %5d -> %-5d %10llu messages %14llu bytes\n", pr["from"].get<int>(),
                  pr["to"].get<int>(), pr["count"].get<unsigned long long>(),
                  pr["bytes"].get<unsigned long long>());
    out += line;
  }
  if (shown == 0) out += "  (none)\n";
  const json& d = j["drops"];
  std::snprintf(
      line, sizeof line,
      "\nLost: %llu frames at the ranks, %llu in transit, %llu events; %llu intervals aggregated over the "
      "budget; %llu messages rejected\n",
      d["frames_dropped_by_ranks"].get<unsigned long long>(),
      d["frames_lost_in_transit"].get<unsigned long long>(), d["events_dropped"].get<unsigned long long>(),
      d["aggregated_intervals"].get<unsigned long long>(), d["rejected_messages"].get<unsigned long long>());
  out += line;
  const json& diag = j["diagnosis"];
  for (const json& dl : diag["deadlocks"]) {
    std::string cycle;
    for (const json& r : dl["ranks"]) cycle += std::to_string(r.get<int>()) + " -> ";
    out += "\nDEADLOCK: ranks " + cycle + std::to_string(dl["ranks"][0].get<int>()) + "\n";
    for (const json& c : dl["calls"])
      out += "  rank " + std::to_string(c["rank"].get<int>()) + ": " + call_text(c) + "\n";
  }
  for (const json& s : diag["stuck"])
    out += "\nSTUCK: rank " + std::to_string(s["holder"]["rank"].get<int>()) + " (" + call_text(s["holder"]) +
           ") holds ranks " + rank_list(s["waiting"]) + "\n";
  return out;
}

}  // namespace

void add_top_command(CLI::App& app) {
  struct Options {
    std::string live_file;
    bool once = false, json_out = false;
    double wait = 10, stuck = 1.0, refresh = 1.0;
    int queue = 1000;
  };
  auto o = std::make_shared<Options>();
  CLI::App* top = app.add_subcommand("top", "Watch a running job through its live relay (mpe run --live)");
  top->add_option("live_file", o->live_file, "the job's <prefix>.live file")->required();
  top->add_flag("--once", o->once, "print one snapshot and exit");
  top->add_flag("--json", o->json_out, "the snapshot as JSON (schema in docs/live.md)");
  top->add_option("--wait", o->wait,
                  "seconds to wait for the job's ranks (and for the .live file) before giving up")
      ->check(CLI::PositiveNumber);
  top->add_option("--stuck", o->stuck, "seconds in a blocking call after which a rank counts as stuck")
      ->check(CLI::NonNegativeNumber);
  top->add_option("--refresh", o->refresh, "seconds between screen refreshes")->check(CLI::PositiveNumber);
  top->add_option(
         "--queue", o->queue,
         "frames this viewer may fall behind by; beyond, the relay drops them and they are counted as lost")
      ->check(CLI::Range(1, 1000000));
  set_action(top, [o]() -> Status {
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    while (!std::filesystem::exists(o->live_file) && elapsed() < o->wait)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto file = live_stream::read_live_file(o->live_file);
    if (!file.ok()) return file.status();
    live_stream::Subscriber sub;
    MPE_RETURN_IF_ERROR(sub.connect(*file, o->queue));
    signal(SIGINT, [](int) { g_interrupted = 1; });
    live_stream::JobView view;
    auto last_message = Clock::now();
    auto take = [&](int timeout_ms) {
      view.end_if_abandoned(std::filesystem::exists(o->live_file),
                            std::chrono::duration<double>(Clock::now() - last_message).count());
      for (auto msg = sub.receive(timeout_ms); msg; msg = sub.receive(0)) {
        last_message = Clock::now();
        view.ingest(msg->data(), msg->size());
      }
    };
    if (o->once) {
      // Every rank seen twice over (a full interval after the first frame), the job ended, or
      // the wait is over.
      std::map<uint32_t, uint64_t> first_seq;
      for (;;) {
        take(50);
        for (const auto& [rank, f] : view.latest()) first_seq.emplace(rank, f.seq);
        bool all = view.world_size() > 0 && view.ranks_seen() == view.world_size();
        for (const auto& [rank, f] : view.latest()) all = all && f.seq > first_seq[rank];
        if (all || view.ended() || g_interrupted || elapsed() > o->wait) break;
      }
      if (view.ranks_seen() == 0 && !view.ended())
        return Status(StatusCode::kIoError, "no frame from the job at " + file->viewer_endpoint + " within " +
                                                std::to_string(static_cast<int>(o->wait)) +
                                                " s: has it started, or ended?");
      const std::string snap = live_stream::snapshot_json(view, o->stuck);
      std::fputs(o->json_out ? (snap + "\n").c_str() : render(json::parse(snap)).c_str(), stdout);
      return Status();
    }
    auto last_draw = Clock::now() - std::chrono::hours(1);
    while (!g_interrupted) {
      take(100);
      if (std::chrono::duration<double>(Clock::now() - last_draw).count() >= o->refresh || view.ended()) {
        const std::string snap = live_stream::snapshot_json(view, o->stuck);
        if (o->json_out)
          std::printf("%s\n", snap.c_str());
        else
          std::printf("\033[H\033[2J%s", render(json::parse(snap)).c_str());
        std::fflush(stdout);
        last_draw = Clock::now();
      }
      if (view.ended()) break;
    }
    return Status();
  });
}

}  // namespace mpe::cli
