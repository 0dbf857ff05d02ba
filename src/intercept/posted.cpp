#include "intercept/posted.hpp"

#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "core/face.hpp"
#include "hytask/errors.hpp"
#include "intercept/errors.hpp"
#include "intercept/status.hpp"

namespace hytask::intercept::detail {

namespace {

using mpi::detail::operation;

// Submits op (which the caller's reference keeps alive) and waits: the task suspends.
void submit_and_wait(operation* op) {
  mpi::detail::comm_system& sys = *mpi::detail::comm_system::instance();
  sys.submit(op);
  sys.wait(op);
}

struct owner {
  operation* op;
  ~owner() { mpi::detail::release(op); }
};

}  // namespace

int run_posted(const posted_call& c, int (*post)(void*, MPI_Request*), void* arg, MPI_Status* status) {
  auto* op = new operation;
  const owner hold{op};
  op->what = mpi::detail::kind::custom;
  op->call_name = c.posted_as;
  op->peer = c.peer;
  op->tag = c.tag;
  op->comm = c.comm;
  op->bytes = c.bytes;
  op->post = post;
  op->call_arg = arg;
  submit_and_wait(op);
  if (op->error == MPI_SUCCESS) {
    if (status != nullptr) give_status(status, op->status);
    return MPI_SUCCESS;
  }
  if (!mpi::detail::errors_abort(c.comm)) return op->error;
  raise(c.call, op->error, c.peer, c.tag, mpi::detail::describe_failure(op, op->error));
}

polled_result run_polled(const polled_call& c, int (*test)(void*, int*, MPI_Status*), void* arg) {
  auto* op = new operation;
  const owner hold{op};
  op->what = mpi::detail::kind::polled;
  op->call_name = c.call;
  op->scount = c.requests;
  op->peer = c.peer;
  op->tag = c.tag;
  op->comm = c.comm;
  op->test = test;
  op->cancel = c.cancel;
  op->call_arg = arg;
  mpi::detail::comm_system& sys = *mpi::detail::comm_system::instance();
  try {
    sys.submit(op);
  } catch (const hytask::task_cancelled&) {
    // A cancelled task posts nothing (it throws before posting), but a wait must not leave
    // the program's requests pending, nor its receive buffers written after the task is
    // gone. So it is submitted as the runtime's own, interrupted at once: its hook runs as
    // it is posted, and it ends when the requests have completed.
    if (c.cancel == nullptr) throw;
    if (core::task* me = core::current_task()) {  // for the watchdog's report
      op->task_name = me->name;
      op->task_id = core::id_of(me);
    }
    op->cancel_requested.store(true, std::memory_order_release);
    sys.submit(op, true);
  }
  sys.wait(op);
  return {op->error, op->cancel_issued};
}

}  // namespace hytask::intercept::detail
