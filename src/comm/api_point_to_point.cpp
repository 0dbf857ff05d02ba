// hytask::mpi's point-to-point calls (hytask/comm/point_to_point.hpp): the runtime's
// communicator, rank and size, send, ssend, recv, sendrecv(_replace), probe and the
// non-blocking forms.
#include <mpi.h>

#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "comm/api_common.hpp"
#include "comm/error_handler.hpp"
#include "hytask/comm/point_to_point.hpp"
#include "hytask/comm/serialized.hpp"

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
namespace {

// Waits for both halves of a sendrecv — the send's buffer may be reused only once it has
// completed, and a cancellation of the task cancels the receive but drains the send — then
// throws the first failure (`first`: what posting threw, if anything).
MPI_Status wait_both(request& r, request& s, std::exception_ptr first) {
  for (request* q : {&r, &s}) {
    if (!q->valid()) continue;
    try {
      q->wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  return r.status();
}

}  // namespace

MPI_Status sendrecv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm) {
  std::exception_ptr first;
  request r, s;
  try {
    r = irecv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    s = isend(sendbuf, sendcount, sendtype, dest, sendtag, comm);
  } catch (...) {  // refused before posting; what was posted completes first
    first = std::current_exception();
  }
  return wait_both(r, s, first);
}

MPI_Status sendrecv_replace(void* buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,
                            int source, int recvtag, MPI_Comm comm) {
  // The send goes from a copy of the bytes the data spans (count elements a type's extent
  // apart, the last one's true extent; holes included), with the same type and count, so
  // that the receive may overwrite buf meanwhile. (Local datatype queries: in serialized
  // mode made in a section, like any call of the program's.)
  MPI_Count lb = 0, true_extent = 0, type_lb = 0, extent = 0;
  {
    serialized_section section;
    detail::calling_mpi guard;
    int rc = MPI_Type_get_true_extent_x(type, &lb, &true_extent);
    if (rc == MPI_SUCCESS) rc = MPI_Type_get_extent_x(type, &type_lb, &extent);
    if (rc != MPI_SUCCESS)
      throw error("MPI_Sendrecv_replace", rc, dest, sendtag,
                  "hytask::mpi::sendrecv_replace: invalid datatype");
  }
  const MPI_Count span = count > 0 ? (count - 1) * extent + true_extent : 0;
  std::vector<char> copy(static_cast<std::size_t>(span));
  const char* first_byte = static_cast<const char*>(buf) + lb;
  if (span > 0) std::memcpy(copy.data(), first_byte, copy.size());
  // copy.data() stands for first_byte: the type's displacements apply from copy.data() - lb.
  const void* send_from = copy.data() - lb;
  return sendrecv(send_from, count, type, dest, sendtag, buf, count, type, source, recvtag, comm);
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
