// task_group: tasks that can be cancelled together.
//
// A task spawned with task_options::group joins the group; the tasks it spawns belong to it
// too (cancelling a group cancels every descendant of its tasks). cancel() stops what has not
// started and tells what has:
//
// ```cpp context=tasks
// hytask::task_group search;
// for (int part = 0; part < 8; ++part)
//   hytask::spawn({.group = &search}, [&search, part] {
//     for (int step = 0; step < 1000 && !hytask::this_task::cancelled(); ++step)
//       if (step == 500 && part == 3) search.cancel();  // found it: stop the others
//   });
// hytask::wait_all();  // returns normally: cancelling is not failing
// ```
//
// - A task of a cancelled group that has not started is skipped: its body does not run.
// - A started task runs on; hytask::this_task::cancelled() becomes true in it (and in every
//   task of the group), so it can return early. A blocking MPI call (hytask::mpi::recv,
//   wait...) it is suspended in is interrupted — a receive is cancelled, a send drained —
//   and throws hytask::task_cancelled, as does such a call made after the cancellation.
//   The calls spawn and yield (this_task) are cancellation points: in a cancelled task
//   they throw task_cancelled too (not in main), which ends the body as a cancellation.
// - Successors (by dependencies) of cancelled tasks are skipped too, whatever their group,
//   and so are tasks spawned later that depend on them, until their parent's wait_all: a
//   task never reads what a cancelled one did not write. A task of the group that completes
//   after cancel() counts as cancelled.
// - wait_all returns normally once the cancelled tasks are done — or rethrows the exception
//   that caused the cancellation: cancel(cause), or the first exception a task of the group
//   threw (a task that throws cancels its group, as TBB's task_group does).
// - Counts stay right: cancelled tasks complete (as no-ops), their parents' wait_all and the
//   throttle see them go, their versions and bound requests are released.
//
// Cost: nothing until a group is cancelled (a flag tested where a task starts and
// completes); this_task::cancelled() is one load then. The group may be destroyed before its
// tasks complete; it is not reusable once cancelled (make a new one).
#pragma once

#include <exception>

namespace hytask {

namespace detail {
struct group_state;
}

class task_group {
 public:
  task_group();
  ~task_group();
  task_group(const task_group&) = delete;
  task_group& operator=(const task_group&) = delete;

  // Cancels the group's tasks (thread-safe; from any thread, a task of the group included).
  // Only the first call counts.
  void cancel() noexcept;
  // The same; the wait_all that covers the group's tasks rethrows `cause`.
  void cancel(std::exception_ptr cause) noexcept;
  bool cancelled() const noexcept;

  detail::group_state* state() const noexcept { return state_; }

 private:
  detail::group_state* state_;
};

}  // namespace hytask
