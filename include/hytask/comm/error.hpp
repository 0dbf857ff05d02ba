// hytask::mpi::error: an MPI call made through hytask::mpi failed.
//
// Every error of an operation posted through hytask::mpi becomes this exception, whatever
// the communicator and its error handler: the runtime's (comm_world()) returns errors, and on
// the program's own communicators (and MPI_COMM_WORLD, where MPICH reports errors found at
// completion) hytask installs a handler that returns errors during hytask's calls and does
// what the previous handler did during the program's own (docs/mpi.md, "Errors"). The
// exception is thrown where the operation is waited for or, for a task that depended on it
// with after(), from the wait_all that covers that task.
#pragma once

#include <stdexcept>
#include <string>

namespace hytask::mpi {

class error : public std::runtime_error {
 public:
  error(std::string call, int code, int peer, int tag, const std::string& message)
      : std::runtime_error(message), call_(std::move(call)), code_(code), peer_(peer), tag_(tag) {}

  const std::string& call() const noexcept { return call_; }  // e.g. "MPI_Isend"
  int code() const noexcept { return code_; }                 // the MPI error code
  int peer() const noexcept { return peer_; }                 // rank, root, or -1
  int tag() const noexcept { return tag_; }                   // -1 for collectives

 private:
  std::string call_;
  int code_, peer_, tag_;
};

}  // namespace hytask::mpi
