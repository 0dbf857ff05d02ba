// Collective communication through hytask: each blocking collective made inside a task
// suspends only that task, over MPI-3's non-blocking collectives. Raw forms take MPI's
// arguments (MPI_IN_PLACE works); typed forms take contiguous ranges, with counts taken from
// the ranges' sizes. Collectives on one communicator must be called in the same order on
// every rank: see hytask::mpi::collective() for tasks that call them.
#pragma once

#include <mpi.h>

#include <span>

#include "hytask/comm/point_to_point.hpp"

namespace hytask::mpi {

// ---- raw forms ------------------------------------------------------------------------
void barrier(MPI_Comm comm = comm_world());
void bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm = comm_world());
void reduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
            MPI_Comm comm = comm_world());
void allreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm = comm_world());
void gather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm = comm_world());
void gatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
             MPI_Comm comm = comm_world());
void scatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm = comm_world());
void scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype,
              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
              MPI_Comm comm = comm_world());
void allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
               MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm = comm_world());
void allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                MPI_Comm comm = comm_world());
void alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm = comm_world());
void alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
               MPI_Datatype sendtype, void* recvbuf, const int* recvcounts, const int* rdispls,
               MPI_Datatype recvtype, MPI_Comm comm = comm_world());

request ibarrier(MPI_Comm comm = comm_world());
request ibcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm = comm_world());
request ireduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                int root, MPI_Comm comm = comm_world());
request iallreduce(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm = comm_world());
request igather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm = comm_world());
request igatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int* recvcounts, const int* displs, MPI_Datatype recvtype, int root,
                 MPI_Comm comm = comm_world());
request iscatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm = comm_world());
request iscatterv(const void* sendbuf, const int* sendcounts, const int* displs,
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm = comm_world());
request iallgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm = comm_world());
request iallgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int* recvcounts, const int* displs, MPI_Datatype recvtype,
                    MPI_Comm comm = comm_world());
request ialltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm = comm_world());
request ialltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                   MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                   const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm = comm_world());

// ---- typed forms ----------------------------------------------------------------------
template <mutable_mpi_range R>
void bcast(R&& data, int root, MPI_Comm comm = comm_world()) {
  bcast(std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), root, comm);
}
template <mpi_range S, mutable_mpi_range R>
void reduce(const S& send, R&& recv, MPI_Op op, int root, MPI_Comm comm = comm_world()) {
  reduce(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
         detail::type_of<S>(), op, root, comm);
}
template <mpi_range S, mutable_mpi_range R>
void allreduce(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  allreduce(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
            detail::type_of<S>(), op, comm);
}
// In place: every rank's data is both input and result.
template <mutable_mpi_range R>
void allreduce(R&& data, MPI_Op op, MPI_Comm comm = comm_world()) {
  allreduce(MPI_IN_PLACE, std::ranges::data(data), detail::count_of(data), detail::type_of<R>(),
            op, comm);
}
// recv (significant at root) holds size() blocks of send's size.
template <mpi_range S, mutable_mpi_range R>
void gather(const S& send, R&& recv, int root, MPI_Comm comm = comm_world()) {
  gather(std::ranges::data(send), detail::count_of(send), detail::type_of<S>(),
         std::ranges::data(recv), detail::count_of(send), detail::type_of<R>(), root, comm);
}
// send (significant at root) holds size() blocks of recv's size.
template <mpi_range S, mutable_mpi_range R>
void scatter(const S& send, R&& recv, int root, MPI_Comm comm = comm_world()) {
  scatter(std::ranges::data(send), detail::count_of(recv), detail::type_of<S>(),
          std::ranges::data(recv), detail::count_of(recv), detail::type_of<R>(), root, comm);
}
template <mpi_range S, mutable_mpi_range R>
void allgather(const S& send, R&& recv, MPI_Comm comm = comm_world()) {
  allgather(std::ranges::data(send), detail::count_of(send), detail::type_of<S>(),
            std::ranges::data(recv), detail::count_of(send), detail::type_of<R>(), comm);
}
// send and recv hold size() blocks each; a block is send.size() / size().
template <mpi_range S, mutable_mpi_range R>
void alltoall(const S& send, R&& recv, MPI_Comm comm = comm_world()) {
  const MPI_Count block = detail::count_of(send) / size(comm);
  alltoall(std::ranges::data(send), block, detail::type_of<S>(), std::ranges::data(recv), block,
           detail::type_of<R>(), comm);
}

}  // namespace hytask::mpi
