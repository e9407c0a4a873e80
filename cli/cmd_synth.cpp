// `mpe synth`: writes a realistic synthetic logfile of a chosen size and rank count (up to
// 1,048,576 ranks), for the viewer's tests and benchmarks and the format's scale tests: nested
// states, messages inside a node and between nodes, collectives on several communicators, Pcontrol
// markers, host names, and a few slow ranks whose longer compute the others wait for.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "mpe/log_writer.h"
#include "mpe/records.h"

namespace mpe::cli {

namespace {

using format::Record;

// The record of an MPI call or user state of `cat` at t, `duration` ticks long.
Record state(uint64_t t, uint16_t cat, uint64_t duration, uint32_t depth = 0) {
  return format::StateRecord{t, cat, depth, 0, duration}.to_record();
}
// The record of MPE user event `id` at t.
Record user_event(uint64_t t, uint16_t id) { return format::UserEventRecord{t, id, 0, 0}.to_record(); }

// MPI categories of the synthetic run (id = position).
constexpr uint32_t kMaxSynthRanks = 1u << 20;

enum Cat : uint16_t { kInit, kFinalize, kSend, kIrecv, kWait, kAllreduce, kBarrier, kIprobe, kPcontrol };
const std::vector<std::string> kNames = {"MPI_Init",    "MPI_Finalize", "MPI_Send",
                                         "MPI_Irecv",   "MPI_Wait",     "MPI_Allreduce",
                                         "MPI_Barrier", "MPI_Iprobe",   "MPI_Pcontrol"};
constexpr uint16_t kCompute = format::kUserCategoryBase;    // user state "compute" (start, end = +1)
constexpr uint16_t kSolve = format::kUserCategoryBase + 2;  // user state "solve", nested in compute

// Communicator indices of every synthetic rank: 0 world, 1 self, then these two.
constexpr uint32_t kNodeComm = 2;    // the rank's node (as MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives)
constexpr uint32_t kColumnComm = 3;  // the ranks with the same local rank on every node

// Where the synthetic ranks sit: `per_node` consecutive ranks per host, the last node maybe partial.
struct Shape {
  uint32_t ranks;
  uint32_t per_node;
  uint32_t node(uint32_t r) const { return r / per_node; }
  uint32_t local(uint32_t r) const { return r % per_node; }
  uint32_t nodes() const { return (ranks + per_node - 1) / per_node; }
  bool several_nodes() const { return nodes() > 1; }
  uint32_t node_size(uint32_t r) const { return std::min(per_node, ranks - node(r) * per_node); }
  uint32_t column_size(uint32_t r) const { return (ranks - local(r) + per_node - 1) / per_node; }
  // Ring neighbours on the world (mostly on the same node).
  uint32_t right(uint32_t r) const { return (r + 1) % ranks; }
  uint32_t left(uint32_t r) const { return (r + ranks - 1) % ranks; }
  // The next and previous rank of r's column (on other nodes), wrapping around.
  uint32_t down(uint32_t r) const { return uint64_t{r} + per_node < ranks ? r + per_node : local(r); }
  uint32_t up(uint32_t r) const {
    return node(r) > 0 ? r - per_node : local(r) + (column_size(r) - 1) * per_node;
  }
};

// The slow ranks: a list ("3,17,40"), "none", or "auto" (three ranks spread over the world, from 8
// ranks on; none below).
StatusOr<std::vector<bool>> parse_slow_ranks(const std::string& spec, uint32_t R) {
  std::vector<bool> slow(R, false);
  if (spec == "none") return slow;
  if (spec == "auto") {
    if (R >= 8)
      for (const uint64_t tenths : {2, 5, 8}) slow[static_cast<size_t>(uint64_t{R} * tenths / 10)] = true;
    return slow;
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const unsigned long r = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || r >= R)
      return Status(StatusCode::kInvalidArgument, "--slow-ranks: '" + item + "' is not a rank of 0.." +
                                                      std::to_string(R - 1) +
                                                      " (give a list such as 3,17,40, or none)");
    slow[r] = true;
  }
  return slow;
}

// The run's definitions: a host per node, and the four communicators of every rank, each group
// one shared copy (the format stores each group once however many ranks name it).
format::Definitions definitions(const Shape& shape) {
  const uint32_t R = shape.ranks;
  format::Definitions d;
  d.world_size = R;
  d.program = "synth";
  d.clock = "monotonic";
  d.ticks_per_second = 1e9;
  d.categories = format::mpi_categories(kNames);
  format::MemberInterner groups;
  const format::MemberList world = groups.world(R);
  std::vector<format::MemberList> node_group(shape.nodes()), column_group(std::min(R, shape.per_node));
  for (uint32_t n = 0; n < shape.nodes(); ++n) {
    std::vector<int32_t> v;
    for (uint32_t r = n * shape.per_node; r < std::min(R, (n + 1) * shape.per_node); ++r)
      v.push_back(static_cast<int32_t>(r));
    node_group[n] = std::move(v);
  }
  for (uint32_t l = 0; l < column_group.size(); ++l) {
    std::vector<int32_t> v;
    for (uint32_t r = l; r < R; r += shape.per_node) v.push_back(static_cast<int32_t>(r));
    column_group[l] = std::move(v);
  }
  char host[32];
  d.ranks.resize(R);
  for (uint32_t r = 0; r < R; ++r) {
    format::RankMeta& m = d.ranks[r];
    m.rank = r;
    m.world_size = R;
    m.pid = 1000 + r;
    std::snprintf(host, sizeof host, "node%05u", shape.node(r));
    m.host = host;
    m.threads = {format::ThreadDef{0, 1000 + r}};
    // Global ids as liblog agrees on them: the smallest (world rank << 32 | creation counter).
    const uint64_t node_id = (uint64_t{shape.node(r) * shape.per_node} << 32) | 1;
    const uint64_t column_id = (uint64_t{shape.local(r)} << 32) | 2;
    m.comms = {format::CommDef{0, 0, false, world},
               format::CommDef{1, (1ull << 62) | r, false, {static_cast<int32_t>(r)}},
               format::CommDef{kNodeComm, node_id, false, node_group[shape.node(r)]},
               format::CommDef{kColumnComm, column_id, false, column_group[shape.local(r)]}};
    if (r == 0)
      m.user_categories = {
          format::Category{kCompute, format::CategoryKind::kState, kCompute + 1u, 0xC04040, "compute", {}},
          format::Category{kSolve, format::CategoryKind::kState, kSolve + 1u, 0x7050C0, "solve", {}}};
  }
  format::merge_user_categories(&d);
  return d;
}

// Each rank's records, waiting in memory until `flush` of them make a chunk of that rank.
class RankBuffers {
 public:
  RankBuffers(format::LogWriter& w, uint32_t ranks, size_t flush) : w_(w), buf_(ranks), flush_(flush) {}

