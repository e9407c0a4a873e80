// The Fortran bindings' conversions: see mpe/fortran.h.
#include "mpe/fortran.h"

#include <dlfcn.h>

#include <atomic>

#include "mpe/config.h"

namespace mpe::core::fortran {
namespace {

// The addresses one Fortran sentinel may have. Each MPI names it differently, and Open MPI
// defines it once per Fortran library (mpif.h, use mpi, mpi_f08), so every loaded copy is kept;
// MPICH's mpif.h sentinel is a common block whose address the MPI stores in a pointer variable
// (MPIR_F_MPI_IN_PLACE) when Fortran starts MPI, so that variable is read at each check.
struct Sentinel {
  static constexpr int kMax = 12;
  const void* direct[kMax];
  int ndirect;
  const void* const* indirect[2];  // pointer variables, read at each check
  int nindirect;

  bool is(const void* p) const noexcept {
    for (int i = 0; i < ndirect; ++i)
      if (p == direct[i]) return true;
    for (int i = 0; i < nindirect; ++i)
      if (p == *indirect[i]) return true;
    return false;
  }
};

// The libraries where Open MPI keeps a copy of its sentinels, besides the global scope.
constexpr const char* kFortranLibraries[] = {"libmpi.so.40", "libmpi_mpifh.so.40", "libmpi_usempif08.so.40",
                                             "libmpi_usempi_ignore_tkr.so.40"};

void add_direct(Sentinel& s, const void* p) {
  if (!p) return;
  for (int i = 0; i < s.ndirect; ++i)
    if (s.direct[i] == p) return;
  if (s.ndirect < Sentinel::kMax) s.direct[s.ndirect++] = p;
}

// Resolves `names` (data symbols that are the sentinel) and `pointers` (data symbols that hold
// its address) in the global scope and in each of Open MPI's Fortran libraries that is loaded.
Sentinel resolve(std::initializer_list<const char*> names, std::initializer_list<const char*> pointers) {
  Sentinel s{};
  for (const char* n : names) add_direct(s, dlsym(RTLD_DEFAULT, n));
  for (const char* lib : kFortranLibraries)
    if (void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD)) {
      for (const char* n : names) add_direct(s, dlsym(h, n));
      dlclose(h);
    }
  for (const char* p : pointers)
    if (void* v = dlsym(RTLD_DEFAULT, p); v && s.nindirect < 2)
      s.indirect[s.nindirect++] = static_cast<const void* const*>(v);
  return s;
}

struct Sentinels {
  Sentinel in_place, bottom, status_ignore, statuses_ignore;
};

// Resolved at the first Fortran call that needs them: the Fortran libraries are loaded by then.
const Sentinels& sentinels() {
  static const Sentinels s{
      resolve({"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__",
               "MPI_FORTRAN_IN_PLACE", "MPIR_F08_MPI_IN_PLACE"},
              {"MPIR_F_MPI_IN_PLACE"}),
      resolve({"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM",
               "MPIR_F08_MPI_BOTTOM"},
              {"MPIR_F_MPI_BOTTOM"}),
      resolve({"mpi_fortran_status_ignore_", "mpi_fortran_status_ignore", "MPIR_F08_MPI_STATUS_IGNORE_OBJ"},
              {"MPI_F_STATUS_IGNORE", "MPI_F08_STATUS_IGNORE"}),
      resolve(
          {"mpi_fortran_statuses_ignore_", "mpi_fortran_statuses_ignore", "MPIR_F08_MPI_STATUSES_IGNORE_OBJ"},
          {"MPI_F_STATUSES_IGNORE", "MPI_F08_STATUSES_IGNORE"}),
  };
  return s;
}

template <typename T>
T* array(ThreadState& ts, Scratch which, int n) noexcept {
  return static_cast<T*>(scratch(ts, which, sizeof(T) * static_cast<size_t>(n > 0 ? n : 1)));
}

}  // namespace

const void* buffer(const void* address) noexcept {
  if (!address) return address;
  const Sentinels& s = sentinels();
  if (s.in_place.is(address)) return MPI_IN_PLACE;
  if (s.bottom.is(address)) return MPI_BOTTOM;
  return address;
}

bool status_ignored(const void* status) noexcept { return sentinels().status_ignore.is(status); }
bool statuses_ignored(const void* statuses) noexcept { return sentinels().statuses_ignore.is(statuses); }

MPI_Request* requests(ThreadState& ts, const void* fortran, int n) noexcept {
  auto* c = array<MPI_Request>(ts, Scratch::kRequests, n);
  if (c) refresh_requests(c, fortran, n);
  return c;
}

void refresh_requests(MPI_Request* c, const void* fortran, int n) noexcept {
  const auto* f = static_cast<const MPI_Fint*>(fortran);
  for (int i = 0; i < n; ++i) c[i] = PMPI_Request_f2c(f[i]);
}

MPI_Status* statuses(ThreadState& ts, const void* fortran, int n) noexcept {
  auto* c = array<MPI_Status>(ts, Scratch::kStatuses, n);
  if (!c) return nullptr;
  const auto* f = static_cast<const MPI_Fint*>(fortran);
  for (int i = 0; i < n; ++i) PMPI_Status_f2c(f + static_cast<ptrdiff_t>(i) * kStatusInts, &c[i]);
  return c;
}

MPI_Fint* status_storage(ThreadState& ts, int n) noexcept {
  return array<MPI_Fint>(ts, Scratch::kFortranStatuses, (n > 0 ? n : 1) * kStatusInts);
}

int* indices(ThreadState& ts, const void* fortran, int n, int base) noexcept {
  auto* c = array<int>(ts, Scratch::kIndices, n);
  if (!c) return nullptr;
  const auto* f = static_cast<const MPI_Fint*>(fortran);
  for (int i = 0; i < n; ++i) c[i] = f[i] == MPI_UNDEFINED ? MPI_UNDEFINED : f[i] - base;
  return c;
}

MPI_Datatype* types(ThreadState& ts, bool send, const void* fortran, int n) noexcept {
  auto* c = array<MPI_Datatype>(ts, send ? Scratch::kSendTypes : Scratch::kRecvTypes, n);
  if (!c) return nullptr;
  const auto* f = static_cast<const MPI_Fint*>(fortran);
  for (int i = 0; i < n; ++i) c[i] = PMPI_Type_f2c(f[i]);
  return c;
}

void lost(const char* role) noexcept {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  char line[200];
  snprintf(line, sizeof line,
           "out of memory converting a Fortran call's %s; the tools do not see them in such calls "
           "(their records of those calls are incomplete)",
           role);
  config::warn(line, false);
}

}  // namespace mpe::core::fortran
