// hytask::mpi's neighbourhood collectives (hytask/comm/neighborhood.hpp): the topology's
// neighbour counts, and each call built as an operation and posted.
#include <mpi.h>

#include <string>

#include "comm/api_common.hpp"
#include "comm/error_handler.hpp"
#include "hytask/comm/neighborhood.hpp"
#include "hytask/comm/serialized.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi {

using detail::bytes_of;
using detail::kind;
using detail::make;
using detail::operation;
using detail::run_blocking;
using detail::run_nonblocking;

namespace {

operation* op_counts(kind k, const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc,
                     MPI_Datatype rt, MPI_Comm comm) {
  operation* op = make(k, comm);
  op->sbuf = s;
  op->scount = sc;
  op->stype = st;
  op->rbuf = r;
  op->rcount = rc;
  op->rtype = rt;
  op->bytes = bytes_of(sc, st);
  return op;
}

operation* op_arrays(kind k, const void* s, MPI_Count sc, const int* scounts, const int* sdispls,
                     MPI_Datatype st, void* r, const int* rcounts, const int* rdispls,
                     MPI_Datatype rt, MPI_Comm comm) {
  operation* op = op_counts(k, s, sc, st, r, 0, rt, comm);
  op->scounts = scounts;
  op->sdispls = sdispls;
  op->rcounts = rcounts;
  op->rdispls = rdispls;
  return op;
}

}  // namespace

neighbor_counts neighbors(MPI_Comm comm) {
  // Local queries; in serialized mode made in a section, like any call of the program's.
  serialized_section section;
  detail::calling_mpi guard;
  int topology = MPI_UNDEFINED;
  int rc = MPI_Topo_test(comm, &topology);
  if (rc != MPI_SUCCESS)
    throw error("MPI_Topo_test", rc, -1, -1, "hytask::mpi::neighbors: invalid communicator");
  neighbor_counts n;
  if (topology == MPI_CART) {
    int dims = 0;
    rc = MPI_Cartdim_get(comm, &dims);
    n.sources = n.destinations = 2 * dims;
  } else if (topology == MPI_GRAPH) {
    int me = 0, count = 0;
    rc = MPI_Comm_rank(comm, &me);
    if (rc == MPI_SUCCESS) rc = MPI_Graph_neighbors_count(comm, me, &count);
    n.sources = n.destinations = count;
  } else if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    rc = MPI_Dist_graph_neighbors_count(comm, &n.sources, &n.destinations, &weighted);
  } else {
    throw usage_error(
        "hytask::mpi: a neighbourhood collective on a communicator without a topology: create "
        "one with MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create(_adjacent)");
  }
  if (rc != MPI_SUCCESS)
    throw error("MPI_Topo_test", rc, -1, -1, "hytask::mpi::neighbors: " + detail::error_text(rc));
  return n;
}

namespace detail {

MPI_Count neighbor_block(const char* call, bool split_send, MPI_Count send, MPI_Count recv,
                         MPI_Comm comm) {
  const neighbor_counts n = neighbors(comm);
  const std::string fn = std::string("hytask::mpi::") + call + ": ";
  MPI_Count block = send;
  if (split_send) {
    if (n.destinations == 0 ? send != 0 : send % n.destinations != 0)
      throw usage_error(fn + "send holds " + std::to_string(send) + " elements for " +
                        std::to_string(n.destinations) +
                        " destination(s) of the topology: give one block of equal size per "
                        "destination");
    block = n.destinations == 0 ? 0 : send / n.destinations;  // no destination: raw form
  }
  if (recv != block * n.sources)
    throw usage_error(fn + "recv holds " + std::to_string(recv) + " elements, but the topology's " +
                      std::to_string(n.sources) + " source(s) send blocks of " +
                      std::to_string(block) + ": recv must hold " +
                      std::to_string(block * n.sources));
  return block;
}

}  // namespace detail

void neighbor_allgather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc,
                        MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("neighbor_allgather",
               op_counts(kind::neighbor_allgather, s, sc, st, r, rc, rt, comm));
}
request ineighbor_allgather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc,
                            MPI_Datatype rt, MPI_Comm comm) {
  return run_nonblocking("ineighbor_allgather",
                         op_counts(kind::neighbor_allgather, s, sc, st, r, rc, rt, comm));
}
void neighbor_allgatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
                         const int* displs, MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("neighbor_allgatherv", op_arrays(kind::neighbor_allgatherv, s, sc, nullptr, nullptr,
                                                st, r, rcounts, displs, rt, comm));
}
request ineighbor_allgatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r,
                             const int* rcounts, const int* displs, MPI_Datatype rt,
                             MPI_Comm comm) {
  return run_nonblocking("ineighbor_allgatherv",
                         op_arrays(kind::neighbor_allgatherv, s, sc, nullptr, nullptr, st, r,
                                   rcounts, displs, rt, comm));
}
void neighbor_alltoall(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc,
                       MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("neighbor_alltoall", op_counts(kind::neighbor_alltoall, s, sc, st, r, rc, rt, comm));
}
request ineighbor_alltoall(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc,
                           MPI_Datatype rt, MPI_Comm comm) {
  return run_nonblocking("ineighbor_alltoall",
                         op_counts(kind::neighbor_alltoall, s, sc, st, r, rc, rt, comm));
}
void neighbor_alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r,
                        const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("neighbor_alltoallv",
               op_arrays(kind::neighbor_alltoallv, s, 0, sc, sd, st, r, rc, rd, rt, comm));
}
request ineighbor_alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r,
                            const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm comm) {
  return run_nonblocking("ineighbor_alltoallv",
                         op_arrays(kind::neighbor_alltoallv, s, 0, sc, sd, st, r, rc, rd, rt, comm));
}

}  // namespace hytask::mpi
