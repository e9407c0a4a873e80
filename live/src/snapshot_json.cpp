// The JSON snapshot of a running job that `mpe top --once --json` prints (docs/live.md).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "mpe/live_view.h"
#include "mpe/spread.h"

namespace mpe::live_stream {

namespace {

using nlohmann::json;

json row_json(const NowRow& r) {
  json j = {{"rank", r.rank},         {"thread", r.thread},   {"in_mpi", r.in_mpi}, {"routine", r.routine},
            {"callsite", r.callsite}, {"seconds", r.seconds}, {"stuck", r.stuck}};
  if (!r.host.empty()) j["host"] = r.host;
  if (!r.comm.empty()) j["comm"] = r.comm;
  if (r.peer >= 0 || r.peer == peer::kAnySource) {
    j["peer"] = r.peer == peer::kAnySource ? json("MPI_ANY_SOURCE") : json(r.peer);
    j["tag"] = r.tag;
  }
  if (r.root >= 0) j["root"] = r.root;
  j["text"] = call_text(r);
  return j;
}

json pairs_json(const std::vector<PairTraffic>& pairs) {
  json out = json::array();
  for (const PairTraffic& p : pairs)
    out.push_back({{"from", p.from}, {"to", p.to}, {"count", p.count}, {"bytes", p.bytes}});
  return out;
}

}  // namespace

std::string snapshot_json(const JobView& view, double stuck_seconds) {
  json j;
  j["world_size"] = view.world_size();
  j["ranks_seen"] = view.ranks_seen();
  j["ranks_finalized"] = view.ranks_finalized();
  j["ended"] = view.ended();
  if (view.ended()) {
    j["exit_status"] = view.job_end().exit_status;
    j["end_message_lost"] = view.job_end().end_message_lost();
    j["mpelog"] = view.job_end().mpelog;
  }
  j["now_ns"] = view.now_ns();
  j["stuck_seconds"] = stuck_seconds;

  const std::vector<NowRow> rows = view.now_table(stuck_seconds);
  json now = json::array();
  for (const NowRow& r : rows) now.push_back(row_json(r));
  j["now"] = now;
  // Current calls grouped by (routine, call site): where the ranks are.
  std::map<std::pair<std::string, std::string>, std::vector<int32_t>> groups;
  for (const NowRow& r : rows) groups[{r.routine, r.callsite}].push_back(r.rank);
  json grouped = json::array();
  for (auto& [key, ranks] : groups) {
    std::sort(ranks.begin(), ranks.end());
    grouped.push_back({{"routine", key.first.empty() ? "(application)" : key.first},
                       {"callsite", key.second},
                       {"count", ranks.size()},
                       {"ranks", ranks}});
  }
  j["current_calls"] = grouped;

  j["traffic"] = {{"recent_pairs", pairs_json(view.traffic_pairs(false))},
                  {"pairs", pairs_json(view.traffic_pairs(true))},
                  {"sends", view.total_sends()},
                  {"send_bytes", view.total_send_bytes()},
                  {"recvs", view.total_recvs()},
                  {"collectives", view.total_collectives()},
                  {"received_pairs", pairs_json(view.received_pairs())},
                  {"arrows_kept", view.arrows().size()},
                  {"arrows_matched", std::count_if(view.arrows().begin(), view.arrows().end(),
                                                   [](const Arrow& a) { return a.recv_ns != 0; })}};

  const auto share = view.mpi_share();
  json profile = {{"ranks", share.size()}};
  if (!share.empty()) {
    Spread spread;  // the one min/mean/max (mpe/spread.h)
    std::vector<std::pair<double, uint32_t>> worst;
    for (const auto& [rank, s] : share) {
      spread.add(s, rank);
      worst.emplace_back(s, rank);
    }
    std::sort(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    json w = json::array();
    for (size_t i = 0; i < worst.size() && i < 5; ++i)
      w.push_back({{"rank", worst[i].second}, {"mpi_share", worst[i].first}});
    profile.update({{"mpi_share_min", spread.min},
                    {"mpi_share_mean", spread.mean()},
                    {"mpi_share_max", spread.max},
                    {"worst", w}});
  }
  j["profile"] = profile;

  j["drops"] = {{"frames_received", view.frames_received()},
                {"frames_dropped_by_ranks", view.frames_dropped_by_ranks()},
                {"frames_lost_in_transit", view.frames_lost_in_transit()},
                {"events_dropped", view.events_dropped()},
                {"aggregated_intervals", view.aggregated_intervals()},
                {"rejected_messages", view.rejected()}};

  const Diagnosis d = view.diagnose(stuck_seconds);
  json deadlocks = json::array();
  for (const Deadlock& dl : d.deadlocks) {
    json ranks = json::array(), calls = json::array();
    for (const NowRow& r : dl.cycle) {
      ranks.push_back(r.rank);
      calls.push_back(row_json(r));
    }
    deadlocks.push_back({{"ranks", ranks}, {"calls", calls}});
  }
  json stuck = json::array();
  for (const Stuck& s : d.stuck) stuck.push_back({{"holder", row_json(s.holder)}, {"waiting", s.waiting}});
  j["diagnosis"] = {{"deadlocks", deadlocks}, {"stuck", stuck}};
  return j.dump();
}

}  // namespace mpe::live_stream
