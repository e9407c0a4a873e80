// Agreement, gather-to-root and broadcast for the tools' finalize steps (see collective.h).
#include "mpe/collective.h"

#include <time.h>

#include <climits>
#include <new>

namespace mpe::collective {

void wait_without_spinning(MPI_Request* req) noexcept {
  constexpr int kTestsAtOnce = 64;
  for (int i = 0;; ++i) {
    int done = 0;
    if (PMPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) return;
    if (i >= kTestsAtOnce) {
      timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  }
}

int duplicate(MPI_Comm comm, MPI_Comm* out) noexcept {
  MPI_Request req;
  const int rc = PMPI_Comm_idup(comm, out, &req);
  if (rc == MPI_SUCCESS) wait_without_spinning(&req);
  return rc;
}

bool all_ok(bool ok, MPI_Comm comm) noexcept {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Request req;
  if (PMPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm, &req) != MPI_SUCCESS) return false;
  wait_without_spinning(&req);
  return all != 0;
}

StatusOr<std::vector<std::string>> gather_to_root(const std::string& mine, int root, MPI_Comm comm) noexcept {
  try {
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const bool is_root = rank == root;
    bool ok = mine.size() <= static_cast<size_t>(INT_MAX);  // else it cannot be sent: reported as no memory
    std::vector<int> lens, displs;
    try {
      if (is_root) {
        lens.resize(static_cast<size_t>(size));
        displs.resize(static_cast<size_t>(size));
      }
    } catch (const std::bad_alloc&) {
      ok = false;
    }
    if (!all_ok(ok, comm)) return Status::out_of_memory();
    const int len = static_cast<int>(mine.size());
    MPI_Request req;
    PMPI_Igather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, comm, &req);
    wait_without_spinning(&req);
    std::string all;
    int root_ok = 1;
    if (is_root) {
      long long total = 0;
      for (int r = 0; r < size; ++r) {
        displs[static_cast<size_t>(r)] = static_cast<int>(total);
        total += lens[static_cast<size_t>(r)];
        if (total > INT_MAX) root_ok = 0;
      }
      try {
        if (root_ok) all.resize(static_cast<size_t>(total));
      } catch (const std::bad_alloc&) {
        root_ok = 0;
      }
    }
    broadcast_value(&root_ok, root, comm);
    if (!root_ok) return Status::out_of_memory();
    PMPI_Igatherv(mine.data(), len, MPI_BYTE, all.data(), lens.data(), displs.data(), MPI_BYTE, root, comm,
                  &req);
    wait_without_spinning(&req);
    std::vector<std::string> out;
    if (is_root) {
      out.reserve(static_cast<size_t>(size));
      for (int r = 0; r < size; ++r)
        out.emplace_back(all.data() + displs[static_cast<size_t>(r)],
                         static_cast<size_t>(lens[static_cast<size_t>(r)]));
    }
    return out;
  } catch (const std::bad_alloc&) {
    // Only reachable after every collective is done (the root splitting its buffer).
    return Status::out_of_memory();
  }
}

Status broadcast_from_root(std::string* bytes, int root, MPI_Comm comm) noexcept {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const bool is_root = rank == root;
  long long len = is_root ? static_cast<long long>(bytes->size()) : 0;
  broadcast_value(&len, root, comm);
  bool ok = len <= INT_MAX;  // else MPI_Bcast cannot send it: reported as no memory
  std::string received;
  if (ok && !is_root) {
    try {
      received.resize(static_cast<size_t>(len));
    } catch (const std::bad_alloc&) {
      ok = false;
    }
  }
  if (!all_ok(ok, comm)) return Status::out_of_memory();
  char* data = is_root ? bytes->data() : received.data();
  MPI_Request req;
  PMPI_Ibcast(data, static_cast<int>(len), MPI_BYTE, root, comm, &req);
  wait_without_spinning(&req);
  if (!is_root) bytes->swap(received);
  return Status();
}

}  // namespace mpe::collective
