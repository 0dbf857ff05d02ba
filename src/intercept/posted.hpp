// MPI calls that hytask::mpi has no call for, run through hytask's progress engine so that
// the task suspends while they are pending (comm's operation kinds `custom` and `polled`).
//
// - run_posted: a blocking call whose non-blocking variant exists (MPI_Bsend as MPI_Ibsend,
//   MPI_Scan as MPI_Iscan, ...). `post` posts it; it is called where MPI may be called — on
//   this thread in multiple mode, on hytask's MPI thread in funneled mode, by main in
//   masteronly mode — and the request then completes like any of hytask's. These calls are
//   not order-checked (comm's check knows only its own kinds).
// - run_polled: a wait on the program's own requests. `test` tests them in place
//   (PMPI_Testall, ...) where MPI may be called, once at once and then every round of the
//   engine's poller, until it sets its flag or fails; the request array stays the program's.
//   MPI_Mprobe is one too (PMPI_Improbe). A cancellation of the task interrupts it through
//   its `cancel` hook, and the wait still ends only when `test` says so: the program's
//   requests complete (cancelled receives included) before the task may go on.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <type_traits>

namespace hytask::intercept::detail {

struct posted_call {
  const char* call;       // the program's call: "MPI_Bsend"
  const char* posted_as;  // what hytask posts: "MPI_Ibsend"
  int peer;               // destination, source or root; -1 for the other collectives
  int tag;                // -1 for collectives
  MPI_Comm comm;
  std::size_t bytes;      // for the watchdog's report (comm/bytes_of.hpp)
};

// Returns MPI_SUCCESS or the error code (errors.hpp), or throws hytask::mpi::error. On
// success the request's status is given to `status` (status.hpp), unless it is null.
int run_posted(const posted_call& c, int (*post)(void*, MPI_Request*), void* arg,
               MPI_Status* status = nullptr);

template <class F>
int run_posted(const posted_call& c, F&& post, MPI_Status* status = nullptr) {
  using L = std::remove_reference_t<F>;
  auto trampoline = [](void* arg, MPI_Request* req) -> int { return (*static_cast<L*>(arg))(req); };
  return run_posted(c, +trampoline, const_cast<void*>(static_cast<const void*>(&post)), status);
}

struct polled_call {
  const char* call;  // the program's call: "MPI_Waitall"
  int requests = 0;  // how many of the program's requests it tests (the watchdog's report)
  // A probe's source, tag and communicator (MPI_COMM_NULL for a wait on requests).
  int peer = -1;
  int tag = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  // Called with the test's argument, once, when the task is cancelled while it waits (or
  // was before it called): where MPI may be called, between two tests. Null: the wait is
  // not interrupted. A cancelled task's wait is never refused: its requests must complete.
  void (*cancel)(void*) = nullptr;
};

struct polled_result {
  int error;         // MPI_SUCCESS, or the error test returned
  bool interrupted;  // the cancel hook was called
};

polled_result run_polled(const polled_call& c, int (*test)(void*, int*, MPI_Status*), void* arg);

}  // namespace hytask::intercept::detail
