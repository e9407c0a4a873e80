// The definitions of a logfile (ranks, threads, communicators, categories, clock corrections)
// and the chunk codec shared by liblog, the merge and the reader. No MPI dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mpe/byte_codec.h"
#include "mpe/frame.h"
#include "mpe/log_format.h"
#include "mpe/pvar_class.h"
#include "mpe/status.h"

namespace mpe::log {

enum class CategoryKind : uint8_t { kState = 0, kEvent = 1 };

struct Category {
  uint32_t id = 0;  // MPI function index, or user event id (a user state uses its start id)
  CategoryKind kind = CategoryKind::kState;
  uint32_t end_id = 0;  // user states: the id of the event that ends the state
  uint32_t color = 0;   // 0xRRGGBB
  std::string name;
};

struct CommDef {
  uint32_t index = 0;      // per-rank index, as in Record::comm
  uint64_t global_id = 0;  // the same on every member
  bool inter = false;
  std::vector<int32_t> members;  // world rank of each comm rank (local group)
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
  // Returns reference ticks for local ticks t.
  double correct(uint64_t t) const;
};

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
};

struct Definitions {
  uint32_t world_size = 0;
  std::string program;
  std::string clock;                 // "tsc" or "monotonic"
  double ticks_per_second = 1e9;     // of the reference rank
  bool recovered = false;            // built by `mpe merge --recover`
  std::vector<Category> categories;  // MPI functions and user categories
  std::vector<RankMeta> ranks;       // indexed by rank
};

std::string serialize_rank_meta(const RankMeta& m);
// `version` is the file's (or spill file's) format version: fields added later are absent before.
Status parse_rank_meta(const char* p, size_t n, RankMeta* out, uint16_t version = kCurrentVersion);
std::string serialize_definitions(const Definitions& d);
Status parse_definitions(const char* p, size_t n, Definitions* out, uint16_t version = kCurrentVersion);

// Encodes records into one chunk (header + payload) appended to out. Costs ~2-4 ns per record
// (delta, shuffle, zstd level 1). Also fills the header's time range and summary.
void encode_events(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, int zstd_level,
                   std::string* out);
// Encodes a chunk holding an opaque blob (rank meta, definitions), zstd-compressed.
void encode_blob(ChunkKind kind, uint32_t rank, const std::string& blob, std::string* out);
// Encodes records without compression; async-signal-safe: writes into out (capacity cap bytes),
// returns the bytes used or 0 when it does not fit.
size_t encode_events_raw(const Record* records, uint32_t n, uint32_t rank, uint32_t thread, char* out,
                         size_t cap);

// Checks a chunk header (magic, header hash, sizes). `avail` is the bytes present from the
// header on, for a truncation error.
Status check_chunk_header(const ChunkHeader& h, uint64_t avail, uint64_t offset);
// Verifies a payload and decodes it: records for events chunks, bytes for blob chunks.
// `scratch`, when given, holds the decompressed bytes: a caller decoding many chunks passes the
// same string each time and allocates once.
Status decode_events(const ChunkHeader& h, const char* payload, std::vector<Record>* out,
                     std::string* scratch = nullptr);
Status decode_blob(const ChunkHeader& h, const char* payload, std::string* out);

// Seals a header: computes header_hash.
void seal(ChunkHeader* h);
void seal(FileHeader* h);
void seal(Footer* f);
void seal(PartHeader* h);

// Default colour of an MPI function by its name (p2p blue, collectives orange, waits red...).
uint32_t default_mpi_color(const std::string& name);

}  // namespace mpe::log
