// hytask::mpi's collectives (hytask/comm/collectives.hpp), blocking and non-blocking: each
// builds its operation (root, buffers, counts and types) and posts it.
#include <mpi.h>

#include <span>
#include <string>

#include "comm/api_common.hpp"
#include "hytask/comm/collectives.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi {

using detail::bytes_of;
using detail::kind;
using detail::make;
using detail::operation;
using detail::run_blocking;
using detail::run_nonblocking;

namespace {

operation* coll(kind k, MPI_Comm comm, int root, const void* sbuf, MPI_Count scount, MPI_Datatype stype,
                void* rbuf, MPI_Count rcount, MPI_Datatype rtype) {
  operation* op = make(k, comm);
  op->peer = root;
  op->sbuf = sbuf;
  op->scount = scount;
  op->stype = stype;
  op->rbuf = rbuf;
  op->rcount = rcount;
  op->rtype = rtype;
  op->bytes = sbuf == MPI_IN_PLACE ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
  if (op->bytes == 0) op->bytes = bytes_of(rcount, rtype);
  return op;
}

operation* op_barrier(MPI_Comm comm) { return make(kind::barrier, comm); }
operation* op_bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  return coll(kind::bcast, comm, root, nullptr, 0, MPI_DATATYPE_NULL, buf, count, type);
}
operation* op_reduce(kind k, const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op mop,
                     int root, MPI_Comm comm) {
  operation* op = coll(k, comm, root, s, count, type, r, count, type);
  op->op = mop;
  return op;
}
operation* op_gatherv(kind k, const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
                      const int* displs, MPI_Datatype rt, int root, MPI_Comm comm) {
  operation* op = coll(k, comm, root, s, sc, st, r, 0, rt);
  op->rcounts = rcounts;
  op->rdispls = displs;
  return op;
}
operation* op_scatterv(const void* s, const int* scounts, const int* displs, MPI_Datatype st,
                       void* r, MPI_Count rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  operation* op = coll(kind::scatterv, comm, root, s, 0, st, r, rc, rt);
  op->scounts = scounts;
  op->sdispls = displs;
  return op;
}
operation* op_alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r,
                        const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm comm) {
  operation* op = coll(kind::alltoallv, comm, -1, s, 0, st, r, 0, rt);
  op->scounts = sc;
  op->sdispls = sd;
  op->rcounts = rc;
  op->rdispls = rd;
  return op;
}

operation* op_reduce_scatter(const void* s, void* r, const int* rcounts, MPI_Datatype type,
                             MPI_Op mop, MPI_Comm comm) {
  operation* op = coll(kind::reduce_scatter, comm, -1, s, 0, type, r, 0, type);
  op->rcounts = rcounts;
  op->op = mop;
  return op;
}
operation* op_reduce_scatter_block(const void* s, void* r, MPI_Count rc, MPI_Datatype type,
                                   MPI_Op mop, MPI_Comm comm) {
  operation* op = coll(kind::reduce_scatter_block, comm, -1, s, 0, type,
                       r, rc, type);
  op->bytes = bytes_of(rc, type);
  op->op = mop;
  return op;
}

}  // namespace

void barrier(MPI_Comm comm) { run_blocking("barrier", op_barrier(comm)); }
request ibarrier(MPI_Comm comm) { return run_nonblocking("ibarrier", op_barrier(comm)); }

void bcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  run_blocking("bcast", op_bcast(buf, count, type, root, comm));
}
request ibcast(void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  return run_nonblocking("ibcast", op_bcast(buf, count, type, root, comm));
}

void reduce(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
            MPI_Comm comm) {
  run_blocking("reduce", op_reduce(kind::reduce, s, r, count, type, op, root, comm));
}
request ireduce(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm) {
  return run_nonblocking("ireduce", op_reduce(kind::reduce, s, r, count, type, op, root, comm));
}
void allreduce(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  run_blocking("allreduce", op_reduce(kind::allreduce, s, r, count, type, op, -1, comm));
}
request iallreduce(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm) {
  return run_nonblocking("iallreduce",
                         op_reduce(kind::allreduce, s, r, count, type, op, -1, comm));
}

void gather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt, int root,
            MPI_Comm comm) {
  run_blocking("gather", coll(kind::gather, comm, root, s, sc, st, r, rc, rt));
}
request igather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  return run_nonblocking("igather", coll(kind::gather, comm, root, s, sc, st, r, rc, rt));
}
void gatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
             const int* displs, MPI_Datatype rt, int root, MPI_Comm comm) {
  run_blocking("gatherv", op_gatherv(kind::gatherv, s, sc, st, r, rcounts, displs, rt, root, comm));
}
request igatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
                 const int* displs, MPI_Datatype rt, int root, MPI_Comm comm) {
  return run_nonblocking("igatherv",
                         op_gatherv(kind::gatherv, s, sc, st, r, rcounts, displs, rt, root, comm));
}

void scatter(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt, int root,
             MPI_Comm comm) {
  run_blocking("scatter", coll(kind::scatter, comm, root, s, sc, st, r, rc, rt));
}
request iscatter(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  return run_nonblocking("iscatter", coll(kind::scatter, comm, root, s, sc, st, r, rc, rt));
}
void scatterv(const void* s, const int* scounts, const int* displs, MPI_Datatype st, void* r,
              MPI_Count rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  run_blocking("scatterv", op_scatterv(s, scounts, displs, st, r, rc, rt, root, comm));
}
request iscatterv(const void* s, const int* scounts, const int* displs, MPI_Datatype st, void* r,
                  MPI_Count rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  return run_nonblocking("iscatterv", op_scatterv(s, scounts, displs, st, r, rc, rt, root, comm));
}

