// The core's face: everything a layer above the core (comm, global, node, intercept, omp,
// and the runtime that assembles them) may use of it. Those layers include this header and
// no other under src/core/ (scripts/check_layers.sh enforces it); the scheduler and its
// workers stay private to the core.
//
// What a layer gets:
//   - the scheduler's life (start, shutdown), for the runtime;
//   - the current task and the calling thread's place (a worker, main outside its tasks);
//   - hold/release: a task that returns before an operation it bound completes;
//   - suspend/resume: a task that waits inside a call without blocking its worker;
//   - the communication class: tasks of a type that communicated run ahead (learn_comm);
//   - progress: waking a worker to poll, the scheduling-point hooks (ext/progress_hooks.hpp);
//   - what the watchdog reads: tasks in flight, started, workers busy or idle;
//   - cancellation as seen from outside: the job's, and whether a task is cancelled;
//   - per-task extension slots: completion watches, scope state, root-wait hooks (ext/).
#pragma once

#include <cstdint>
#include <exception>

#include "core/core_settings.hpp"
#include "core/ext/progress_hooks.hpp"
#include "core/ext/root_wait.hpp"
#include "core/ext/scope_ext.hpp"
#include "core/ext/watch.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

using detail::task;

// ---- the scheduler's life (the runtime) -----------------------------------------------------
// Creates the scheduler and starts its workers; the calling thread becomes worker 0 (main).
// One at a time. The hooks are fixed for the scheduler's life.
void start_scheduler(const core_settings& settings, const progress_hooks& hooks = {});
// Waits for every task (main only), then stops the workers. Rethrows an uncollected
// exception of a root-level task.
void shutdown_scheduler();
// Destroys the scheduler (after shutdown_scheduler, or to undo a start). Idempotent.
void destroy_scheduler() noexcept;

// ---- the runtime and the calling thread -----------------------------------------------------
// A scheduler exists (between the runtime's start and its shutdown).
bool scheduler_alive() noexcept;
// The calling thread is one of the scheduler's workers (main included while it is alive).
bool on_worker() noexcept;
// The task the calling thread runs, or null (main outside its tasks, or not a worker).
task* current_task() noexcept;
// Both at once, from one look at the calling thread (posting and waiting ask for both).
struct thread_place {
  bool on_worker = false;   // a worker (main included)
  task* current = nullptr;  // the task it runs; null on main outside its tasks
};
thread_place this_thread_place() noexcept;
// The calling thread is the runtime's main, outside any task: where collective calls that
// only main may make are legal.
inline bool on_main_outside_tasks() noexcept {
  const thread_place p = this_thread_place();
  return p.on_worker && p.current == nullptr;
}
// A task's id, unique in this runtime, assigned on first use (trace and watchdog reports).
// Call from a worker.
std::uint64_t id_of(task* t);

// ---- hold and release -----------------------------------------------------------------------
// The current task will not complete before release_hold(t) (it may return first). Call from
// inside a task; returns it.
task* hold_current();
// Ends one hold; with an error, the task fails with it. From any thread.
void release_hold(task* t, std::exception_ptr error = nullptr);

// ---- suspend and resume ---------------------------------------------------------------------
// Called on another fiber once the suspending task is parked; must arrange for resume(t)
// exactly once — possibly right away.
using arm_fn = void (*)(task* t, void* arg);
// Suspends the current task (or main's root), freeing its worker for other tasks.
void suspend(arm_fn arm, void* arg);
// Makes a suspended task ready again, from any thread; `comm`: in the communication class.
void resume(task* t, bool comm = false);

// ---- the communication class ----------------------------------------------------------------
// The running task t posted a communication: tasks of its type start in the class from now.
void learn_comm(task* t);
// Puts t in the class, before it is ready (no effect when HYTASK_COMM_PRIORITY=0).
void raise_to_comm(task* t) noexcept;

// ---- progress -------------------------------------------------------------------------------
// An operation was registered: wake a sleeping worker so that someone polls.
void wake_for_progress();
// Wakes worker `index` if it sleeps (funneled: only main may call MPI).
void wake_worker(unsigned index);

// ---- what the watchdog reads ----------------------------------------------------------------
std::int64_t tasks_in_flight() noexcept;   // spawned, not completed (approximate)
std::uint64_t tasks_started() noexcept;    // sum over workers
bool any_worker_busy() noexcept;           // some worker is not idle
bool any_worker_idle() noexcept;           // some worker found no task (and may sleep)
// Tasks the spawn throttle must not count until the spawning thread does something later
// (see scheduler::set_aside); take_back counts them again.
void set_aside(std::int64_t tasks) noexcept;
void take_back(std::int64_t tasks) noexcept;

// ---- cancellation ---------------------------------------------------------------------------
// Some group or the job is cancelled: tasks may be (task_cancelled is then worth asking).
bool cancellation_active() noexcept;
// Whether t (running, or about to start or complete) is cancelled. Cheap when nothing is.
bool is_cancelled(const task* t) noexcept;
// Whether e is a hytask::task_cancelled (an MPI call interrupted by a cancellation).
bool is_task_cancelled(const std::exception_ptr& e) noexcept;
// The whole job on this rank: every task, spawned before or after, until end_job_cancel
// (which the caller makes only once no task is in flight). Thread-safe; idempotent.
void cancel_job() noexcept;
void end_job_cancel() noexcept;
bool job_cancelled() noexcept;
// While t is being spawned: it is never cancelled (e.g. a transfer whose peer sends anyway).
inline void make_uncancellable(task* t) noexcept { t->flags |= detail::flag_uncancellable; }
// How a completed task ended, for its watcher (watch_completion's callback): its body ran to
// the end, it was cancelled (skipped, or completed after its group was cancelled), or it
// failed (its body threw, or it was skipped after a predecessor failed).
enum class ending { succeeded, cancelled, failed };
ending how_it_ended(const task* t) noexcept;
// The error that makes a task not yet started count as cancelled, as a local successor of a
// cancelled task does: for release_external(t, cancelled_error()) from a layer that learns
// of a cancellation elsewhere (a predecessor on another rank).
const std::exception_ptr& cancelled_error() noexcept;
// Called after every cancellation, on the cancelling thread, to interrupt the waits the
// layer knows of (tasks suspended in MPI operations). One layer owns it.
using cancel_hook_fn = void (*)();
void set_cancel_hook(cancel_hook_fn f) noexcept;

}  // namespace hytask::core
