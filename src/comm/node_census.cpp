#include "comm/node_census.hpp"

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "hytask/errors.hpp"
#include "platform/topology.hpp"

namespace hytask::mpi::detail {
namespace {

void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS)
    throw usage_error(std::string("hytask: ") + call + " failed while counting the node's ranks and CPUs (error " +
                      std::to_string(rc) + ")");
}

}  // namespace

node_census take_node_census(MPI_Comm world, unsigned threads) {
  int rank = 0;
  check(MPI_Comm_rank(world, &rank), "MPI_Comm_rank");
  MPI_Comm local = MPI_COMM_NULL;
  check(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)");
  node_census c;
  try {
    check(MPI_Comm_size(local, &c.ranks), "MPI_Comm_size");
    // The union of the ranks' CPU masks: ranks bound to separate cores share none, unbound
    // ranks all of them.
    const std::vector<int>& pus = core::topology::get().allowed_pus;
    int top = pus.empty() ? 0 : pus.back();
    check(MPI_Allreduce(MPI_IN_PLACE, &top, 1, MPI_INT, MPI_MAX, local), "MPI_Allreduce");
    std::vector<std::uint64_t> mask(static_cast<std::size_t>(top) / 64 + 1, 0);
    for (int pu : pus) mask[static_cast<std::size_t>(pu) / 64] |= std::uint64_t{1} << (pu % 64);
    unsigned long long sum = threads;
    check(MPI_Allreduce(MPI_IN_PLACE, mask.data(), static_cast<int>(mask.size()), MPI_UINT64_T,
                        MPI_BOR, local),
          "MPI_Allreduce");
    check(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, local),
          "MPI_Allreduce");
    unsigned cpus = 0;
    for (std::uint64_t w : mask) cpus += static_cast<unsigned>(std::popcount(w));
    c.cpus = cpus > 0 ? cpus : 1;
    c.threads = static_cast<unsigned>(sum);
  } catch (...) {
    MPI_Comm_free(&local);
    throw;
  }
  MPI_Comm_free(&local);
  return c;
}

}  // namespace hytask::mpi::detail
