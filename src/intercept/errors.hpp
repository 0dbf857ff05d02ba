// What a failed MPI call made inside a task gives the program.
//
// The communicator's error handler decides, as it does for a plain MPI call:
// - a handler that aborts (MPI_ERRORS_ARE_FATAL, the default, or MPI_ERRORS_ABORT; hytask
//   replaced it by its forwarding one): the call throws a hytask::mpi::error naming the
//   program's call, the peer and the tag, as hytask::mpi:: calls do. The task fails, its
//   successors are skipped, and wait_all rethrows it — the job is not aborted from inside a
//   task while other tasks run;
// - MPI_ERRORS_RETURN, or a handler of the program's own (which MPI has called already):
//   the error code is returned, as MPI specifies.
#pragma once

#include <mpi.h>

#include <string>

#include "hytask/comm/error.hpp"

namespace hytask::intercept::detail {

// The error code of e for the program, or a hytask::mpi::error naming `call` thrown.
int failed(const char* call, MPI_Comm comm, const mpi::error& e);

// Throws a hytask::mpi::error for the program's `call`: "hytask: <call> inside a task
// failed: <what>"; `what` describes the operation, the task and MPI's error.
[[noreturn]] void raise(const char* call, int code, int peer, int tag, const std::string& what);

// Throws the hytask::task_cancelled of the program's `call`, interrupted because its task was
// cancelled: "hytask: <call> <what> in task 'name': cancelled with its task
// (hytask::task_group)<then>"; `what` names the operation, `then` says what became of it.
[[noreturn]] void interrupted(const char* call, const std::string& what, const std::string& then);

// "in task 'name'" or "in an unnamed task".
std::string task_words();

}  // namespace hytask::intercept::detail
