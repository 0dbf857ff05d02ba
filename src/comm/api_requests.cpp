// hytask::mpi's requests (hytask/comm/request.hpp): test, wait and a request's status, waitall,
// adopting a request MPI returned to the program, and the error an operation failed with.
#include <mpi.h>

#include <exception>
#include <span>

#include "comm/api_common.hpp"

namespace hytask::mpi {

using detail::kind;
using detail::make;
using detail::operation;
using detail::run_nonblocking;
using detail::sys;
using detail::throw_if_failed;

error make_error(const operation* op) {
  const bool collective = detail::is_collective(op->what);
  return error(detail::op_name(op), op->error, op->peer, collective ? -1 : op->tag,
               "hytask::mpi: " + detail::describe_failure(op, op->error));
}

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

}  // namespace hytask::mpi
