// hytask::mpi's point-to-point calls (hytask/comm/point_to_point.hpp): the runtime's
// communicator, rank and size, and send, ssend, recv, probe and their non-blocking forms.
#include <mpi.h>

#include "comm/api_common.hpp"
#include "comm/error_handler.hpp"
#include "hytask/comm/point_to_point.hpp"

namespace hytask::mpi {

using detail::bytes_of;
using detail::kind;
using detail::make;
using detail::operation;
using detail::run_blocking;
using detail::run_nonblocking;
using detail::sys;

namespace {

operation* p2p(kind k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, int peer,
               int tag, MPI_Comm comm) {
  operation* op = make(k, comm);
  op->sbuf = sbuf;
  op->rbuf = rbuf;
  op->scount = op->rcount = count;
  op->stype = op->rtype = type;
  op->peer = peer;
  op->tag = tag;
  op->bytes = bytes_of(count, type);
  return op;
}

}  // namespace

MPI_Comm comm_world() { return sys("comm_world").world(); }

int rank(MPI_Comm comm) {
  int r = 0;
  detail::calling_mpi guard;
  int rc = MPI_Comm_rank(comm, &r);
  if (rc != MPI_SUCCESS)
    throw error("MPI_Comm_rank", rc, -1, -1, "hytask::mpi::rank: invalid communicator");
  return r;
}

int size(MPI_Comm comm) {
  int n = 0;
  detail::calling_mpi guard;
  int rc = MPI_Comm_size(comm, &n);
  if (rc != MPI_SUCCESS)
    throw error("MPI_Comm_size", rc, -1, -1, "hytask::mpi::size: invalid communicator");
  return n;
}

void send(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  run_blocking("send", p2p(kind::send, buf, nullptr, count, type, dest, tag, comm));
}
void ssend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  run_blocking("ssend", p2p(kind::ssend, buf, nullptr, count, type, dest, tag, comm));
}
MPI_Status recv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm) {
  operation* op = p2p(kind::recv, nullptr, buf, count, type, source, tag, comm);
  detail::acquire(op);
  struct owner {
    operation* op;
    ~owner() { detail::release(op); }
  } hold{op};
  run_blocking("recv", op);
  return op->status;
}
MPI_Status probe(int source, int tag, MPI_Comm comm) {
  operation* op = p2p(kind::probe, nullptr, nullptr, 0, MPI_DATATYPE_NULL, source, tag, comm);
  detail::acquire(op);
  struct owner {
    operation* op;
    ~owner() { detail::release(op); }
  } hold{op};
  run_blocking("probe", op);
  return op->status;
}
request isend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return run_nonblocking("isend", p2p(kind::send, buf, nullptr, count, type, dest, tag, comm));
}
request issend(const void* buf, MPI_Count count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return run_nonblocking("issend", p2p(kind::ssend, buf, nullptr, count, type, dest, tag, comm));
}
request irecv(void* buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm) {
  return run_nonblocking("irecv", p2p(kind::recv, nullptr, buf, count, type, source, tag, comm));
}

}  // namespace hytask::mpi