  void put(uint32_t r, const Record& x) {
    buf_[r].push_back(x);
    if (buf_[r].size() >= flush_) spill(r);
  }
  // Writes what rank r has left.
  void finish(uint32_t r) {
    if (!buf_[r].empty()) spill(r);
  }
  const Status& written() const { return written_; }
  uint64_t total() const { return total_; }

 private:
  void spill(uint32_t r) {
    std::string chunk;
    format::encode_events(buf_[r].data(), static_cast<uint32_t>(buf_[r].size()), r, 0, 1, &chunk);
    if (written_.ok()) written_ = w_.add_events_chunk(chunk);
    total_ += buf_[r].size();
    buf_[r].clear();
    buf_[r].shrink_to_fit();
  }

  format::LogWriter& w_;
  std::vector<std::vector<Record>> buf_;
  size_t flush_;
  Status written_;  // the first failed write; the loops stop at it
  uint64_t total_ = 0;
};

// The synthetic run, phase by phase: each rank's clock (now), and when its sends of the current
// iteration left (right_at, down_at) for the receivers to wait for.
class SynthRun {
 public:
  SynthRun(const Shape& shape, const std::vector<bool>& slow, double slow_factor, uint64_t seed,
           RankBuffers& out)
      : shape_(shape),
        slow_(slow),
        slow_factor_(slow_factor),
        out_(out),
        rng_(seed),
        now_(shape.ranks),
        right_at_(shape.ranks),
        down_at_(shape.ranks) {}

