// A communicator's members as world ranks (see mpe/comm_members.h).
#include "mpe/comm_members.h"

#include <cstddef>

namespace mpe {

std::vector<int32_t> world_members(MPI_Comm c, bool* inter) {
  int is_inter = 0;
  PMPI_Comm_test_inter(c, &is_inter);
  if (inter) *inter = is_inter != 0;
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  (is_inter ? PMPI_Comm_remote_group : PMPI_Comm_group)(c, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> ranks(static_cast<size_t>(n)), out(static_cast<size_t>(n), MPI_UNDEFINED);
  for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
  if (n > 0) PMPI_Group_translate_ranks(group, n, ranks.data(), world, out.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  std::vector<int32_t> members(out.begin(), out.end());
  for (auto& r : members)
    if (r == MPI_UNDEFINED) r = -1;
  return members;
}

}  // namespace mpe
