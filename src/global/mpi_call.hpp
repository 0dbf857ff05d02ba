// Blocking MPI calls of the global layer (communicator and window set-up, flushes), made by a
// thread that may call MPI — in funneled mode the MPI thread — through the comm layer's
// `call` operations; the caller waits as for any operation (a task suspends, main runs
// tasks). Failures become hytask::mpi::error naming the call.
#pragma once

#include <functional>

#include "comm/comm.hpp"

namespace hytask::global::detail {

mpi::detail::comm_system& comm_or_throw(const char* what);

// A new operation of the layer (refs 1), named as the global dependencies' in the watchdog.
mpi::detail::operation* layer_op(mpi::detail::kind k, MPI_Comm comm);

// Posts op (the layer's own, not the running task's), waits for it, releases it, and throws
// hytask::mpi::error if it failed.
void run_and_wait(mpi::detail::operation* op);

// Runs f (returning an MPI error code) where MPI may be called, and waits for it.
void blocking_mpi(const char* name, int peer, const std::function<int()>& f);

}  // namespace hytask::global::detail