  // MPI_Init, the two communicators and the Pcontrol that starts logging.
  void start() {
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      const uint64_t d = 200000 + static_cast<uint64_t>(u_(rng_) * 50000);
      out_.put(r, state(0, kInit, d));
      out_.put(r, format::CommCreateRecord{d + 1, 0, kNodeComm, static_cast<int32_t>(shape_.node_size(r))}
                      .to_record());
      out_.put(r, format::CommCreateRecord{d + 2, 0, kColumnComm, static_cast<int32_t>(shape_.column_size(r))}
                      .to_record());
      out_.put(r, format::MarkerRecord{d + 10, kPcontrol, 1, true}.to_record());
      now_[r] = d + 100;
    }
  }
  // Iteration k: compute and send, wait for the neighbours, and now and then a collective.
  void iteration(uint64_t k) {
    const uint64_t bytes = 8192u << (k % 3);
    compute_and_send(bytes);
    wait_for_neighbours(bytes);
    if (k % 8 == 3) node_barriers();
    if (k % 8 == 7) world_allreduce();
  }
  // The Pcontrol that stops logging and MPI_Finalize; writes what every rank has left.
  void end() {
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      out_.put(r, format::MarkerRecord{now_[r], kPcontrol, 0, false}.to_record());
      out_.put(r, state(now_[r] + 100, kFinalize, 50000));
      out_.finish(r);
    }
  }

 private:
  // Compute phases: rank-dependent imbalance plus noise, the slow ranks' several times longer;
  // sends leave at the end.
  void compute_and_send(uint64_t bytes) {
    const uint32_t R = shape_.ranks;
    for (uint32_t r = 0; r < R; ++r) {
      const uint64_t t = now_[r];
      const double factor = slow_[r] ? slow_factor_ : 1.0;
      const uint64_t c =
          static_cast<uint64_t>(4000 * factor * (1 + 0.3 * r / std::max(1u, R - 1)) * (0.8 + 0.4 * u_(rng_)));
      out_.put(r, user_event(t, kCompute));
      out_.put(r, user_event(t + c / 4, kSolve));
      out_.put(r, state(t + c / 2, kIprobe, 60, 2));
      out_.put(r, user_event(t + 3 * c / 4, kSolve + 1));
      out_.put(r, user_event(t + c, kCompute + 1));
      out_.put(r, state(t + c + 20, kIrecv, 150));
      right_at_[r] = t + c + 200;
      const uint64_t sd = 300 + static_cast<uint64_t>(u_(rng_) * 200);
      out_.put(r, state(right_at_[r], kSend, sd));
      out_.put(r, format::SendRecord{right_at_[r], kSend, static_cast<int32_t>(shape_.right(r)), 1, 0, bytes}
                      .to_record());
      now_[r] = right_at_[r] + sd + 30;
      if (shape_.several_nodes()) {  // to the same local rank on the next node, over the column communicator
        down_at_[r] = now_[r];
        out_.put(r, state(down_at_[r], kSend, sd));
        out_.put(r, format::SendRecord{down_at_[r], kSend, static_cast<int32_t>(shape_.node(shape_.down(r))),
                                       2, kColumnComm, bytes}
                        .to_record());
        now_[r] = down_at_[r] + sd + 30;
      }
    }
  }
  // Waits complete once the neighbours' messages arrived (later across nodes).
  void wait_for_neighbours(uint64_t bytes) {
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      const uint32_t left = shape_.left(r);
      const uint64_t arrive = right_at_[left] + 1500 + static_cast<uint64_t>(u_(rng_) * 500);
      uint64_t done = std::max(now_[r] + 100, arrive);
      out_.put(r, state(now_[r], kWait, done - now_[r]));
      out_.put(r, format::RecvRecord{done, kWait, static_cast<int32_t>(left), 1, 0, bytes}.to_record());
      now_[r] = done + 50;
      if (shape_.several_nodes()) {
        const uint32_t up = shape_.up(r);
        const uint64_t from_up = down_at_[up] + 4000 + static_cast<uint64_t>(u_(rng_) * 1000);
        done = std::max(now_[r] + 100, from_up);
        out_.put(r, state(now_[r], kWait, done - now_[r]));
        out_.put(r,
                 format::RecvRecord{done, kWait, static_cast<int32_t>(shape_.node(up)), 2, kColumnComm, bytes}
                     .to_record());
        now_[r] = done + 50;
      }
    }
  }
  // A barrier per node: its ranks leave together.
  void node_barriers() {
    const uint32_t R = shape_.ranks;
    for (uint32_t first = 0; first < R; first += shape_.per_node) {
      const uint32_t last_rank = std::min(R, first + shape_.per_node);
      const uint64_t last = *std::max_element(now_.begin() + first, now_.begin() + last_rank);
      for (uint32_t r = first; r < last_rank; ++r) {
        out_.put(r, state(now_[r], kBarrier, last + 800 - now_[r]));
        out_.put(r, format::CollectiveRecord{now_[r], kBarrier, -1, kNodeComm, 0, 0}.to_record());
        now_[r] = last + 900;
      }
    }
  }
  // An allreduce on the world: everyone leaves after the latest arrives.
  void world_allreduce() {
    const uint64_t last = *std::max_element(now_.begin(), now_.end());
    for (uint32_t r = 0; r < shape_.ranks; ++r) {
      out_.put(r, state(now_[r], kAllreduce, last + 3000 - now_[r]));
      out_.put(r, format::CollectiveRecord{now_[r], kAllreduce, -1, 0, 8, 8}.to_record());
      now_[r] = last + 3100;
    }
  }

  const Shape& shape_;
  const std::vector<bool>& slow_;
  double slow_factor_;
  RankBuffers& out_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> u_{0, 1};
  std::vector<uint64_t> now_, right_at_, down_at_;
};

}  // namespace

