// The definitions of a logfile (ranks, threads, communicators, categories, clock corrections),
// shared by liblog, the merge and the reader. No MPI dependency.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "mpe/byte_codec.h"
#include "mpe/chunk_codec.h"  // most users of the definitions also read or write chunks
#include "mpe/frame.h"
#include "mpe/log_format.h"
#include "mpe/pvar_class.h"
#include "mpe/routine.h"
#include "mpe/status.h"

namespace mpe::format {

enum class CategoryKind : uint8_t { kState = 0, kEvent = 1 };

struct Category {
  uint32_t id = 0;  // MPI function index, or user event id (a user state uses its start id)
  CategoryKind kind = CategoryKind::kState;
  uint32_t end_id = 0;  // user states: the id of the event that ends the state
  uint32_t color = 0;   // 0xRRGGBB
  std::string name;
  // What the MPI routine does (format 6; older logs: from the compiled-in table by name). Consumers
  // classify a category by this, never by its name, which another MPI may spell differently.
  RoutineInfo routine;
};

// The world ranks of a communicator's group in comm-rank order. Immutable and shared: every rank's
// definition of the same group points to one copy, so a run's definitions (and a reader's memory)
// grow linearly with its ranks, not with ranks x communicator size (MPI_COMM_WORLD alone would be
// R^2 x 4 bytes, 1 GiB at 16,384 ranks).
class MemberList {
 public:
  MemberList() = default;
  MemberList(std::vector<int32_t> members)  // NOLINT: implicit, a list of ranks is a member list
      : v_(std::make_shared<const std::vector<int32_t>>(std::move(members))) {}
  MemberList(std::initializer_list<int32_t> members) : MemberList(std::vector<int32_t>(members)) {}
  size_t size() const { return v_ ? v_->size() : 0; }
  bool empty() const { return size() == 0; }
  int32_t operator[](size_t i) const { return (*v_)[i]; }
  const std::vector<int32_t>& vector() const { return v_ ? *v_ : kEmpty; }
  std::vector<int32_t>::const_iterator begin() const { return vector().begin(); }
  std::vector<int32_t>::const_iterator end() const { return vector().end(); }
  // The same shared copy (the interner made them one), not merely equal members.
  bool same_copy(const MemberList& o) const { return v_ == o.v_; }
  bool operator==(const MemberList& o) const { return v_ == o.v_ || vector() == o.vector(); }
  bool operator==(const std::vector<int32_t>& o) const { return vector() == o; }

 private:
  static inline const std::vector<int32_t> kEmpty{};
  std::shared_ptr<const std::vector<int32_t>> v_;
};

// Makes equal member lists one shared copy: the readers and the merge keep one copy of each
// group however many ranks define it.
class MemberInterner {
 public:
  MemberList intern(std::vector<int32_t> members);
  // The world's group 0..world_size-1, shared.
  MemberList world(uint32_t world_size);

