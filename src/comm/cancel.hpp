// Cancellation in the MPI layer (issue 20): what a cancelled task's MPI calls do.
//
// The core cancels tasks (core/cancel.hpp) but knows nothing of MPI. Here: a cancelled task
// posts nothing (its call throws hytask::task_cancelled); a task of a cancelled group
// suspended in an operation, or holding one (mpi::bind), gets it cancelled if MPI can —
// receives with MPI_Cancel, probes dropped — and resumes, the call throwing task_cancelled;
// sends, collectives and one-sided operations are drained (the task waits for them: MPI
// cannot cancel them reliably, and their buffers must outlive them).
//
// The core's cancel hook asks the progress engine to scan: the poller, which alone
// completes operations (so their waiting tasks are alive), cancels those whose waiter is
// cancelled. An operation whose task is cancelled before it waits is cancelled by the task.
#pragma once

#include <exception>

#include "hytask/core/detail/task.hpp"

namespace hytask::mpi::detail {

struct operation;

// Whether t is cancelled; one load while nothing is.
bool task_is_cancelled(const hytask::detail::task* t) noexcept;

// The exception of an operation that was cancelled, or refused to a cancelled task.
std::exception_ptr cancelled_error(const operation* op);
[[noreturn]] void throw_cancelled(const operation* op);

// Before task t waits for op, or holds it (bind): a cancellation of t interrupts op.
void watch_cancellation(operation* op, hytask::detail::task* t);

// The core's cancel hook, while the comm system lives.
void install_cancel_hook();
void uninstall_cancel_hook();

}  // namespace hytask::mpi::detail
