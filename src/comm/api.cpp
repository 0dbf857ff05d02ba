// The public hytask::mpi functions: each builds an operation, hands it to the comm system,
// and (for blocking calls) waits for it.
#include <mpi.h>

#include <climits>
#include <string>

#include "comm/cancel.hpp"
#include "comm/channels.hpp"
#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "core/layer.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/errors.hpp"
#include "hytask/mpi.hpp"

namespace hytask::mpi {

using detail::kind;
using detail::operation;

namespace {

detail::comm_system& sys(const char* what) {
  if (auto* c = detail::comm_system::instance()) return *c;
  if (!core::scheduler_alive())
    throw usage_error(std::string("hytask::mpi::") + what +
                      " called with no hytask::runtime alive: construct one in main first");
  throw usage_error(std::string("hytask::mpi::") + what +
                    ": the runtime did not initialise MPI (HYTASK_MPI=off, or auto without an "
                    "MPI launcher): start the program with mpiexec, or set HYTASK_MPI=on");
}

std::size_t bytes_of(MPI_Datatype t, MPI_Count count) {
  if (t == MPI_DATATYPE_NULL || count <= 0) return 0;
  int size = 0;
  MPI_Type_size(t, &size);
  return static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
}

operation* make(kind k, MPI_Comm comm) {
  auto* op = new operation;
  op->what = k;
  op->comm = comm;
  return op;
}

}  // namespace

error make_error(const operation* op) {
  const bool collective = detail::is_collective(op->what);
  return error(detail::op_name(op), op->error, op->peer, collective ? -1 : op->tag,
               "hytask::mpi: " + detail::describe_failure(op, op->error));
}

namespace {

void throw_if_failed(operation* op) {
  if (op->error != MPI_SUCCESS) throw make_error(op);
  if (op->cancelled) detail::throw_cancelled(op);
}

// What a task that depends on op (after) or holds it (bind) fails with, if anything.
std::exception_ptr failure_of(const operation* op) {
  if (op->error != MPI_SUCCESS) return std::make_exception_ptr(make_error(op));
  if (op->cancelled) return detail::cancelled_error(op);
  return nullptr;
}

// A count MPI cannot take: above INT_MAX without a large-count call for it.
void refuse_large_count(operation* op) {
  const MPI_Count n = op->scount > op->rcount ? op->scount : op->rcount;
  if (n <= INT_MAX || detail::large_count_call(op->what)) return;
  const bool collective = detail::is_collective(op->what);
  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);
  std::string msg = "hytask::mpi: " + detail::describe(op) + ": the count " + std::to_string(n) +
                    " is above INT_MAX (" + std::to_string(INT_MAX) + "), and ";
  msg += version >= 4 ? std::string("MPI has no large-count form of ") + detail::mpi_call_name(op->what)
                      : "this MPI library implements MPI " + std::to_string(version) + "." +
                            std::to_string(subversion) + ", without MPI 4.0's large-count calls (" +
                            detail::mpi_call_name(op->what) + "_c)";
  msg += ": split the data into several operations, or describe it with a derived datatype "
         "(MPI_Type_contiguous) and a smaller count";
  const error e(detail::mpi_call_name(op->what), MPI_ERR_COUNT, op->peer, collective ? -1 : op->tag, msg);
  detail::release(op);
  throw e;
}

// Posts op and waits for it; throws on failure.
void run_blocking(const char* what, operation* op) {
  detail::comm_system& c = sys(what);
  refuse_large_count(op);
  struct owner {
    operation* op;
    ~owner() { detail::release(op); }
  } hold{op};
  c.submit(op);
  c.wait(op);
  throw_if_failed(op);
}

request run_nonblocking(const char* what, operation* op) {
  detail::comm_system& c = sys(what);
  refuse_large_count(op);
  request r(op);  // owns op, also when submit throws
  c.submit(op);
  return r;
}

operation* p2p(kind k, const void* sbuf, void* rbuf, MPI_Count count, MPI_Datatype type, int peer,
               int tag, MPI_Comm comm) {
  operation* op = make(k, comm);
  op->sbuf = sbuf;
  op->rbuf = rbuf;
  op->scount = op->rcount = count;
  op->stype = op->rtype = type;
  op->peer = peer;
  op->tag = tag;
  op->bytes = bytes_of(type, count);
  return op;
}

}  // namespace

// ---- communicator ----------------------------------------------------------------------

MPI_Comm comm_world() { return sys("comm_world").world(); }

progress_counters progress_stats() { return sys("progress_stats").counters(); }

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

// ---- requests --------------------------------------------------------------------------

bool request::test() {
  if (!op_) return true;
  bool done = sys("request::test").test(op_);
  if (done) throw_if_failed(op_);
  return done;
}

void request::wait() {
  if (!op_) return;
  sys("request::wait").wait(op_);
  throw_if_failed(op_);
}

MPI_Status request::status() const {
  MPI_Status st{};
  if (op_ && op_->state.load(std::memory_order_acquire) == detail::op_complete) st = op_->status;
  return st;
}

