// The blocking collectives. Inside a task, those hytask::mpi has (barrier, bcast, reduce,
// allreduce, gather(v), scatter(v), allgather(v), alltoall(v), reduce_scatter(_block), scan,
// exscan, and the neighbourhood collectives but MPI_Neighbor_alltoallw) are hytask's, with
// its order check (collectives on a communicator must be posted in the same order on every
// rank: tasks that call them declare hytask::mpi::collective(comm)); MPI_Alltoallw and
// MPI_Neighbor_alltoallw are their MPI-3 non-blocking variants through the engine.
// Elsewhere they are PMPI's.
#include <mpi.h>

#include "hytask/comm/collectives.hpp"
#include "hytask/comm/neighborhood.hpp"
#include "intercept/errors.hpp"
#include "intercept/gate.hpp"
#include "intercept/posted.hpp"

namespace {

namespace hi = hytask::intercept::detail;
namespace hm = hytask::mpi;

// Runs one of hytask's collectives; an error becomes the code or the exception.
template <class F>
int in_task(const char* call, MPI_Comm comm, F&& run) {
  try {
    run();
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed(call, comm, e);
  }
}

}  // namespace

extern "C" {

// ---- hytask's collectives --------------------------------------------------------------

int MPI_Barrier(MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Barrier(comm);
  return in_task("MPI_Barrier", comm, [&] { hm::barrier(comm); });
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Bcast(buf, count, type, root, comm);
  return in_task("MPI_Bcast", comm, [&] { hm::bcast(buf, count, type, root, comm); });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  return in_task("MPI_Reduce", comm, [&] { hm::reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  return in_task("MPI_Allreduce", comm, [&] { hm::allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return in_task("MPI_Gather", comm, [&] {
    hm::gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  return in_task("MPI_Gatherv", comm, [&] {
    hm::gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  });
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return in_task("MPI_Scatter", comm, [&] {
    hm::scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  return in_task("MPI_Scatterv", comm, [&] {
    hm::scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return in_task("MPI_Allgather", comm, [&] {
    hm::allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return in_task("MPI_Allgatherv", comm, [&] {
    hm::allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return in_task("MPI_Alltoall", comm, [&] {
    hm::alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                          comm);
  return in_task("MPI_Alltoallv", comm, [&] {
    hm::alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  });
}

// ---- the others: their non-blocking variants through the engine -------------------------

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[],
                  const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                          comm);
  return hi::run_posted({"MPI_Alltoallw", "MPI_Ialltoallw", -1, -1, comm, 0}, [&](MPI_Request* r) {
    return PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                           comm, r);
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type,
                       MPI_Op op, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  return in_task("MPI_Reduce_scatter", comm,
                 [&] { hm::reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm); });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  return in_task("MPI_Reduce_scatter_block", comm,
                 [&] { hm::reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); });
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  return in_task("MPI_Scan", comm, [&] { hm::scan(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Exscan(sendbuf, recvbuf, count, type, op, comm);
  return in_task("MPI_Exscan", comm, [&] { hm::exscan(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return in_task("MPI_Neighbor_allgather", comm, [&] {
    hm::neighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  return in_task("MPI_Neighbor_allgatherv", comm, [&] {
    hm::neighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return in_task("MPI_Neighbor_alltoall", comm, [&] {
    hm::neighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                           MPI_Datatype recvtype, MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                   recvtype, comm);
  return in_task("MPI_Neighbor_alltoallv", comm, [&] {
    hm::neighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                           comm);
  });
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (!hi::intercepting())
    return PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                                   recvtypes, comm);
  return hi::run_posted({"MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw", -1, -1, comm, 0},
                        [&](MPI_Request* r) {
                          return PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                                          recvcounts, rdispls, recvtypes, comm, r);
                        });
}

}  // extern "C"
