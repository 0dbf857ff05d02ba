// Errors of hytask's MPI calls reach the program as exceptions, whatever error handler the
// program gave its communicators.
//
// MPI reports an error through a communicator's error handler before the call returns, and
// the default one, MPI_ERRORS_ARE_FATAL, aborts the job. hytask's own communicator returns
// errors, but a program passes its own communicators too, and MPICH raises errors found by
// MPI_Testsome (a truncated receive, say) on MPI_COMM_WORLD, not on the request's
// communicator. So hytask replaces the handlers that abort (MPI_ERRORS_ARE_FATAL, and
// MPI_ERRORS_ABORT) on MPI_COMM_WORLD, MPI_COMM_SELF and every communicator the program hands
// it by a forwarding handler: during a call hytask makes (a calling_mpi guard on the thread)
// it returns, and the error becomes an exception carrying the call and the peer; during the
// program's own calls it prints the error and aborts the job, as the replaced handler would.
// MPI_ERRORS_RETURN and the program's own handlers stay (MPICH does not let a handler call
// another one). WORLD and SELF get their handlers back when the runtime ends.
#pragma once

#include <mpi.h>

namespace hytask::mpi::detail {

// Marks the MPI calls hytask makes on this thread, for the forwarding handler.
class calling_mpi {
 public:
  calling_mpi() noexcept;
  ~calling_mpi();
  calling_mpi(const calling_mpi&) = delete;
  calling_mpi& operator=(const calling_mpi&) = delete;

 private:
  bool outer_;
};

// Whether this thread is inside one of hytask's MPI calls (a calling_mpi guard is alive): a
// layer that intercepts the program's MPI calls lets these through untouched.
bool in_hytask_call() noexcept;

// Whether an error on comm would end a call of the program: its handler aborts
// (MPI_ERRORS_ARE_FATAL, MPI_ERRORS_ABORT) or is the forwarding one that replaced such a
// handler. False for MPI_ERRORS_RETURN and the program's own handlers, whose calls get the
// error code back. A communicator that is not valid is judged by MPI_COMM_WORLD's handler,
// where MPI raises errors about it. Call it where MPI may be called.
bool errors_abort(MPI_Comm comm);

// How many errors the forwarding handler has returned on this thread during hytask's calls:
// compared before and after a call on requests whose communicator is unknown, it tells
// whether MPI raised the error on a communicator whose handler aborts.
unsigned long forwarded_errors() noexcept;

// On a thread that may call MPI: puts the forwarding handler on comm, once per communicator
// (a communicator the program created from one that has it inherits it).
void forward_errors(MPI_Comm comm);

// MPI_COMM_WORLD and MPI_COMM_SELF: at start (forward) and end (restore) of the runtime.
void forward_predefined_errors();
void restore_predefined_errors();

}  // namespace hytask::mpi::detail
