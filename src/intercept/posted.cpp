#include "intercept/posted.hpp"

#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "intercept/errors.hpp"

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

int run_posted(const posted_call& c, int (*post)(void*, MPI_Request*), void* arg) {
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
  if (op->error == MPI_SUCCESS) return MPI_SUCCESS;
  if (!mpi::detail::errors_abort(c.comm)) return op->error;
  raise(c.call, op->error, c.peer, c.tag, mpi::detail::describe_failure(op, op->error));
}

std::size_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size < 0)
    return 0;
  return static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
}

int run_polled(const char* call, int requests, int (*test)(void*, int*, MPI_Status*), void* arg) {
  auto* op = new operation;
  const owner hold{op};
  op->what = mpi::detail::kind::polled;
  op->call_name = call;
  op->scount = requests;
  op->test = test;
  op->call_arg = arg;
  submit_and_wait(op);
  return op->error;
}

}  // namespace hytask::intercept::detail
