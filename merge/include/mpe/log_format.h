// The on-disk layout of the .mpelog logfile and of liblog's per-rank spill files: the one header
// both the writer (liblog, merge) and the reader include. Specified in docs/FORMAT.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mpe::format {

// Versions: a reader accepts kMinSupportedVersion..kCurrentVersion of the same major.
// 2: constant-plane elision (kChunkPlanes); 3: call sites; 4: counters, one-sided communication;
// 5: definitions linear in the ranks (groups stored once; definitions in several chunks);
// 6: each category carries its routine's class (mpe/routine.h); 7: the filter a rank logged under;
// 8: sparse byte planes (kChunkSparse)
inline constexpr uint16_t kCurrentVersion = 8;
inline constexpr uint16_t kFirstCallsiteVersion = 3;
inline constexpr uint16_t kFirstCounterVersion = 4;     // kCounter records, RankMeta::counters
inline constexpr uint16_t kFirstRmaVersion = 4;         // kRmaOp, kRmaComplete, kWinCreate
inline constexpr uint16_t kFirstGroupTableVersion = 5;  // groups once per run, runs of ranks
inline constexpr uint16_t kFirstRoutineVersion = 6;     // Category::routine stored
inline constexpr uint16_t kFirstFilterVersion = 7;      // RankMeta::filter, RankMeta::left_out
inline constexpr uint16_t kMinSupportedVersion = 1;

inline constexpr char kFileMagic[8] = {'M', 'P', 'E', 'L', 'O', 'G', '\r', '\n'};
inline constexpr char kFooterMagic[8] = {'M', 'P', 'E', 'E', 'N', 'D', '\r', '\n'};
inline constexpr char kPartMagic[8] = {'M', 'P', 'E', 'P', 'A', 'R', 'T', '\n'};
inline constexpr uint32_t kChunkMagic = 0x4B4E4843;  // "CHNK"

// What a record says. Fixed-size records; fields a..c mean different things per kind.
enum class RecordKind : uint8_t {
  kState = 1,       // an MPI call or user state: time=start, c=duration, cat, a=depth, b=call site (v3)
  kSend = 2,        // a message left: time=send call entry, a=dest (rank in comm), b=tag, comm, c=bytes
  kRecv = 3,        // a message arrived: time=completion, a=source (rank in comm), b=tag, comm, c=bytes
  kCollective = 4,  // time=call entry, cat=function, a=root (rank in comm, -1 none), comm, c=bytes sent,
                    // b=bytes received (v2; saturates at 2^31-1)
  kMarker = 5,      // MPI_Pcontrol: time, a=level, b=1 when logging was on after the call
  kUserEvent = 6,   // MPE_Log_event: time, cat=event id, c=up to 8 bytes of data, b=call site (v3)
  kCommCreate = 7,  // time, comm=new per-rank comm index, a=size (recorded even when paused)
  kSendCancel = 8,  // a send recorded earlier was cancelled: same a, b, comm as its kSend
  // Nonblocking requests (v2), so that OTF2's MpiIsend/MpiIsendComplete/MpiIrecvRequest/MpiIrecv
  // can be written: a = the request's serial on its thread (1, 2, ...), b = RequestWhat.
  kRequestPost = 9,   // posted: for a send, the kSend just before it (same time) is its message
  kRequestDone = 10,  // completed: for a receive, the kRecv just after it (same time) is its message
  // Reserved for format version 4 (fields documented where they are implemented, and in
  // docs/FORMAT.md): MPI_T performance-variable samples (liblog's MPE_LOG_PVARS) and one-sided
  // communication (RMA operations, their completions, window creation).
  // An MPI_T performance-variable sample (v4, liblog's MPE_LOG_PVARS), written only when the value
  // changed: time=entry of the call it was read at, cat=counter id (RankMeta::counters), comm=the
  // communicator whose handle was read (kUnknownComm for a process-wide variable), a=the element
  // (peer: rank in comm) holding the largest value, -1 for a one-element variable, b=for a
  // watermark the number of changes so far on this handle, else 0, c=the value in the counter's
  // PvarValueKind (a double's bits): for counters, timers and aggregates the delta since the
  // previous sample of the handle, for the other classes the value (summed over the elements).
  kCounter = 11,
  // One-sided communication (v4). A window has a per-rank index, given at its creation; the
  // window's group is its communicator's, so a target rank converts to a world rank through it.
  kRmaOp = 12,        // an RMA operation: time=call entry, cat=function (MPI_Put, MPI_Rget, ...),
                      // a=target (rank in the window's group), comm=window index (not a communicator),
                      // c=bytes carried to the target, b=bytes brought back (saturates at 2^31-1)
  kRmaComplete = 13,  // a synchronisation completed the rank's pending operations on a window:
                      // time=call exit, cat=function (fence, unlock, flush, complete...), a=target
                      // (rank in the window's group) or -1 for every target, comm=window index
  kWinCreate = 14,    // a window was created (recorded even when paused): time=call exit, cat=function,
                      // a=window index, b=ordinal of the window among this rank's windows on that
                      // communicator (with the communicator's global id: the window's run-wide
                      // identity), comm=communicator index, c=this rank's window size in bytes
};

