#include "comm/operation.hpp"

#include <climits>
#include <string>

#include "comm/trace_messages.hpp"
#include "core/face.hpp"
#include "platform/assert.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {

const char* mpi_call_name(kind k) {
  switch (k) {
    case kind::send: return "MPI_Isend";
    case kind::ssend: return "MPI_Issend";
    case kind::recv: return "MPI_Irecv";
    case kind::probe: return "MPI_Iprobe";
    case kind::barrier: return "MPI_Ibarrier";
    case kind::bcast: return "MPI_Ibcast";
    case kind::reduce: return "MPI_Ireduce";
    case kind::allreduce: return "MPI_Iallreduce";
    case kind::gather: return "MPI_Igather";
    case kind::gatherv: return "MPI_Igatherv";
    case kind::scatter: return "MPI_Iscatter";
    case kind::scatterv: return "MPI_Iscatterv";
    case kind::allgather: return "MPI_Iallgather";
    case kind::allgatherv: return "MPI_Iallgatherv";
    case kind::alltoall: return "MPI_Ialltoall";
    case kind::alltoallv: return "MPI_Ialltoallv";
    case kind::reduce_scatter: return "MPI_Ireduce_scatter";
    case kind::reduce_scatter_block: return "MPI_Ireduce_scatter_block";
    case kind::scan: return "MPI_Iscan";
    case kind::exscan: return "MPI_Iexscan";
    case kind::neighbor_allgather: return "MPI_Ineighbor_allgather";
    case kind::neighbor_allgatherv: return "MPI_Ineighbor_allgatherv";
    case kind::neighbor_alltoall: return "MPI_Ineighbor_alltoall";
    case kind::neighbor_alltoallv: return "MPI_Ineighbor_alltoallv";
    case kind::mprobe: return "MPI_Improbe";
    case kind::mrecv: return "MPI_Imrecv";
    case kind::start_send: return "MPI_Start";
    case kind::start_recv: return "MPI_Start";
    case kind::rget: return "MPI_Rget";
    case kind::rput: return "MPI_Rput";
    case kind::call: return "MPI call";
    case kind::adopted: return "MPI request";
    case kind::custom: return "MPI call";
    case kind::polled: return "MPI test";
  }
  return "MPI_?";
}

const char* op_name(const operation* op) {
  return (op->what == kind::call || op->what == kind::adopted || op->what == kind::custom ||
          op->what == kind::polled) &&
                 op->call_name != nullptr
             ? op->call_name
             : mpi_call_name(op->what);
}

bool is_collective(kind k) {
  return k != kind::send && k != kind::ssend && k != kind::recv && k != kind::probe &&
         k != kind::mprobe && k != kind::mrecv && k != kind::start_send && k != kind::start_recv &&
         k != kind::rget && k != kind::rput && k != kind::call && k != kind::adopted &&
         k != kind::custom && k != kind::polled;
}

namespace {

// Counts above INT_MAX: MPI 4's large-count calls, for the operations that have one count per
// buffer (the v-variants take arrays of int counts).
int post_large(operation* op) {
#if MPI_VERSION >= 4
  MPI_Request* r = &op->req;
  switch (op->what) {
    case kind::send:
      return MPI_Isend_c(op->sbuf, op->scount, op->stype, op->peer, op->tag, op->comm, r);
    case kind::ssend:
      return MPI_Issend_c(op->sbuf, op->scount, op->stype, op->peer, op->tag, op->comm, r);
    case kind::recv:
      return MPI_Irecv_c(op->rbuf, op->rcount, op->rtype, op->peer, op->tag, op->comm, r);
    case kind::bcast:
      return MPI_Ibcast_c(op->rbuf, op->rcount, op->rtype, op->peer, op->comm, r);
    case kind::reduce:
      return MPI_Ireduce_c(op->sbuf, op->rbuf, op->scount, op->stype, op->op, op->peer, op->comm, r);
    case kind::allreduce:
      return MPI_Iallreduce_c(op->sbuf, op->rbuf, op->scount, op->stype, op->op, op->comm, r);
    case kind::gather:
      return MPI_Igather_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount, op->rtype,
                           op->peer, op->comm, r);
    case kind::scatter:
      return MPI_Iscatter_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount, op->rtype,
                            op->peer, op->comm, r);
    case kind::allgather:
      return MPI_Iallgather_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount, op->rtype,
                              op->comm, r);
    case kind::alltoall:
      return MPI_Ialltoall_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount, op->rtype,
                             op->comm, r);
    case kind::reduce_scatter_block:
      return MPI_Ireduce_scatter_block_c(op->sbuf, op->rbuf, op->rcount, op->rtype, op->op,
                                         op->comm, r);
    case kind::scan:
      return MPI_Iscan_c(op->sbuf, op->rbuf, op->scount, op->stype, op->op, op->comm, r);
    case kind::exscan:
      return MPI_Iexscan_c(op->sbuf, op->rbuf, op->scount, op->stype, op->op, op->comm, r);
    case kind::neighbor_allgather:
      return MPI_Ineighbor_allgather_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount,
                                       op->rtype, op->comm, r);
    case kind::neighbor_alltoall:
      return MPI_Ineighbor_alltoall_c(op->sbuf, op->scount, op->stype, op->rbuf, op->rcount,
                                      op->rtype, op->comm, r);
    case kind::mrecv:
      return MPI_Imrecv_c(op->rbuf, op->rcount, op->rtype, &op->message, r);
    default:
      return MPI_ERR_COUNT;
  }
