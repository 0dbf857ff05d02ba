// What the public hytask::mpi entry points (api_*.cpp) share: the comm system or the error
// that says why there is none, new operations (their size: comm/bytes_of.hpp), posting and
// waiting, the error an operation failed with.
#pragma once

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <exception>
#include <string>

#include "comm/bytes_of.hpp"
#include "comm/cancel.hpp"
#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "core/face.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/comm/request.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi::detail {

// The comm system, for the entry point `what`; a usage_error when there is none.
inline comm_system& sys(const char* what) {
  if (auto* c = comm_system::instance()) return *c;
  if (!core::scheduler_alive())
    throw usage_error(std::string("hytask::mpi::") + what +
                      " called with no hytask::runtime alive: construct one in main first");
  throw usage_error(std::string("hytask::mpi::") + what +
                    ": the runtime did not initialise MPI (HYTASK_MPI=off, or auto without an "
                    "MPI launcher): start the program with mpiexec, or set HYTASK_MPI=on");
}

// A new operation of kind k on comm (one reference: the caller's).
inline operation* make(kind k, MPI_Comm comm) {
  auto* op = new operation;
  op->what = k;
  op->comm = comm;
  return op;
}

inline void throw_if_failed(operation* op) {
  if (op->error != MPI_SUCCESS) throw make_error(op);
  if (op->cancelled) throw_cancelled(op);
}

// What a task that depends on op (after) or holds it (bind) fails with, if anything.
inline std::exception_ptr failure_of(const operation* op) {
  if (op->error != MPI_SUCCESS) return std::make_exception_ptr(make_error(op));
  if (op->cancelled) return cancelled_error(op);
  return nullptr;
}

// A count MPI cannot take: above INT_MAX without a large-count call for it.
inline void refuse_large_count(operation* op) {
  const MPI_Count n = op->scount > op->rcount ? op->scount : op->rcount;
  if (n <= INT_MAX || large_count_call(op->what)) return;
  const bool collective = is_collective(op->what);
  int version = 0, subversion = 0;
  MPI_Get_version(&version, &subversion);
  std::string msg = "hytask::mpi: " + describe(op) + ": the count " + std::to_string(n) +
                    " is above INT_MAX (" + std::to_string(INT_MAX) + "), and ";
  msg += version >= 4 ? std::string("MPI has no large-count form of ") + mpi_call_name(op->what)
                      : "this MPI library implements MPI " + std::to_string(version) + "." +
                            std::to_string(subversion) + ", without MPI 4.0's large-count calls (" +
                            mpi_call_name(op->what) + "_c)";
  msg += ": split the data into several operations, or describe it with a derived datatype "
         "(MPI_Type_contiguous) and a smaller count";
  const error e(mpi_call_name(op->what), MPI_ERR_COUNT, op->peer, collective ? -1 : op->tag, msg);
  release(op);
  throw e;
}

// Posts op and waits for it; throws on failure.
inline void run_blocking(const char* what, operation* op) {
  comm_system& c = sys(what);
  refuse_large_count(op);
  struct owner {
    operation* op;
    ~owner() { release(op); }
  } hold{op};
  c.submit(op);
  c.wait(op);
  throw_if_failed(op);
}

inline request run_nonblocking(const char* what, operation* op) {
  comm_system& c = sys(what);
  refuse_large_count(op);
  request r(op);  // owns op, also when submit throws
  c.submit(op);
  return r;
}

}  // namespace hytask::mpi::detail
