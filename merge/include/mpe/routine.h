// What an MPI routine does, as the offline tools need it: its family (send, receive, collective,
// one-sided...), whether it blocks, a collective's shape, a send's mode, an RMA operation's kind.
// The one source is core/mpi_calls.tsv (its %class lines and class variants), compiled in by
// core/gen/routines.py. liblog writes each MPI category's RoutineInfo into the logfile's
// definitions (format 6), so the analyses, the OTF2 writer and the colours classify a routine by
// what the log says it is, never by its name; older logs get theirs from the compiled-in table.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mpe::format {

// The numbers are stored in logfiles (docs/FORMAT.md): append, never renumber.
enum class RoutineFamily : uint8_t {
  kNone = 0,         // no MPI routine (a user state), or one the table does not know
  kLifeCycle = 1,    // MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort
  kPcontrol = 2,     // MPI_Pcontrol
  kSend = 3,         // point-to-point send (blocking, nonblocking or persistent)
  kRecv = 4,         // point-to-point receive, matched receive
  kSendrecv = 5,     // MPI_Sendrecv and its variants
  kProbe = 6,        // probe, matched probe
  kCompletion = 7,   // wait and test, one, all, any or some
  kRequest = 8,      // start, cancel, free, partitioned ready/arrived
  kCollective = 9,   // see CollectiveShape
  kRmaOp = 10,       // one-sided operation (put, get, accumulate...; see RmaKind)
  kRmaSync = 11,     // window synchronisation (fence, lock, flush, post/start/complete/wait)
  kWinCreate = 12,   // window creation
  kCommCreate = 13,  // communicator creation
  kCommFree = 14,    // communicator release
  kFileIo = 15,      // MPI-IO
};
inline constexpr uint8_t kRoutineFamilyCount = 16;

enum class RoutineMode : uint8_t { kBlocking = 0, kNonblocking = 1, kPersistentInit = 2 };

// Who sends to whom in a collective.
enum class CollectiveShape : uint8_t {
  kNone = 0,      // no collective
  kBarrier = 1,   // nobody leaves before everybody came
  kOneToAll = 2,  // rooted: the root's data reaches every rank (bcast, scatter)
  kAllToOne = 3,  // rooted: every rank's data reaches the root (reduce, gather)
  kAllToAll = 4,  // every rank's data reaches every rank (allreduce, allgather, alltoall...)
  kOther = 5,     // prefix (scan, exscan) or neighbourhood collectives
};

// A send's mode: when it may complete.
enum class SendMode : uint8_t { kStandard = 0, kSynchronous = 1, kBuffered = 2, kReady = 3 };

// What an RMA operation does at its target.
enum class RmaKind : uint8_t { kPut, kGet, kAccumulate, kGetAccumulate, kFetchAndOp, kCompareAndSwap };

struct RoutineInfo {
  RoutineFamily family = RoutineFamily::kNone;
  RoutineMode mode = RoutineMode::kBlocking;
  CollectiveShape shape = CollectiveShape::kNone;  // kCollective
  SendMode send_mode = SendMode::kStandard;        // kSend
  RmaKind rma = RmaKind::kPut;                     // kRmaOp
  // The table's class, which names a collective's operation ("allreduce" for MPI_Allreduce,
  // MPI_Iallreduce_c...) and a completion's kind ("waitall"); "" when unknown.
  std::string cls;

  bool known() const { return family != RoutineFamily::kNone; }
  bool blocking() const { return mode == RoutineMode::kBlocking; }
  bool nonblocking() const { return mode == RoutineMode::kNonblocking; }
  bool rooted() const { return shape == CollectiveShape::kOneToAll || shape == CollectiveShape::kAllToOne; }
  // The table's life-cycle classes: "init" starts MPI (MPI_Init, MPI_Init_thread), "finalize" ends it.
  bool starts_mpi() const { return family == RoutineFamily::kLifeCycle && cls == "init"; }
  bool ends_mpi() const { return family == RoutineFamily::kLifeCycle && cls == "finalize"; }
  bool operator==(const RoutineInfo&) const = default;
};

// The compiled-in table's knowledge of an MPI routine, by name ("MPI_Ssend"; a large-count twin
// "MPI_Ssend_c" as its base). Unknown names (user states, routines the table lacks) give kNone.
// For what has only a name: logs older than format 6, foreign OTF2 archives, the live view.
RoutineInfo routine_by_name(std::string_view name);

class LogFile;
// The routine of a log's category `cat`, as its definitions give it; kNone for a user category or
// one the definitions lack.
const RoutineInfo& routine_of(const LogFile& file, uint32_t cat);

// Default colour (0xRRGGBB) of an MPI routine: point-to-point blue/green, collectives orange,
// waits red, one-sided orchid...
uint32_t default_mpi_color(const RoutineInfo& routine);
// The same, for a name only: mapped through the table (routine_by_name).
uint32_t default_mpi_color(std::string_view name);

}  // namespace mpe::format