void add_synth_command(CLI::App& app) {
  struct Options {
    uint32_t ranks = 4;
    uint64_t events = 100000;
    uint64_t seed = 1;
    uint32_t ranks_per_node = 64;
    std::string slow = "auto";
    double slow_factor = 3.0;
    std::string out;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("synth", "Write a synthetic logfile (nested states, messages, collectives)");
  cmd->add_option("--ranks", opts->ranks, "number of ranks")->check(CLI::Range(1u, kMaxSynthRanks));
  cmd->add_option("--events", opts->events, "approximate number of records in total")
      ->check(CLI::Range(1ull, 10000000000ull));
  cmd->add_option("--seed", opts->seed, "random seed");
  cmd->add_option("--ranks-per-node", opts->ranks_per_node,
                  "ranks per host (host names node00000, node00001...): messages and a communicator per node")
      ->check(CLI::Range(1u, kMaxSynthRanks));
  cmd->add_option("--slow-ranks", opts->slow,
                  "ranks whose compute takes --slow-factor times longer: a list (3,17,40), 'none', or 'auto' "
                  "(three ranks, at 2/10, 5/10 and 8/10 of the world, from 8 ranks on)");
  cmd->add_option("--slow-factor", opts->slow_factor, "how much longer the slow ranks compute")
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("out", opts->out, "the .mpelog to write")->required();
  set_action(cmd, [opts]() -> Status {
    const Shape shape{opts->ranks, std::min(opts->ranks_per_node, opts->ranks)};
    const uint32_t R = shape.ranks;
    StatusOr<std::vector<bool>> slow = parse_slow_ranks(opts->slow, R);
    if (!slow.ok()) return slow.status();
    // Per rank and iteration: compute (2 records), solve nested in it (2), an Iprobe nested in
    // solve (1), Irecv (1), Send + its message (2), Wait + its message (2); with several nodes the
    // same again with the next node (4); every 8th iteration an Allreduce on the world (2), and
    // every 8th a Barrier on the node (2).
    const double per_iteration = 10.5 + (shape.several_nodes() ? 4 : 0);
    const uint64_t iters = static_cast<uint64_t>(static_cast<double>(opts->events) / (R * per_iteration));
    // Each rank's records wait in memory until a chunk is full; about 1 GiB for all ranks together.
    const size_t flush = std::clamp<size_t>((size_t{1} << 30) / (32u * size_t{R}), 256, 65536);
    format::LogWriter w;
    MPE_RETURN_IF_ERROR(w.open(opts->out));
    RankBuffers out(w, R, flush);
    SynthRun run(shape, *slow, opts->slow_factor, opts->seed, out);
    run.start();
    for (uint64_t k = 0; k < iters && out.written().ok(); ++k) run.iteration(k);
    run.end();
    MPE_RETURN_IF_ERROR(out.written());
    MPE_RETURN_IF_ERROR(w.finish(definitions(shape)));
    uint32_t nslow = 0;
    for (bool b : *slow) nslow += b ? 1 : 0;
    std::printf("wrote %s: %u ranks on %u nodes, %u slow, %llu iterations, %llu records\n", opts->out.c_str(),
                R, shape.nodes(), nslow, static_cast<unsigned long long>(iters),
                static_cast<unsigned long long>(out.total()));
    return Status();
  });
}

}  // namespace mpe::cli