#else
  (void)op;
  return MPI_ERR_COUNT;
#endif
}

}  // namespace

bool large_count_call(kind k) {
#if MPI_VERSION >= 4
  switch (k) {
    case kind::send: case kind::ssend: case kind::recv: case kind::bcast: case kind::reduce:
    case kind::allreduce: case kind::gather: case kind::scatter: case kind::allgather:
    case kind::alltoall: case kind::reduce_scatter_block: case kind::scan: case kind::exscan:
    case kind::neighbor_allgather: case kind::neighbor_alltoall: case kind::mrecv:
      return true;
    default:
      return false;
  }
#else
  (void)k;
  return false;
#endif
}

int post_now(operation* op) {
  HYTASK_ASSERT(op->state.load(std::memory_order_relaxed) == op_created,
                "an operation is posted once: states move forward, created -> posted -> complete");
  if (op->scount > INT_MAX || op->rcount > INT_MAX) return post_large(op);
  MPI_Request* r = &op->req;
  const int sc = static_cast<int>(op->scount), rc = static_cast<int>(op->rcount);
  switch (op->what) {
    case kind::send:
      return MPI_Isend(op->sbuf, sc, op->stype, op->peer, op->tag, op->comm, r);
    case kind::ssend:
      return MPI_Issend(op->sbuf, sc, op->stype, op->peer, op->tag, op->comm, r);
    case kind::recv:
      return MPI_Irecv(op->rbuf, rc, op->rtype, op->peer, op->tag, op->comm, r);
    case kind::probe:
      return MPI_SUCCESS;  // tested with MPI_Iprobe by the poller
    case kind::barrier:
      return MPI_Ibarrier(op->comm, r);
    case kind::bcast:
      return MPI_Ibcast(op->rbuf, rc, op->rtype, op->peer, op->comm, r);
    case kind::reduce:
      return MPI_Ireduce(op->sbuf, op->rbuf, sc, op->stype, op->op, op->peer, op->comm, r);
    case kind::allreduce:
      return MPI_Iallreduce(op->sbuf, op->rbuf, sc, op->stype, op->op, op->comm, r);
    case kind::gather:
      return MPI_Igather(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype, op->peer,
                         op->comm, r);
    case kind::gatherv:
      return MPI_Igatherv(op->sbuf, sc, op->stype, op->rbuf, op->rcounts, op->rdispls,
                          op->rtype, op->peer, op->comm, r);
    case kind::scatter:
      return MPI_Iscatter(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype,
                          op->peer, op->comm, r);
    case kind::scatterv:
      return MPI_Iscatterv(op->sbuf, op->scounts, op->sdispls, op->stype, op->rbuf, rc,
                           op->rtype, op->peer, op->comm, r);
    case kind::allgather:
      return MPI_Iallgather(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype,
                            op->comm, r);
    case kind::allgatherv:
      return MPI_Iallgatherv(op->sbuf, sc, op->stype, op->rbuf, op->rcounts, op->rdispls,
                             op->rtype, op->comm, r);
    case kind::alltoall:
      return MPI_Ialltoall(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype,
                           op->comm, r);
    case kind::alltoallv:
      return MPI_Ialltoallv(op->sbuf, op->scounts, op->sdispls, op->stype, op->rbuf, op->rcounts,
                            op->rdispls, op->rtype, op->comm, r);
    case kind::reduce_scatter:
      return MPI_Ireduce_scatter(op->sbuf, op->rbuf, op->rcounts, op->rtype, op->op, op->comm, r);
    case kind::reduce_scatter_block:
      return MPI_Ireduce_scatter_block(op->sbuf, op->rbuf, rc, op->rtype, op->op, op->comm, r);
    case kind::scan:
      return MPI_Iscan(op->sbuf, op->rbuf, sc, op->stype, op->op, op->comm, r);
    case kind::exscan:
      return MPI_Iexscan(op->sbuf, op->rbuf, sc, op->stype, op->op, op->comm, r);
    case kind::neighbor_allgather:
      return MPI_Ineighbor_allgather(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype, op->comm, r);
    case kind::neighbor_allgatherv:
      return MPI_Ineighbor_allgatherv(op->sbuf, sc, op->stype, op->rbuf, op->rcounts, op->rdispls,
                                      op->rtype, op->comm, r);
    case kind::neighbor_alltoall:
      return MPI_Ineighbor_alltoall(op->sbuf, sc, op->stype, op->rbuf, rc, op->rtype, op->comm, r);
    case kind::neighbor_alltoallv:
      return MPI_Ineighbor_alltoallv(op->sbuf, op->scounts, op->sdispls, op->stype, op->rbuf,
                                     op->rcounts, op->rdispls, op->rtype, op->comm, r);
    case kind::mprobe:
      return MPI_SUCCESS;  // tested with MPI_Improbe by the poller
    case kind::mrecv:
      return MPI_Imrecv(op->rbuf, rc, op->rtype, &op->message, r);
    case kind::start_send:
    case kind::start_recv:
      return MPI_Start(r);  // req: the persistent request, set by its owner
    case kind::rget:
      return MPI_Rget(op->rbuf, rc, op->rtype, op->peer, op->disp, rc, op->rtype, op->win, r);
    case kind::rput:
      return MPI_Rput(op->sbuf, sc, op->stype, op->peer, op->disp, sc, op->stype, op->win, r);
    case kind::call:
      *r = MPI_REQUEST_NULL;
      return op->call(op->call_arg);
    case kind::adopted:
      return MPI_SUCCESS;  // the program posted it
    case kind::custom:
      return op->post(op->call_arg, r);
    case kind::polled:
      return MPI_SUCCESS;  // tested by the poller, with op->test
  }
  return MPI_ERR_OTHER;
}