 private:
  std::unordered_multimap<uint64_t, MemberList> by_hash_;
};

struct CommDef {
  uint32_t index = 0;      // per-rank index, as in Record::comm
  uint64_t global_id = 0;  // the same on every member
  bool inter = false;
  MemberList members;  // world rank of each comm rank (local group; remote group of an intercommunicator)
};

struct ThreadDef {
  uint32_t index = 0;
  int64_t tid = 0;
};

// Clock correction of one rank against the reference (rank 0): reference ticks at local ticks t
// are t + offset(t), offset linear between the two measurements (offset only if one is valid).
struct ClockSync {
  uint8_t valid = 0;  // bit 0: init measurement, bit 1: finalize measurement
  uint64_t t_init = 0;
  int64_t offset_init = 0;
  uint64_t rtt_init = 0;
  uint64_t t_final = 0;
  int64_t offset_final = 0;
  uint64_t rtt_final = 0;
  // Returns reference ticks for local ticks t. Inline: every record's time goes through it.
  double correct(uint64_t t) const {
    const bool a = valid & 1, b = valid & 2;
    if (a && b && t_final > t_init) {
      const double slope =
          static_cast<double>(offset_final - offset_init) / static_cast<double>(t_final - t_init);
      return static_cast<double>(t) + static_cast<double>(offset_init) +
             slope * (static_cast<double>(t) - static_cast<double>(t_init));
    }
    if (a) return static_cast<double>(t) + static_cast<double>(offset_init);
    if (b) return static_cast<double>(t) + static_cast<double>(offset_final);
    return static_cast<double>(t);
  }
};

// std::llround, inlined: halves away from zero, the same result for every double. llround itself
// is a libm call (it may set errno, so the compiler keeps the call), and it took 3 % of opening a
// log, once per record time. Beyond int64's range (and NaN): llround's own result.
inline int64_t round_to_int64(double x) {
  if (!(x > -9.2e18 && x < 9.2e18)) return std::llround(x);
  int64_t i = static_cast<int64_t>(x);                 // toward zero
  const double fraction = x - static_cast<double>(i);  // exact: 0 once |x| >= 2^52 (x is whole)
  if (fraction >= 0.5)
    ++i;
  else if (fraction <= -0.5)
    --i;
  return i;
}

// A call site of one rank (v3): the id its state and user-event records carry (Record::b), and
// its frames, innermost first, symbolized on that rank. Ids are per rank; the reader unifies the
// sites of all ranks by callsite_key() (mpe/frame.h).
struct CallSiteDef {
  uint32_t id = 0;
  std::vector<Frame> frames;
};

// An MPI_T performance variable liblog sampled on a rank (v4, MPE_LOG_PVARS): the id its kCounter
// records carry (Record::cat), and what the variable is. Ids are per rank; the reader unifies
// the counters of all ranks by name (LogFile::counters()).
struct CounterDef {
  uint32_t id = 0;
  std::string name;         // the MPI_T name: "unexpected_recvq_length"
  std::string description;  // the MPI library's description
  std::string datatype;     // "MPI_UNSIGNED"
  PvarClass cls = PvarClass::kGeneric;
  PvarSemantics semantics = PvarSemantics::kValue;  // what a record's value is: a delta or a value
  PvarValueKind kind = PvarValueKind::kUnsigned;    // how the value's 64 bits are read
  bool per_comm = false;                            // bound to communicators: one series per communicator
};

// Calls of one category a filter left out on a rank (v7): their states are not in the log.
struct LeftOut {
  uint32_t category = 0;
  uint64_t calls = 0;
};

struct RankMeta {
  uint32_t rank = 0;
  uint32_t world_size = 0;
  int64_t pid = 0;
  std::string host;
  double ticks_per_second = 1e9;
  bool logging_at_start = true;
  ClockSync sync;
  std::vector<ThreadDef> threads;
  std::vector<CommDef> comms;
  std::vector<Category> user_categories;  // MPE API descriptions made on this rank
  std::vector<CallSiteDef> callsites;     // v3
  std::vector<CounterDef> counters;       // v4
  // v7: the filter this rank logged under (mpe/log_filter.h: its rules, one a line; empty: none),
  // and the calls it left out, by category.
  std::string filter;
  std::vector<LeftOut> left_out;
};

struct Definitions {
  uint32_t world_size = 0;
  std::string program;
  std::string clock;                 // "tsc" or "monotonic"
  double ticks_per_second = 1e9;     // of the reference rank
  bool recovered = false;            // built by `mpe merge --recover`
  std::vector<Category> categories;  // MPI functions and user categories
  std::vector<RankMeta> ranks;       // indexed by rank
  // How the definitions were stored, as read (`mpe print --definitions`, the scale tests): groups
  // and members held in the file (v5: the group table; before: every rank's inline lists), and
  // the definitions' chunks and bytes (the reader fills those).
  struct Storage {
    uint64_t groups = 0;
    uint64_t members = 0;
    uint32_t chunks = 0;
    uint64_t disk_bytes = 0;
    uint64_t decoded_bytes = 0;
  } storage;
};

// One rank's definitions on their own (spill files, liblog's gather to rank 0): its groups'
// members inline, as runs of evenly spaced ranks where that is shorter (MPI_COMM_WORLD and its
// duplicates are one run), so that a rank's meta stays small at any world size.
std::string serialize_rank_meta(const RankMeta& m);
// `version` is the file's (or spill file's) format version: fields added later are absent before.
// `interner`, when given, makes groups equal to those of earlier calls one shared copy (rank 0 of a
// merge parses every rank's meta).
Status parse_rank_meta(const char* p, size_t n, RankMeta* out, uint16_t version = kCurrentVersion,
                       MemberInterner* interner = nullptr);
// The whole run's definitions (v5): every distinct group once, in a table the ranks' communicators
// refer to; MPI_COMM_WORLD's and each rank's MPI_COMM_SELF's groups are implied.
std::string serialize_definitions(const Definitions& d);
Status parse_definitions(const char* p, size_t n, Definitions* out, uint16_t version = kCurrentVersion);

}  // namespace mpe::format
