// MPI_T for the tools: describing the variables an MPI library offers (`mpe mpit`), and the one
// shared reader of performance variables that libumq, liblog and libmpetime use: one session, a
// handle per communicator for variables bound to one, sums over per-peer arrays, and a per-call
// cache so that two tools reading one variable in one call read it once.
//
// One copy per process: every tool library carries the core, but the reader's entry points are
// exported (like mpe_core_register_tool), so whichever tool library the loader found first
// provides them and the others call into it; its state is the process's one state.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "mpe/pvar_class.h"
#include "mpe/tool.h"

namespace mpe {
struct Call;
}

namespace mpe::mpit {

// The unexpected-message-queue length, as the MPI libraries we know name it: MPICH (with
// --enable-mpit-pvars=recvq) and Open MPI's ob1 PML. MPE_LOG_PVARS=umq and libumq look for these.
inline constexpr const char* kQueueLengthNames[] = {"unexpected_recvq_length",
                                                    "pml_ob1_unexpected_msgq_length"};

// --- Describing (no session needed; MPI_T initialized by the caller) ---------------------------

// Our class for an MPI_T_PVAR_CLASS_* value (compared with the macros, never with numbers);
// false for a class this MPI defines that the standard does not.
bool pvar_class(int mpi_class, PvarClass* out);
// "MPI_UNSIGNED", ... or "datatype?" for one we do not name.
std::string type_name(MPI_Datatype t);
// The C size of a datatype MPI_T uses, 0 for another (no MPI_Type_size: it needs MPI_Init).
int type_size(MPI_Datatype t);
// "no object", "communicator", ... for an MPI_T_BIND_* value.
const char* bind_name(int bind);
// "user/basic" ... "mpidev/all" for an MPI_T_VERBOSITY_* value.
const char* verbosity_name(int verbosity);
// "constant", "readonly", "local", ... for an MPI_T_SCOPE_* value.
const char* scope_name(int scope);

struct PvarInfo {
  int index = -1;
  std::string name;
  std::string description;
  int verbosity = 0;
  int mpi_class = 0;
  PvarClass cls = PvarClass::kGeneric;
  bool known_class = false;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int bind = 0;
  int count = -1;  // elements per handle; -1 when bound to an object (known only once bound)
  bool readonly = false, continuous = false, atomic = false;
  // Why binding it (MPI_T_pvar_handle_alloc) would harm the program, "" when it is safe: see
  // unsafe_reasons(). The shared reader never binds such a variable, and nor does `mpe mpit`.
  std::string unsafe;
};

struct CvarInfo {
  int index = -1;
  std::string name;
  std::string description;
  int verbosity = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int bind = 0;
  int scope = 0;
  int count = -1;     // elements; -1 when bound to an object
  std::string value;  // the current value as text; "" when it cannot be read without an object
};

// Why binding each performance variable would harm the program, by index ("" for a safe one): the
// one rule every binding goes through. MPI_T has no "component in use" flag and lists variables of
// components the MPI library never initialised in this run; binding one of those reads that
// component's uninitialised state inside the library (Open MPI's psm2 MTL without psm2 hardware:
// a segfault in psm2_mq_get_stats). What MPI_T does show is which components are still registered:
// Open MPI deregisters the variables and category of every component a framework did not select.
std::vector<std::string> unsafe_reasons();
// Every performance variable MPI_T reports, skipping indices whose query fails (Open MPI: a
// variable of an unloaded component). `session` (may be MPI_T_PVAR_SESSION_NULL) is used to learn
// the element count of variables bound to no object.
std::vector<PvarInfo> performance_variables(MPI_T_pvar_session session);
// Every control variable, with its value when it is bound to no object.
std::vector<CvarInfo> control_variables();
// The performance variable called `name` (MPI-3.1 has no MPI_T_pvar_get_index: a scan by name);
// false when there is none.
bool find_pvar(const std::string& name, PvarInfo* out);

// --- The shared reader (exported; see above) ---------------------------------------------------

inline constexpr int kMaxWatched = 64;  // variables read at once in a process

// A variable being read.
struct Watched {
  std::string name;
  std::string description;
  std::string type_name;  // "MPI_UNSIGNED"
  PvarClass cls = PvarClass::kGeneric;
  PvarSemantics semantics = PvarSemantics::kValue;
  PvarValueKind kind = PvarValueKind::kUnsigned;
  bool per_comm = false;  // bound to communicators (a handle each), else one process-wide handle
  int users = 0;          // tools that watch it
};

// One read: the sum over the handle's elements, and the element (peer) holding the largest value.
// Values are 64-bit in the variable's PvarValueKind (a double's bits for kDouble).
struct Sample {
  uint64_t total = 0;
  uint64_t top = 0;   // largest element
  int top_peer = -1;  // its index (rank in the communicator), -1 for a one-element variable
  int count = 0;      // elements summed
  int slot = -1;      // the communicator's slot (0..kSlots-1), -1 for a process-wide variable
};
inline constexpr int kSlots = 4096;  // communicators followed at once

// Starts MPI_T and the session, once per process; every start() is matched by one stop().
// False, after one line on stderr, when MPI_T cannot start.
MPE_EXPORT bool start() noexcept;
// The last stop() frees every handle, the session and MPI_T.
MPE_EXPORT void stop() noexcept;
// Watches the performance variable `name` (a second tool watching it shares it): returns its id,
// or -1 with the reason in *why (not exported by this MPI, or a class, type or binding we cannot
// read). Binds it on every communicator followed so far. Call after start(), before reading.
MPE_EXPORT int watch(const std::string& name, std::string* why);
// Watches every variable we can read (class, type, binding), up to kMaxWatched; returns the ids.
MPE_EXPORT std::vector<int> watch_all();
// The variable with id `id` (from watch), or null.
MPE_EXPORT const Watched* watched(int id) noexcept;
// Follows communicator c (binds the watched per-communicator variables to it); idempotent, so
// every tool calls it at each communicator creation. MPI_COMM_WORLD and MPI_COMM_SELF are
// followed by start().
MPE_EXPORT void comm_created(MPI_Comm c) noexcept;
// c's slot in the reader's table of communicators (0..kSlots-1), following c from now on if it
// was not yet; -1 when the table is full or MPI_T is not started. A slot keeps its communicator
// for life (a freed one is never reused), so a tool may key its own per-communicator data by it.
MPE_EXPORT int comm_slot(MPI_Comm c) noexcept;
// Frees c's handles (call at MPI_Comm_free's entry, while c exists); idempotent.
MPE_EXPORT void comm_freed(MPI_Comm c) noexcept;
// Reads variable `id` (its handle for c when per communicator, c = MPI_COMM_NULL meaning
// MPI_COMM_WORLD). With `call` (an enter hook's call), a second tool reading the same variable in
// the same call gets the first one's value without a second MPI_T read. One PMPI_T_pvar_read
// (7-15 ns here), a communicator lookup and a sum: about 120 instructions beyond the read (Open
// MPI, callgrind); no lock, no allocation (except at the first read on a communicator not yet
// followed, e.g. one from MPI_Comm_idup). False when unreadable.
MPE_EXPORT bool read(int id, MPI_Comm c, Call* call, Sample* out) noexcept;

// --- Summing a read: the one rule of read() and read_direct() ---------------------------------

// The sum of `count` elements of type T into out's total, top and top_peer.
template <typename T>
inline void sum_elements(const unsigned char* buf, int count, Sample* out) noexcept {
  T total = 0, top = 0;
  int top_peer = -1;
  for (int i = 0; i < count; ++i) {
    T x;
    std::memcpy(&x, buf + i * sizeof(T), sizeof(T));
    total += x;
    if (top_peer < 0 || x > top) {
      top = x;
      top_peer = i;
    }
  }
  if constexpr (sizeof(T) == 8) {
    std::memcpy(&out->total, &total, 8);
    std::memcpy(&out->top, &top, 8);
  } else {  // widened in the kind's own signedness
    using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    out->total = static_cast<uint64_t>(static_cast<Wide>(total));
    out->top = static_cast<uint64_t>(static_cast<Wide>(top));
  }
  out->top_peer = count > 1 ? top_peer : -1;
  out->count = count;
}
// sum()'s general case, out of line: any kind, width and count.
__attribute__((noinline)) inline void sum_any(PvarValueKind kind, int width, const unsigned char* buf,
                                              int count, Sample* out) noexcept {
  if (kind == PvarValueKind::kDouble)
    sum_elements<double>(buf, count, out);
  else if (kind == PvarValueKind::kSigned)
    width == 4 ? sum_elements<int32_t>(buf, count, out) : sum_elements<int64_t>(buf, count, out);
  else
    width == 4 ? sum_elements<uint32_t>(buf, count, out) : sum_elements<uint64_t>(buf, count, out);
}

// The sum of `count` elements of a variable's kind and width (bytes) into out's total, top and
// top_peer; a one-element unsigned variable (the queue lengths) in a few inlined instructions.
__attribute__((always_inline)) inline void sum(PvarValueKind kind, int width, const unsigned char* buf,
                                               int count, Sample* out) noexcept {
  if (count == 1 && kind == PvarValueKind::kUnsigned) {
    uint64_t x;
    if (width == 4) {
      uint32_t x4;
      std::memcpy(&x4, buf, 4);
      x = x4;
    } else {
      std::memcpy(&x, buf, 8);
    }
    out->total = out->top = x;
    out->top_peer = -1;
    out->count = 1;
    return;
  }
  sum_any(kind, width, buf, count, out);
}

// A variable's own handle, for a tool's fast path (liblog's receive hook): read_direct() reads it
// without the shared reader's call, checks, per-call cache and communicator lookup. A tool must
// take read() instead while another tool watches the variable too (watched(id)->users > 1), so
// that the variable is read once per call.
inline constexpr int kDirectBytes = 2048;  // the largest handle read directly (into the stack)
struct DirectHandle {
  MPI_T_pvar_session session;
  MPI_T_pvar_handle handle;
  PvarValueKind kind;
  int width;  // bytes per element: 4 or 8
  int count;  // elements
  int slot;   // as Sample::slot
};
// Variable id's handle, for communicator c when the variable is per communicator (c is then
// followed if it was not yet; MPI_COMM_NULL means MPI_COMM_WORLD). False when it is not bound
// there or is larger than kDirectBytes. A process-wide handle is valid until the last stop(); a
// communicator's until any communicator is freed: a tool keeping one checks comm_frees().
MPE_EXPORT bool direct_handle(int id, MPI_Comm c, DirectHandle* out) noexcept;
// The number of communicators freed so far (by comm_freed), which a tool compares with the count
// it saw when it took its per-communicator DirectHandles: freed handles are never read, even when
// MPI gives a new communicator the freed one's handle value.
MPE_EXPORT const std::atomic<uint32_t>* comm_frees() noexcept;

__attribute__((always_inline)) inline bool read_direct(const DirectHandle& h, Sample* out) noexcept {
  alignas(8) unsigned char buf[kDirectBytes];
  if (PMPI_T_pvar_read(h.session, h.handle, buf) != MPI_SUCCESS) return false;
  sum(h.kind, h.width, buf, h.count, out);
  out->slot = h.slot;
  return true;
}

// A sample's total as a double, whatever the variable's kind.
double as_double(PvarValueKind kind, uint64_t v);
// a - b in the variable's kind, as 64 bits of that kind (a double's bits for kDouble).
uint64_t difference(PvarValueKind kind, uint64_t a, uint64_t b);

}  // namespace mpe::mpit