void complete(operation* op, const MPI_Status* status, int error) {
  HYTASK_ASSERT(op->state.load(std::memory_order_relaxed) != op_complete,
                "an operation completes once: a second completion would set its event again "
                "and overwrite the status its waiter may be reading");
  HYTASK_ASSERT(op->refs.load(std::memory_order_relaxed) > 0,
                "an operation is completed by a holder of a reference (the engine's, the poster's)");
  if (status) op->status = *status;
  op->error = error;
  // A polled operation's status is no request's: its hook tells the waiter what was cancelled.
  if (status != nullptr && error == MPI_SUCCESS && op->what != kind::polled &&
      op->cancel_requested.load(std::memory_order_acquire)) {
    int flag = 0;
    MPI_Test_cancelled(status, &flag);  // else it completed before MPI could cancel it
    op->cancelled = flag != 0;
  }
  op->state.store(op_complete, std::memory_order_release);
  if (trace::enabled()) {
    const std::uint64_t t = trace::now();
    const char* cat = op->internal ? "mpi-runtime" : "mpi";
    const auto after = static_cast<std::int64_t>(op->posted_ns ? t - op->posted_ns : 0);
    trace::message m;
    if (op->what == kind::recv && status != nullptr && error == MPI_SUCCESS && !op->cancelled &&
        trace_receive_completed(op, *status, m))
      trace::receive(cat, t, op->task_id, op->peer, after, m);  // with the message's identity
    else
      trace::instant("complete", cat, t, op->task_id, {"peer", op->peer}, {"after_ns", after});
  }
  // The watch is taken first: the event's waiters may release the last reference to op.
  operation::any_watch* w = op->any.exchange(nullptr, std::memory_order_acq_rel);
  op->done.set();
  if (w != nullptr) w->fire(w);
}

void interrupt_polled(operation* op) {
  HYTASK_ASSERT(op->what == kind::polled && op->state.load(std::memory_order_relaxed) != op_complete,
                "only a pending polled operation is interrupted by its cancel hook");
  if (op->cancel_issued || op->cancel == nullptr) return;
  op->cancel_issued = true;
  op->cancel(op->call_arg);
}