void allgather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt,
               MPI_Comm comm) {
  run_blocking("allgather", coll(kind::allgather, comm, -1, s, sc, st, r, rc, rt));
}
request iallgather(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt,
                   MPI_Comm comm) {
  return run_nonblocking("iallgather", coll(kind::allgather, comm, -1, s, sc, st, r, rc, rt));
}
void allgatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
                const int* displs, MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("allgatherv",
               op_gatherv(kind::allgatherv, s, sc, st, r, rcounts, displs, rt, -1, comm));
}
request iallgatherv(const void* s, MPI_Count sc, MPI_Datatype st, void* r, const int* rcounts,
                    const int* displs, MPI_Datatype rt, MPI_Comm comm) {
  return run_nonblocking(
      "iallgatherv", op_gatherv(kind::allgatherv, s, sc, st, r, rcounts, displs, rt, -1, comm));
}

void alltoall(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt,
              MPI_Comm comm) {
  run_blocking("alltoall", coll(kind::alltoall, comm, -1, s, sc, st, r, rc, rt));
}
request ialltoall(const void* s, MPI_Count sc, MPI_Datatype st, void* r, MPI_Count rc, MPI_Datatype rt,
                  MPI_Comm comm) {
  return run_nonblocking("ialltoall", coll(kind::alltoall, comm, -1, s, sc, st, r, rc, rt));
}
void alltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r,
               const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm comm) {
  run_blocking("alltoallv", op_alltoallv(s, sc, sd, st, r, rc, rd, rt, comm));
}
request ialltoallv(const void* s, const int* sc, const int* sd, MPI_Datatype st, void* r,
                   const int* rc, const int* rd, MPI_Datatype rt, MPI_Comm comm) {
  return run_nonblocking("ialltoallv", op_alltoallv(s, sc, sd, st, r, rc, rd, rt, comm));
}

void reduce_scatter(const void* s, void* r, const int* rcounts, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm) {
  run_blocking("reduce_scatter", op_reduce_scatter(s, r, rcounts, type, op, comm));
}
request ireduce_scatter(const void* s, void* r, const int* rcounts, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm) {
  return run_nonblocking("ireduce_scatter", op_reduce_scatter(s, r, rcounts, type, op, comm));
}
void reduce_scatter_block(const void* s, void* r, MPI_Count rc, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm) {
  run_blocking("reduce_scatter_block", op_reduce_scatter_block(s, r, rc, type, op, comm));
}
request ireduce_scatter_block(const void* s, void* r, MPI_Count rc, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm) {
  return run_nonblocking("ireduce_scatter_block",
                         op_reduce_scatter_block(s, r, rc, type, op, comm));
}
void scan(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  run_blocking("scan", op_reduce(kind::scan, s, r, count, type, op, -1, comm));
}
request iscan(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op,
              MPI_Comm comm) {
  return run_nonblocking("iscan", op_reduce(kind::scan, s, r, count, type, op, -1, comm));
}
void exscan(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  run_blocking("exscan", op_reduce(kind::exscan, s, r, count, type, op, -1, comm));
}
request iexscan(const void* s, void* r, MPI_Count count, MPI_Datatype type, MPI_Op op,
                MPI_Comm comm) {
  return run_nonblocking("iexscan", op_reduce(kind::exscan, s, r, count, type, op, -1, comm));
}

namespace detail {

void check_reduce_scatter(const char* call, std::span<const int> recvcounts, MPI_Count send,
                          MPI_Count recv, MPI_Comm comm) {
  const int ranks = size(comm);
  const std::string fn = std::string("hytask::mpi::") + call + ": ";
  if (recvcounts.size() != static_cast<std::size_t>(ranks))
    throw usage_error(fn + "recvcounts has " + std::to_string(recvcounts.size()) +
                      " entries, the communicator " + std::to_string(ranks) +
                      " ranks: give one count per rank");
  MPI_Count total = 0;
  for (int c : recvcounts) total += c;
  const int me = rank(comm);
  if (send < total || recv < recvcounts[static_cast<std::size_t>(me)])
    throw usage_error(fn + "send holds " + std::to_string(send) + " elements and recv " +
                      std::to_string(recv) + " on rank " + std::to_string(me) +
                      ", but recvcounts asks for " + std::to_string(total) + " in send and " +
                      std::to_string(recvcounts[static_cast<std::size_t>(me)]) +
                      " in recv: size the ranges by recvcounts");
}

void check_block_sizes(const char* call, MPI_Count send, MPI_Count recv, MPI_Comm comm) {
  const int ranks = size(comm);
  if (send == recv * ranks) return;
  throw usage_error(std::string("hytask::mpi::") + call + ": send holds " + std::to_string(send) +
                    " elements and recv " + std::to_string(recv) + ", but send must hold one "
                    "block of recv's size per rank (" + std::to_string(ranks) + " x " +
                    std::to_string(recv) + " = " + std::to_string(recv * ranks) + ")");
}

}  // namespace detail

}  // namespace hytask::mpi
