// The session's progress thread (HYTASK_PROGRESS=thread, a session's default): a thread that
// sleeps between polls of the session's requests, on the adaptive period of comm's thread
// policy (HYTASK_PROGRESS_MIN_US .. MAX_US, halved when a poll completes something, doubled
// when it does not), and parks while nothing is pending.
//
// That longest period follows the exchanges (comm/period_ceiling.hpp): while they last
// longer than eight of HYTASK_PROGRESS_MAX_US, it is an eighth of their typical length, up
// to four times the setting, so that a long exchange does not cost the compute a wake every
// 500 us.
//
// Beside OMPT callbacks it stands aside: at each look, if someone else polled since its last one
// (OpenMP threads at scheduling points, main waiting in commtask::finalize), it does not poll and
// sleeps twice as long, up to 16 times HYTASK_PROGRESS_MAX_US; when nobody did — every OpenMP
// thread is in a long task, or idle without callbacks — it polls, and is back on its own period. A
// wake costs the core's compute 20-50 us on these virtual machines (docs/design/comm.md, the
// backstop), hence the long sleeps while it is not needed. While the OpenMP threads leave a core
// idle (platform/idle_meter.hpp: waiting for these requests, typically) it polls on its shortest
// period: a poll costs the compute nothing then, and it sees completions at once. An OpenMP thread
// that starts a wait (barrier, taskwait) while requests are pending may go idle with no callback
// after it: it wakes the thread from a long sleep, and the thread's next look polls, on its
// shortest period again.
//
// It never polls within HYTASK_OMP_POLL_DELAY_US of a hand-over (layer.hpp says why). A
// parked thread is not woken by the hand-over itself either: waking it would take the core
// from the OpenMP thread that is about to post the exchange's next request (measured: the
// two posts of a halo exchange 0.2 ms apart instead of 0.02), so a hand-over arms a timer
// (timerfd) that wakes it once the delay has passed. A parked thread sleeps on that timer;
// with the delay at 0 the timer is armed to fire at once.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "comm/progress_engine.hpp"
#include "comm/polling_period.hpp"
#include "platform/idle_meter.hpp"

namespace hytask::omp::detail {

class progress_thread {
 public:
  // `ompt`: OMPT callbacks poll too (stand aside while they do).
  // `workers`: the OpenMP threads that compute (platform/idle_meter.hpp).
  // `task_hooks`: wrapped libgomp tasks poll at their starts and ends (sleep while one runs).
  progress_thread(mpi::detail::engine& e, std::int64_t min_ns, std::int64_t max_ns, bool ompt,
                  bool task_hooks, int workers);
  ~progress_thread();  // stops and joins
  progress_thread(const progress_thread&) = delete;
  progress_thread& operator=(const progress_thread&) = delete;

  // A request was handed over (registered with the engine): wakes the thread if it is parked.
  void registered() noexcept;
  // An OpenMP thread starts a wait while requests are pending (an OMPT callback).
  void openmp_thread_waits() noexcept;

  // Wrapped libgomp tasks (task_hooks): a task started (`start`), or the team's last running
  // one ended, at `now`, and the timer is due for a move (layer.hpp: retime_due).
  void retime(bool start, std::int64_t now) noexcept;

  std::uint64_t polls() const noexcept { return polls_.load(std::memory_order_relaxed); }
  std::uint64_t aside() const noexcept { return aside_.load(std::memory_order_relaxed); }
  // The CPU time the thread has used so far (ns; 0 if the clock cannot be read).
  std::uint64_t cpu_ns() const noexcept;

 private:
  void run();
  void wake() noexcept;
  void arm(std::int64_t ns) noexcept;  // the parked thread's timer: fires in `ns` (>= 1)
  void arm_at(std::int64_t deadline) noexcept;  // the timer fires at `deadline` (now_ns)

  mpi::detail::engine& engine_;
  mpi::detail::polling_period period_;
  const bool ompt_;
  const bool task_hooks_;
  core::idle_meter idle_;
  std::atomic<std::uint32_t> word_{0};   // the thread sleeps on it; wakes and stop bump it
  std::atomic<bool> parked_{false};      // sleeping with nothing pending, on the timer
  std::atomic<bool> armed_{false};       // a hand-over armed the timer during this park
  int timer_ = -1;                       // timerfd
  std::atomic<bool> dozing_{false};      // in a long sleep, standing aside
  std::atomic<bool> waiter_{false};      // an OpenMP thread started a wait since the last look
  std::atomic<bool> stop_{false};
  std::atomic_flag arming_ = ATOMIC_FLAG_INIT;  // one timer setting at a time (arm_at)
  std::atomic<std::uint64_t> polls_{0}, aside_{0};
  std::thread thread_;
  clockid_t cpu_clock_{};  // the thread's CPU-time clock
  bool cpu_clock_known_ = false;
};

}  // namespace hytask::omp::detail
