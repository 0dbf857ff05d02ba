// The point-to-point calls. Inside a task: MPI_Send, MPI_Ssend, MPI_Recv and MPI_Probe are
// hytask::mpi's send, ssend, recv and probe (every access mode, the order check, the
// communication class); MPI_Sendrecv and MPI_Sendrecv_replace are hytask::mpi's sendrecv and
// sendrecv_replace (a receive and a send waited for together); MPI_Bsend and
// MPI_Rsend are MPI_Ibsend and MPI_Irsend through the engine; MPI_Mprobe is hytask::mpi's
// mprobe (tested with MPI_Improbe by the engine's poller), and MPI_Mrecv is MPI_Imrecv
// through the engine (its communicator is not known).
// MPI_Irecv, MPI_Isend, MPI_Issend, MPI_Ibsend and MPI_Irsend do not block: they pass
// through, and inside a task keep the registry of receives a cancelled wait may cancel
// (receives.hpp). Elsewhere every call is PMPI's.
#include <mpi.h>

#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

#include "comm/bytes_of.hpp"
#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "hytask/comm/matched_probe.hpp"
#include "hytask/comm/point_to_point.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/errors.hpp"
#include "intercept/errors.hpp"
#include "intercept/gate.hpp"
#include "intercept/posted.hpp"
#include "intercept/receives.hpp"
#include "intercept/status.hpp"

namespace {

namespace hi = hytask::intercept::detail;
namespace hm = hytask::mpi;
namespace receives = hytask::intercept::detail::receives;

// "from rank 1 (tag 5)", "from any rank (tag any)"
std::string probe_words(int source, int tag) {
  return std::string("from ") +
         (source == MPI_ANY_SOURCE ? std::string("any rank") : "rank " + std::to_string(source)) +
         " (tag " + (tag == MPI_ANY_TAG ? std::string("any") : std::to_string(tag)) + ")";
}

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
  return hi::run_posted({"MPI_Bsend", "MPI_Ibsend", dest, tag, comm, hm::detail::bytes_of(count, type)},
                        [&](MPI_Request* r) { return PMPI_Ibsend(buf, count, type, dest, tag, comm, r); });
}

int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!hi::intercepting()) return PMPI_Rsend(buf, count, type, dest, tag, comm);
  return hi::run_posted({"MPI_Rsend", "MPI_Irsend", dest, tag, comm, hm::detail::bytes_of(count, type)},
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

// hytask::mpi::sendrecv: the receive posted first, as MPI_Sendrecv's own implementations
// do; both waited for (the send buffer is the program's again when the call returns) before
// an error is given.
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  if (!hi::intercepting())
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status);
  try {
    hi::give_status(status, hm::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                                         recvcount, recvtype, source, recvtag, comm));
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Sendrecv", comm, e);
  }
}

// hytask::mpi::sendrecv_replace: the receive overwrites the send data while the send may
// still be in flight (one worker: the matching send may be another task's on this rank), so
// the send goes from a copy.
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype type, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  if (!hi::intercepting())
    return PMPI_Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, status);
  try {
    hi::give_status(status, hm::sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm));
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Sendrecv_replace", comm, e);
  }
}

// Probe and receive the probed message in one match: another task's receive cannot take the
// message this task probed, as it can between MPI_Probe and MPI_Recv. A cancellation of the
// task stops the probe (nothing was taken) and the call throws hytask::task_cancelled.
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Mprobe(source, tag, comm, message, status);
  try {
    const hm::matched_message m = hm::mprobe(source, tag, comm);
    *message = m.handle;
    hi::give_status(status, m.status);
    return MPI_SUCCESS;
  } catch (const hm::error& e) {
    return hi::failed("MPI_Mprobe", comm, e);
  } catch (const hytask::task_cancelled&) {
    hi::interrupted("MPI_Mprobe", probe_words(source, tag), "; no message was taken");
  }
}

// The message was matched by the probe: the receive completes (a cancellation of the task
// drains it). Its communicator is not known here: MPI_COMM_WORLD's handler decides whether
// an error is thrown or returned.
int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  if (!hi::intercepting()) return PMPI_Mrecv(buf, count, type, message, status);
  return hi::run_posted({"MPI_Mrecv", "MPI_Imrecv", -1, -1, MPI_COMM_NULL, hm::detail::bytes_of(count, type)},
                        [&](MPI_Request* r) { return PMPI_Imrecv(buf, count, type, message, r); }, status);
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Irecv(buf, count, type, source, tag, comm, request);
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
  if (rc == MPI_SUCCESS) receives::note(*request, hytask::this_task::id());
  return rc;
}

// A send's handle may be one a receive of the registry had, freed where the library did not
// see it: it must not be taken for a receive.
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Isend(buf, count, type, dest, tag, comm, request);
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) receives::forget(*request);
  return rc;
}

int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Issend(buf, count, type, dest, tag, comm, request);
  const int rc = PMPI_Issend(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) receives::forget(*request);
  return rc;
}

int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
  const int rc = PMPI_Ibsend(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) receives::forget(*request);
  return rc;
}

int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  if (!hi::intercepting()) return PMPI_Irsend(buf, count, type, dest, tag, comm, request);
  const int rc = PMPI_Irsend(buf, count, type, dest, tag, comm, request);
  if (rc == MPI_SUCCESS) receives::forget(*request);
  return rc;
}

}  // extern "C"