MPI_Request request::native() const noexcept {
  if (op_ && op_->state.load(std::memory_order_acquire) == detail::op_posted) return op_->req;
  return MPI_REQUEST_NULL;
}

void wait(request& r) { r.wait(); }

void waitall(std::span<request> requests) {
  // Wait for all before reporting the first failure, as MPI_Waitall does.
  std::exception_ptr first;
  for (request& r : requests) {
    try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

namespace {

// A waiter that ends a task's hold when the operation completes.
struct hold_node : hytask::detail::event_waiter {
  hytask::detail::task* t;
  operation* op;
};

void bind_one(hytask::detail::task* t, operation* op) {
  detail::acquire(op);
  auto* n = new hold_node;
  n->t = t;
  n->op = op;
  detail::watch_cancellation(op, t);  // the task is held until op completes: alive meanwhile
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<hold_node*>(e);
    std::exception_ptr err = failure_of(self->op);
    hytask::detail::task* task = self->t;
    detail::release(self->op);
    delete self;
    core::release_hold(task, std::move(err));
  };
  op->done.add_waiter(n);
}

}  // namespace

void bind(std::span<request> requests) {
  sys("bind");
  hytask::detail::task* t = core::hold_current();
  if (t == nullptr) {  // outside a task: nothing to hold, so wait
    waitall(requests);
    return;
  }
  // hold_current took one hold; take one per further request.
  bool first = true;
  for (request& r : requests) {
    if (!r.valid()) continue;
    if (!first) core::hold_current();
    first = false;
    bind_one(t, r.get());
  }
  if (first) core::release_hold(t);  // no valid request
}

void bind(request& r) { bind(std::span<request>(&r, 1)); }
void bind(request&& r) {
  request keep(std::move(r));
  bind(keep);
}

namespace detail {

namespace {
struct after_node : hytask::detail::event_waiter {
  hytask::detail::task* t;
  operation* op;
  bool high;
};
}  // namespace

void attach_after(hytask::detail::spawn_context& ctx, operation* const* ops, std::size_t n) {
  comm_system& c = sys("after");
  for (std::size_t i = 0; i < n; ++i) {
    operation* op = ops[i];
    if (op == nullptr) continue;
    if (op->state.load(std::memory_order_acquire) == op_complete) {
      std::exception_ptr err = failure_of(op);
      if (!err) continue;
      ctx.add_external();  // fails the task now, but only after the spawn has settled
      hytask::detail::release_external(ctx.target(), std::move(err));
      continue;
    }
    ctx.add_external();
    acquire(op);
    auto* node = new after_node;
    node->t = ctx.target();
    node->op = op;
    node->high = c.comm_priority();
    node->fire = [](hytask::detail::event_waiter* e) {
      auto* self = static_cast<after_node*>(e);
      std::exception_ptr err = failure_of(self->op);
      hytask::detail::task* t = self->t;
      bool high = self->high;
      release(self->op);
      delete self;
      hytask::detail::release_external(t, std::move(err), high);
    };
    op->done.add_waiter(node);
  }
}

}  // namespace detail

// ---- ordering --------------------------------------------------------------------------

void channel_access::apply(hytask::detail::spawn_context& ctx) const {
  ctx.region(token, bytes, access_mode::inout);
  if (detail::comm_system::instance()->comm_priority()) ctx.raise_priority();
}

channel_access send_channel(int dest, int tag, MPI_Comm comm) {
  sys("send_channel");
  return {detail::declare_channel(comm, dest, tag, false), 1};
}

channel_access recv_channel(int source, int tag, MPI_Comm comm) {
  sys("recv_channel");
  return {detail::declare_channel(comm, source, tag, false) + 1, 1};
}

channel_access channel(int peer, int tag, MPI_Comm comm) {
  sys("channel");
  return {detail::declare_channel(comm, peer, tag, false), 2};
}

channel_access collective(MPI_Comm comm) {
  sys("collective");
  return {detail::declare_channel(comm, -1, -1, true), 1};
}

// ---- point-to-point --------------------------------------------------------------------

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

request adopt(MPI_Request native, const char* call, int peer, int tag, MPI_Comm comm) {
  operation* op = make(kind::adopted, comm);
  op->req = native;
  op->call_name = call != nullptr ? call : "MPI request";
  op->peer = peer;
  op->tag = tag;
  if (native == MPI_REQUEST_NULL) {  // nothing to wait for (MPI_PROC_NULL, a finished request)
    request r(op);
    MPI_Status st{};
    st.MPI_SOURCE = MPI_ANY_SOURCE;
    st.MPI_TAG = MPI_ANY_TAG;
    st.MPI_ERROR = MPI_SUCCESS;
    detail::complete(op, &st, MPI_SUCCESS);
    return r;
  }
  return run_nonblocking("adopt", op);
}

// ---- collectives -----------------------------------------------------------------------

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
  op->bytes = sbuf == MPI_IN_PLACE ? bytes_of(rtype, rcount) : bytes_of(stype, scount);
  if (op->bytes == 0) op->bytes = bytes_of(rtype, rcount);
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

}  // namespace hytask::mpi