enum class RequestWhat : int32_t {
  kSend = 0,
  kRecv = 1,
  kCancelled = 2,  // kRequestDone only: the request completed as cancelled (a receive has no kRecv)
  // A nonblocking collective (MPI_Ibarrier, MPI_Iallreduce, ...): its kRequestPost follows its
  // kCollective record (same time), and its kRequestDone, in the Wait/Test that completed it,
  // says where the waiting for it happened (OTF2's NonBlockingCollectiveRequest/Complete).
  kCollective = 3,
};

// One event, 32 bytes in memory. On disk, records are delta-encoded on `time` (two's
// complement, so nested states' negative deltas work) and byte-shuffled (byte j of every
// record together, j = 0..31) before zstd.
struct Record {
  uint64_t time;  // clock ticks of the rank (uncorrected)
  uint8_t kind;   // RecordKind
  uint8_t flags;
  uint16_t cat;  // category: MPI function index or user state/event id
  int32_t a;
  int32_t b;
  uint32_t comm;  // per-rank communicator index (0 world, 1 self, 2.. as created)
  uint64_t c;
};
static_assert(sizeof(Record) == 32, "Record must stay 32 bytes");

// Builds a record: the one way the tool, the synthesizer and the tests make them.
constexpr Record make_record(RecordKind kind, uint64_t time, uint16_t cat, int32_t a = 0, int32_t b = 0,
                             uint32_t comm = 0, uint64_t c = 0) {
  return Record{time, static_cast<uint8_t>(kind), 0, cat, a, b, comm, c};
}

// Categories: 0..kUserCategoryBase-1 are MPI functions (names in the definitions), above are
// user states and events defined through the MPE API.
inline constexpr uint16_t kUserCategoryBase = 0x8000;
inline constexpr uint32_t kUnknownComm = 0xFFFFFFFFu;

enum class ChunkKind : uint16_t {
  kEvents = 1,       // records of one thread of one rank
  kRankMeta = 2,     // one rank's definitions (serialized RankMeta); the last one in a file wins
  kDefinitions = 3,  // the merged definitions of the whole run
};

inline constexpr uint16_t kChunkZstd = 1;      // payload is zstd; else stored raw
inline constexpr uint16_t kChunkShuffled = 2;  // records delta-encoded and byte-shuffled
// Events chunks (v2): the byte planes that are constant are stored as one byte each ahead of the
// (compressed) varying planes; see docs/FORMAT.md.
inline constexpr uint16_t kChunkPlanes = 4;
// Events chunks (v8), with kChunkPlanes: the plane header also names sparse planes (all bytes one
// value but a few: the high bytes of times, which a preemption or the chunk's first record make
// differ once or twice), stored as that value, and their exceptions after the varying planes.
inline constexpr uint16_t kChunkSparse = 8;
inline constexpr uint16_t kChunkKnownFlags = kChunkZstd | kChunkShuffled | kChunkPlanes | kChunkSparse;
inline constexpr uint32_t kRecordPlanes = 32;  // byte planes of a shuffled record, one per byte
static_assert(kRecordPlanes == sizeof(Record));

