// Collective communication through hytask: each blocking collective made inside a task
// suspends only that task, over MPI-3's non-blocking collectives. Raw forms take MPI's
// arguments (MPI_IN_PLACE works); typed forms take contiguous ranges, with counts taken from
// the ranges' sizes. Collectives on one communicator must be called in the same order on
// every rank: see hytask::mpi::collective() for tasks that call them.
//
// Prefix sums: scan gives rank r the reduction of ranks 0..r, exscan of ranks 0..r-1 (rank
// 0's result is left as it was, as MPI leaves it undefined):
//
// ```cpp context=mpi
// long mine = hytask::mpi::rank() + 1, upto = 0;
// hytask::mpi::scan(std::span(&mine, 1), std::span(&upto, 1), MPI_SUM);  // (r+1)(r+2)/2
// ```
//
// Neighbourhood collectives, on a communicator with a topology, are in
// hytask/comm/neighborhood.hpp.
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

// Reductions whose result is scattered (rank i gets recvcounts[i] elements, or recvcount
// each) and prefix reductions. recvcounts has size() entries.
void reduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type,
                    MPI_Op op, MPI_Comm comm = comm_world());
void reduce_scatter_block(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                          MPI_Datatype type, MPI_Op op, MPI_Comm comm = comm_world());
void scan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
          MPI_Comm comm = comm_world());
void exscan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
            MPI_Comm comm = comm_world());
request ireduce_scatter(const void* sendbuf, void* recvbuf, const int* recvcounts,
                        MPI_Datatype type, MPI_Op op, MPI_Comm comm = comm_world());
request ireduce_scatter_block(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm = comm_world());
request iscan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm = comm_world());
request iexscan(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                MPI_Op op, MPI_Comm comm = comm_world());

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

namespace detail {
// recvcounts must have one entry per rank of comm, send hold their sum and recv this rank's
// entry: else a usage_error naming the call.
void check_reduce_scatter(const char* call, std::span<const int> recvcounts, MPI_Count send,
                          MPI_Count recv, MPI_Comm comm);
// send's size must be size(comm) times recv's: else a usage_error naming the call.
void check_block_sizes(const char* call, MPI_Count send, MPI_Count recv, MPI_Comm comm);
}  // namespace detail

// send holds the sum of recvcounts (one entry per rank); rank i's recv gets recvcounts[i]
// elements of the reduction.
template <mpi_range S, mutable_mpi_range R>
void reduce_scatter(const S& send, R&& recv, std::span<const int> recvcounts, MPI_Op op,
                    MPI_Comm comm = comm_world()) {
  detail::check_reduce_scatter("reduce_scatter", recvcounts, detail::count_of(send),
                               detail::count_of(recv), comm);
  reduce_scatter(std::ranges::data(send), std::ranges::data(recv), recvcounts.data(),
                 detail::type_of<S>(), op, comm);
}
template <mpi_range S, mutable_mpi_range R>
request ireduce_scatter(const S& send, R&& recv, std::span<const int> recvcounts, MPI_Op op,
                        MPI_Comm comm = comm_world()) {
  detail::check_reduce_scatter("ireduce_scatter", recvcounts, detail::count_of(send),
                               detail::count_of(recv), comm);
  return ireduce_scatter(std::ranges::data(send), std::ranges::data(recv), recvcounts.data(),
                         detail::type_of<S>(), op, comm);
}
// send holds size() blocks of recv's size; rank i gets block i of the reduction.
template <mpi_range S, mutable_mpi_range R>
void reduce_scatter_block(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  detail::check_block_sizes("reduce_scatter_block", detail::count_of(send),
                            detail::count_of(recv), comm);
  reduce_scatter_block(std::ranges::data(send), std::ranges::data(recv), detail::count_of(recv),
                       detail::type_of<S>(), op, comm);
}
template <mpi_range S, mutable_mpi_range R>
void scan(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  scan(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
       detail::type_of<S>(), op, comm);
}
// In place: data is the input and becomes the result.
template <mutable_mpi_range R>
void scan(R&& data, MPI_Op op, MPI_Comm comm = comm_world()) {
  scan(MPI_IN_PLACE, std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), op,
       comm);
}
// Rank 0's recv is left as it was.
template <mpi_range S, mutable_mpi_range R>
void exscan(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  exscan(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
         detail::type_of<S>(), op, comm);
}
template <mutable_mpi_range R>
void exscan(R&& data, MPI_Op op, MPI_Comm comm = comm_world()) {
  exscan(MPI_IN_PLACE, std::ranges::data(data), detail::count_of(data), detail::type_of<R>(), op,
         comm);
}
template <mpi_range S, mutable_mpi_range R>
request iscan(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  return iscan(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
               detail::type_of<S>(), op, comm);
}
template <mpi_range S, mutable_mpi_range R>
request iexscan(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  return iexscan(std::ranges::data(send), std::ranges::data(recv), detail::count_of(send),
                 detail::type_of<S>(), op, comm);
}
template <mpi_range S, mutable_mpi_range R>
request ireduce_scatter_block(const S& send, R&& recv, MPI_Op op, MPI_Comm comm = comm_world()) {
  detail::check_block_sizes("ireduce_scatter_block", detail::count_of(send),
                            detail::count_of(recv), comm);
  return ireduce_scatter_block(std::ranges::data(send), std::ranges::data(recv),
                               detail::count_of(recv), detail::type_of<S>(), op, comm);
}

}  // namespace hytask::mpi