void complete_cancelled(operation* op) {
  HYTASK_ASSERT(op->state.load(std::memory_order_relaxed) != op_posted || op->what == kind::probe ||
                    op->what == kind::mprobe,
                "an operation is completed as cancelled by hytask alone only when MPI has no "
                "request of it: never posted, or a probe; a posted request completes through MPI");
  op->cancelled = true;
  op->status = MPI_Status{};
  op->status.MPI_SOURCE = MPI_ANY_SOURCE;
  op->status.MPI_TAG = MPI_ANY_TAG;
  complete(op, nullptr, MPI_SUCCESS);
}

void acquire(operation* op) noexcept {
  [[maybe_unused]] const int before = op->refs.fetch_add(1, std::memory_order_relaxed);
  HYTASK_ASSERT(before > 0, "a reference to an operation is taken from one still held, never "
                            "from one already deleted");
}

void release(operation* op) noexcept {
  const int before = op->refs.fetch_sub(1, std::memory_order_acq_rel);
  HYTASK_ASSERT(before > 0, "an operation's references are released once each: the count "
                            "never goes below zero");
  if (before == 1) {
    if (operation::any_watch* w = op->any.exchange(nullptr, std::memory_order_acq_rel)) w->discard(w);
    delete op;
  }
}

std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return "error " + std::to_string(code);
  int cls = 0;
  MPI_Error_class(code, &cls);
  char cls_text[MPI_MAX_ERROR_STRING];
  int cls_len = 0;
  std::string out(text, static_cast<std::size_t>(len));
  if (cls != code && MPI_Error_string(cls, cls_text, &cls_len) == MPI_SUCCESS)
    out = std::string(cls_text, static_cast<std::size_t>(cls_len)) + ": " + out;
  return out;
}

namespace {

std::string peer_text(const operation* op) {
  if (op->what == kind::send || op->what == kind::ssend || op->what == kind::start_send)
    return std::string(op->what == kind::start_send ? " of a persistent send" : "") + " to rank " +
           std::to_string(op->peer) + " (tag " + std::to_string(op->tag);
  if (op->what == kind::mrecv)  // peer, tag: the matched message's source and tag
    return " of the message matched from rank " + std::to_string(op->peer) + " (tag " +
           std::to_string(op->tag);
  if (op->what == kind::rget || op->what == kind::rput)
    return std::string(op->what == kind::rget ? " from" : " to") + " rank " +
           std::to_string(op->peer) + " (displacement " + std::to_string(op->disp);
  if (op->what == kind::call)  // MPI_Send_init, MPI_Improbe...: the peer when there is one
    return op->peer < 0 ? std::string(" (blocking")
                        : " with rank " + std::to_string(op->peer) + " (blocking, tag " +
                              (op->tag == MPI_ANY_TAG ? std::string("any") : std::to_string(op->tag));
  if (op->what == kind::polled && op->comm == MPI_COMM_NULL)  // scount: how many requests it tests
    return " (" + std::to_string(op->scount) + " request(s) of the program";
  if (op->what == kind::custom && op->comm == MPI_COMM_NULL)  // MPI_Imrecv: no communicator known
    return " (a matched message";
  if (op->what == kind::custom && op->peer < 0) return " (collective";
  if (op->what == kind::adopted || op->what == kind::custom)
    return op->peer < 0 ? std::string(" (posted by the program")
                        : " with rank " + std::to_string(op->peer) + " (tag " +
                              (op->tag == MPI_ANY_TAG ? std::string("any") : std::to_string(op->tag));
  if (op->what == kind::recv || op->what == kind::probe || op->what == kind::polled ||  // MPI_Mprobe
      op->what == kind::mprobe || op->what == kind::start_recv)
    return std::string(op->what == kind::start_recv ? " of a persistent receive" : "") + " from " +
           (op->peer == MPI_ANY_SOURCE ? std::string("any rank") : "rank " + std::to_string(op->peer)) +
           " (tag " + (op->tag == MPI_ANY_TAG ? std::string("any") : std::to_string(op->tag));
  if (op->peer < 0 && is_collective(op->what)) return " (collective";  // no root
  return " (root " + std::to_string(op->peer);
}

}  // namespace

std::string describe(const operation* op) {
  std::string s = op_name(op);
  s += peer_text(op);
  s += op->what == kind::polled ? std::string(")") : ", " + std::to_string(op->bytes) + " bytes)";
  if (op->task_name) s += std::string(" in task '") + op->task_name + "'";
  else if (op->task_id != 0) s += " in an unnamed task (id " + std::to_string(op->task_id) + ")";
  else s += " from main";
  return s;
}

std::string describe_failure(const operation* op, int code) {
  return describe(op) + ": " + error_text(code);
}

}  // namespace hytask::mpi::detail