// Top categories by time in a chunk, for previews at coarse zoom without decoding the chunk.
inline constexpr int kSummarySlots = 4;
struct CategoryTime {
  uint32_t cat;    // category, or 0xFFFFFFFF for an unused slot
  uint32_t count;  // depth-0 states of that category in the chunk
  uint64_t ticks;  // their summed duration
};
static_assert(sizeof(CategoryTime) == 16);

// Precedes every chunk, in spill files and in the logfile alike (chunks are copied verbatim).
struct ChunkHeader {
  uint32_t magic;  // kChunkMagic
  uint16_t kind;   // ChunkKind
  uint16_t flags;  // kChunkZstd | kChunkShuffled
  uint32_t rank;
  uint32_t thread;
  uint32_t nrecords;      // records in the chunk (events chunks)
  uint32_t raw_size;      // payload bytes once decompressed
  uint32_t payload_size;  // payload bytes on disk, following this header
  uint32_t reserved;
  uint64_t t_first;       // smallest record time, ticks
  uint64_t t_last;        // largest record end time (time + duration for states), ticks
  uint64_t payload_hash;  // hash64 of the on-disk payload
  CategoryTime summary[kSummarySlots];
  uint64_t header_hash;  // hash64 of all bytes of this header before this field
};
static_assert(sizeof(ChunkHeader) == 128, "ChunkHeader must stay 128 bytes");

// The first bytes of a logfile.
struct FileHeader {
  char magic[8];  // kFileMagic
  uint16_t version;
  uint16_t header_size;  // sizeof(FileHeader)
  uint32_t reserved;
  uint64_t reserved2[5];
  uint64_t header_hash;  // hash64 of the bytes before this field
};
static_assert(sizeof(FileHeader) == 64);

// One entry per events chunk, in the index near the end of the logfile.
struct IndexEntry {
  uint64_t offset;  // file offset of the chunk's ChunkHeader
  uint32_t rank;
  uint32_t thread;
  uint64_t t_first;  // as in the chunk header, ticks of that rank
  uint64_t t_last;
  uint32_t nrecords;
  uint32_t size;  // header + payload bytes
  CategoryTime summary[kSummarySlots];
};
static_assert(sizeof(IndexEntry) == 104);

// The last bytes of a logfile: where the definitions and the index are.
struct Footer {
  uint64_t definitions_offset;  // a ChunkHeader of kind kDefinitions
  uint64_t definitions_size;    // header + payload bytes
  uint64_t index_offset;        // IndexEntry[index_count]
  uint64_t index_count;
  uint64_t file_size;    // total bytes including this footer
  uint64_t index_hash;   // hash64 of the index bytes
  uint64_t footer_hash;  // hash64 of the bytes before this field, magic excluded
  char magic[8];         // kFooterMagic
};
static_assert(sizeof(Footer) == 64);

// The first bytes of a per-rank spill file; chunks follow back to back.
struct PartHeader {
  char magic[8];  // kPartMagic
  uint16_t version;
  uint16_t header_size;
  uint32_t rank;
  uint32_t size;  // world size
  uint32_t reserved;
  double ticks_per_second;
  uint64_t reserved2[3];
  uint64_t header_hash;
};
static_assert(sizeof(PartHeader) == 64);

// 64-bit hash for checksums (~1 byte/cycle; 8 bytes per step, multiply-xorshift mixing).
uint64_t hash64(const void* data, size_t n);

}  // namespace mpe::format
