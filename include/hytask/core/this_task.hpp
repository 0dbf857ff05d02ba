// this_task: what the calling task can ask about, and do to, itself.
#pragma once

#include <cstdint>
#include <string_view>

namespace hytask {

namespace this_task {

// Lets other ready tasks run. A task is suspended and resumed after the ready work its
// worker can find; from main (outside any task) one ready task is run, if there is one.
// When nothing else is ready, a task's yield polls pending communication as an idle worker
// would, so a loop that yields until another task's message arrives ends on one worker too.
void yield();

// Inside a long computation: lets pending communication progress (polls MPI when operations
// are pending; a load when nothing is). Workers poll between tasks, and a sleeping backstop
// thread polls when none has for HYTASK_BACKSTOP_US, so this is rarely needed; it helps a task
// that computes for much longer than a transfer takes and runs where the backstop is off.
void poll();

// True when called from inside a task body.
bool inside_task();

// The name given at spawn ("" when none, or outside a task).
std::string_view name();

// A number unique to the task within this runtime (0 outside a task).
std::uint64_t id();

// True when the calling task has been cancelled: its task_group, or the group of a task it
// descends from, was cancelled (hytask/core/task_group.hpp), or the whole job was
// (hytask/comm/cancel.hpp). From main: whether the job is cancelled. One load while nothing
// is cancelled. (The body of a parallel_for sees the cancellation of no task: look before
// and after the loop.)
bool cancelled() noexcept;

}  // namespace this_task

// Index of the calling worker thread, in [0, worker_count()); main is worker 0.
// Returns -1 on threads that are not workers. A task may move to another worker after
// it suspends.
int worker_index();
unsigned worker_count();

}  // namespace hytask
