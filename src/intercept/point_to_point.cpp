// The blocking point-to-point calls. Inside a task: MPI_Send, MPI_Ssend, MPI_Recv and
// MPI_Probe are hytask::mpi's send, ssend, recv and probe (every access mode, the order
// check, the communication class); MPI_Sendrecv is hytask's irecv and isend, waited for
// together; MPI_Bsend and MPI_Rsend are MPI_Ibsend and MPI_Irsend through the engine.
// Elsewhere they are PMPI's.
#include <mpi.h>

#include <optional>

#include "hytask/comm/point_to_point.hpp"
#include "intercept/errors.hpp"
#include "intercept/gate.hpp"
#include "intercept/posted.hpp"
#include "intercept/status.hpp"

namespace {

namespace hi = hytask::intercept::detail;
namespace hm = hytask::mpi;

}  // namespace

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Send(buf, count, type, dest, tag, comm);
  try {
    hm::send(buf, count, type, dest, tag, comm);
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Send", comm, e);
  }
}

int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Ssend(buf, count, type, dest, tag, comm);
  try {
    hm::ssend(buf, count, type, dest, tag, comm);
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Ssend", comm, e);
  }
}

int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Bsend(buf, count, type, dest, tag, comm);
  return hi::run_posted({"MPI_Bsend", "MPI_Ibsend", dest, tag, comm, hi::bytes_of(count, type)},
                        [&](MPI_Request* r) { return PMPI_Ibsend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  return hi::run_posted({"MPI_Rsend", "MPI_Irsend", dest, tag, comm, hi::bytes_of(count, type)},
                        [&](MPI_Request* r) { return PMPI_Irsend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  try {
    hi::give_status(status, hm::recv(buf, count, type, source, tag, comm));
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Recv", comm, e);
  }
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Probe(source, tag, comm, status);
  try {
    hi::give_status(status, hm::probe(source, tag, comm));
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Probe", comm, e);
  }
}

// The receive is posted first, as MPI_Sendrecv's own implementations do; both are waited for
// (the send buffer is the program's again when the call returns) before an error is given.
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  if (!hi::intercepting())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status);
  std::optional<hm::error> first;
  hm::request r, s;
  try {
    r = hm::irecv(recvbuf, recvcount, recvtype, source, recvtag, comm);
    s = hm::isend(sendbuf, sendcount, sendtype, dest, sendtag, comm);
  } catch (const hm::error& e) {  // refused before posting (a count); what was posted completes
    first = e;
  }
  try {
    r.wait();
  } catch (const hm::error& e) {
    if (!first) first = e;
  }
  try {
    s.wait();
  } catch (const hm::error& e) {
    if (!first) first = e;
  }
  if (first) return hi::failed("MPI_Sendrecv", comm, *first);
  hi::give_status(status, r.status());
  return MPI_SUCCESS;
}

}  // extern "C"
