// Neighbourhood collectives through hytask: on a communicator with a topology (a Cartesian
// grid from MPI_Cart_create, a graph from MPI_Dist_graph_create_adjacent, ...), every rank
// exchanges with its neighbours only. Made inside a task they suspend only that task, over
// MPI-3's non-blocking neighbourhood collectives; like every collective, all ranks of the
// communicator call them in the same order (hytask::mpi::collective(comm) for tasks).
//
// ```cpp context=mpi
// MPI_Comm ring;  // a periodic 1-D grid: a left and a right neighbour
// int dims = hytask::mpi::size(), periodic = 1;
// MPI_Cart_create(hytask::mpi::comm_world(), 1, &dims, &periodic, 0, &ring);
// std::vector<double> edges(2), halos(2);  // one block per neighbour: left, then right
// hytask::spawn([&] { hytask::mpi::neighbor_alltoall(edges, halos, ring); },
//               hytask::mpi::collective(ring));
// hytask::wait_all();
// ```
//
// Typed forms check the ranges against the topology's neighbour counts
// (hytask::mpi::neighbors) and throw hytask::usage_error when they do not fit.
#pragma once

#include <mpi.h>

#include "hytask/comm/point_to_point.hpp"

namespace hytask::mpi {

// How many ranks this rank receives from (sources) and sends to (destinations) in comm's
// topology: 2 x dimensions on a Cartesian grid (MPI_PROC_NULL neighbours included), the
// neighbours on a graph, the in and out degrees on a distributed graph. A communicator
// without a topology throws usage_error.
struct neighbor_counts {
  int sources = 0;
  int destinations = 0;
};
neighbor_counts neighbors(MPI_Comm comm);

// ---- raw forms ------------------------------------------------------------------------
void neighbor_allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
void neighbor_allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, const int* recvcounts, const int* displs,
                         MPI_Datatype recvtype, MPI_Comm comm);
void neighbor_alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
void neighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                        MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                        const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm);
request ineighbor_allgather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm);
request ineighbor_allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int* recvcounts, const int* displs,
                             MPI_Datatype recvtype, MPI_Comm comm);
request ineighbor_alltoall(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                           MPI_Comm comm);
request ineighbor_alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls,
                            MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
                            const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm);

// ---- typed forms ----------------------------------------------------------------------
namespace detail {
// The block size of a typed neighbourhood call: `send` elements go to each of the
// destinations (alltoall: split among them) and recv holds one block per source; a
// usage_error naming the call when the sizes do not fit comm's topology.
MPI_Count neighbor_block(const char* call, bool split_send, MPI_Count send, MPI_Count recv,
                         MPI_Comm comm);
}  // namespace detail

// Every destination gets all of send; recv holds one block of send's size per source.
template <mpi_range S, mutable_mpi_range R>
void neighbor_allgather(const S& send, R&& recv, MPI_Comm comm) {
  const MPI_Count block = detail::neighbor_block("neighbor_allgather", false, detail::count_of(send),
                                                 detail::count_of(recv), comm);
  neighbor_allgather(std::ranges::data(send), block, detail::type_of<S>(), std::ranges::data(recv),
                     block, detail::type_of<R>(), comm);
}
// send holds one block per destination, recv one per source, in the topology's order.
template <mpi_range S, mutable_mpi_range R>
void neighbor_alltoall(const S& send, R&& recv, MPI_Comm comm) {
  const MPI_Count block = detail::neighbor_block("neighbor_alltoall", true, detail::count_of(send),
                                                 detail::count_of(recv), comm);
  neighbor_alltoall(std::ranges::data(send), block, detail::type_of<S>(), std::ranges::data(recv),
                    block, detail::type_of<R>(), comm);
}
template <mpi_range S, mutable_mpi_range R>
request ineighbor_allgather(const S& send, R&& recv, MPI_Comm comm) {
  const MPI_Count block = detail::neighbor_block("ineighbor_allgather", false,
                                                 detail::count_of(send), detail::count_of(recv), comm);
  return ineighbor_allgather(std::ranges::data(send), block, detail::type_of<S>(),
                             std::ranges::data(recv), block, detail::type_of<R>(), comm);
}
template <mpi_range S, mutable_mpi_range R>
request ineighbor_alltoall(const S& send, R&& recv, MPI_Comm comm) {
  const MPI_Count block = detail::neighbor_block("ineighbor_alltoall", true,
                                                 detail::count_of(send), detail::count_of(recv), comm);
  return ineighbor_alltoall(std::ranges::data(send), block, detail::type_of<S>(),
                            std::ranges::data(recv), block, detail::type_of<R>(), comm);
}

}  // namespace hytask::mpi
