// The omp layer's process-wide state: what the OMPT callbacks (ompt_tool.cpp), the session's
// progress thread (session_progress.hpp), fulfill_when and commtask share. It is a static
// object that outlives every session, because OMPT callbacks exist for the whole process:
// they look at `point_engine` and return at once while no session polls through them.
// "Point" is a scheduling point of either kind: an OMPT callback (libomp) or the start or end
// of a task wrapped by hytask's GOMP_task (libgomp, gomp_task_hook.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "comm/progress_engine.hpp"
#include "comm/operation.hpp"

namespace hytask::omp::detail {

class progress_thread;

struct layer {
  // Requests handed over (fulfill_when, commtask) and not completed yet: what a callback
  // looks at first, without touching the session.
  std::atomic<std::int64_t> outstanding{0};
  // The session's progress engine while scheduling points should poll it, else null, and the
  // callbacks using it. The session clears the pointer, then waits until `users` is 0 before
  // the engine goes: OpenMP threads outside the program's regions (libomp's pool and helper
  // threads) may be in a callback at any time.
  std::atomic<mpi::detail::engine*> point_engine{nullptr};
  std::atomic<int> users{0};
  // The engine while a session exists (fulfill_when, commtask), else null.
  std::atomic<mpi::detail::engine*> engine{nullptr};
  // The session's progress thread (HYTASK_PROGRESS=thread), else null; read by callbacks
  // under `users`.
  std::atomic<progress_thread*> thread{nullptr};
  std::int64_t point_poll_ns = 0;                    // HYTASK_OMPT_POLL_US
  std::atomic<std::int64_t> last_point_poll_ns{0};  // the rank's last poll from a point

  // HYTASK_OMP_POLL_DELAY_US: no poll until the hand-overs of a burst (an exchange's receives
  // and sends, posted by one task after another) have stopped for this long. A poll between
  // two of them can answer the peer's rendezvous before this rank's own send is posted, or
  // start this rank's bulk data before it has matched the peer's: over one ordered channel
  // (Open MPI's TCP connection per pair) the other message then waits behind the bulk data.
  std::int64_t poll_delay_ns = 0;
  std::atomic<std::int64_t> last_post_ns{0};    // the last hand-over
  std::atomic<std::int64_t> burst_start_ns{0};  // the first of the current burst
  // How long from `now` until a poll may run (<= 0: now): the burst's quiet time, at most 4
  // delays after its first hand-over.
  std::int64_t poll_wait(std::int64_t now) const noexcept {
    if (poll_delay_ns == 0) return 0;
    const std::int64_t quiet = last_post_ns.load(std::memory_order_relaxed) + poll_delay_ns;
    const std::int64_t cap = burst_start_ns.load(std::memory_order_relaxed) + 4 * poll_delay_ns;
    return (quiet < cap ? quiet : cap) - now;
  }

  // libgomp's GOMP_task interposed (gomp_task_hook.cpp): while `task_hooks` is set, tasks
  // created are wrapped; the wrapped tasks running now, and the last start or end of one
  // while requests were outstanding.
  std::atomic<bool> task_hooks{false};
  std::atomic<int> tasks_running{0};
  std::atomic<std::int64_t> last_boundary_ns{0};  // within a microsecond
  // The session's thread asleep on its timer beside wrapped tasks (session_progress.hpp), when
  // the timer fires, and the period a task start pushes it to. Read by task boundaries
  // without `users`, so that they take it only when they poll or must move the timer.
  std::atomic<bool> thread_beside_tasks{false};
  std::atomic<std::int64_t> thread_wakes_at{0};
  std::atomic<std::int64_t> thread_backstop_ns{0};
  // How long the team may run no wrapped task before the thread counts it idle.
  static constexpr std::int64_t idle_grace_ns = 50'000;
  // The typical length of the team's long tasks (those of at least half the thread's
  // backstop), a moving average over their ends while requests were outstanding; 0 before.
  std::atomic<std::int64_t> long_task_ns{0};

  std::atomic<std::uint64_t> ompt_polls{0};  // from OMPT callbacks
  std::atomic<std::uint64_t> hook_polls{0};  // from wrapped libgomp tasks' boundaries
  std::atomic<std::uint64_t> fulfilled{0};
};

layer& the_layer() noexcept;

// Whether a wrapped task's boundary at `now` must move the session's sleeping thread's timer:
// a start (`start`) pushes it back to a backstop period from now once it is within half the
// idle grace of firing; the end of the team's last running task (`running` 0) brings it
// within the grace. So short tasks reset the timer every half grace at most, not twice each.
inline bool retime_due(const layer& L, bool start, int running, std::int64_t now) noexcept {
  if (!L.thread_beside_tasks.load(std::memory_order_seq_cst)) return false;
  const std::int64_t at = L.thread_wakes_at.load(std::memory_order_relaxed);
  return start ? at - now < layer::idle_grace_ns / 2 : running == 0 && at > now + layer::idle_grace_ns;
}

// A wrapped task of `ns` ended: a long one (at least half the backstop) moves the average.
inline void note_long_task(layer& L, std::int64_t ns) noexcept {
  if (2 * ns < L.thread_backstop_ns.load(std::memory_order_relaxed)) return;
  const std::int64_t old = L.long_task_ns.load(std::memory_order_relaxed);
  L.long_task_ns.store(old == 0 ? ns : old + (ns - old) / 8, std::memory_order_relaxed);
}

// How long the session's thread sleeps beside wrapped tasks without a boundary, given its
// longest period `b`: b, or past the team's typical long task when that is up to 1.6 b long.
// A thread that woke after b beside tasks of about b polled a moment before the task's end
// polled anyway, a wake per task for nothing; tasks much longer than b still get its polls
// every b.
inline std::int64_t beside_tasks_backstop(const layer& L, std::int64_t b) noexcept {
  const std::int64_t typical = L.long_task_ns.load(std::memory_order_relaxed);
  const std::int64_t past = typical + typical / 4;
  return typical > 0 && past > b && past <= 2 * b ? past : b;
}

// The engine of the live session; throws hytask::usage_error naming `what` without one.
mpi::detail::engine& need_session(const char* what);

// A request handed over: counts it as outstanding until it completes (a waiter on its
// completion), notes the time (poll_delay_ns), and tells the session's progress thread.
void hand_over(mpi::detail::operation* op);

// Prints "hytask: rank R: <message>" and ends the job (MPI_Abort): an error that arises on
// the polling thread, where nobody can catch it.
[[noreturn]] void fatal(const std::string& message);

// A wrapped task starts (`starts`) or ends: counts it, and polls in line (gomp_task_hook.cpp).
// Returns the time it read (0: none, no request outstanding); an end is given its start's.
std::int64_t task_boundary(bool starts, std::int64_t started);
// Whether this process's calls of GOMP_task reach hytask's definition (it forwards them).
bool gomp_task_hooked() noexcept;

// The OMPT tool (ompt_tool.cpp).
bool ompt_tool_running() noexcept;    // the OpenMP runtime started hytask's tool
const char* ompt_tool_state() noexcept;  // why it runs or not, one line

}  // namespace hytask::omp::detail
