// Cancellation (hytask/core/task_group.hpp): groups, which tasks are cancelled, and what the
// scheduler does about it.
//
// A task is cancelled when the group it was spawned into, or the group of one of its
// ancestors, was cancelled — or the whole job was (cancel_job: every task of this rank, until
// end_job_cancel; the MPI layer's collective and broadcast cancellations). Found by walking the task's
// parents (alive: a parent completes after its children), reading only fields written at
// spawn. The walk happens only while the scheduler's cancel_active() is non-zero: the number
// of cancelled groups that still have tasks, plus one while the job is cancelled. So nothing
// is looked at until something is cancelled. Loop participants and tasks a layer marks
// uncancellable (make_uncancellable) are never cancelled.
//
// A cancelled task is failed with a marker error (cancel_marker): the failure machinery then
// skips its body if it has not started, skips its successors transitively (also those
// spawned later on the same memory, until the parent's wait_all), and the scheduler reports
// it to the parent not as a failure but as the group's cause, if there is one.
#pragma once

#include <exception>

#include "core/face.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

class scheduler;

// The error of cancelled tasks; never reaches the program.
const std::exception_ptr& cancel_marker() noexcept;

// Whether t (running or about to start or complete) is cancelled. Call only while
// cancel_active(): it walks t's ancestors.
bool task_cancelled(const detail::task* t) noexcept;

// At spawn, for a task with task_options::group (before it is submitted).
void join_group(detail::task* t, detail::group_state* g) noexcept;

// run(): t is about to start while cancel_active(); skips it when cancelled. Returns whether
// its body should run.
bool start_or_skip(detail::task* t) noexcept;

// Where t completes, before its successor list closes, while cancel_active() or its group is
// cancelled: a task completing after its group (or an ancestor's) was cancelled counts as
// cancelled — its successors, and tasks that name it later, are skipped. Its status is not
// written after the close: add_edge reads it from other threads.
void mark_if_cancelled(detail::task* t) noexcept;

// For a completing task that failed: whether the failure is a cancellation — it was cancelled,
// or a task_cancelled (an interrupted MPI call) left its body while it was.
bool failed_by_cancellation(detail::task* t) noexcept;

// Where a task spawned into a group completes (after complete() marked it, if its group was
// cancelled), before its parent counts it: reports the group's cause to its parent if it was
// cancelled, cancels its group when it failed, and leaves the group. Reads t's status only.
void leave_group(detail::task* t) noexcept;

// cancel_job, job_cancelled, make_uncancellable, set_cancel_hook, is_task_cancelled: the
// face (core/face.hpp), for the layers above.

}  // namespace hytask::core
