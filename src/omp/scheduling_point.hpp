// A poll at an OpenMP task scheduling point, shared by the two ways hytask reaches one: OMPT
// callbacks (libomp, ompt_tool.cpp) and libgomp's task entry point interposed
// (gomp_task_hook.cpp). Without outstanding requests, or without a session polling through
// scheduling points, it is one load.
#pragma once

#include <atomic>
#include <cstdint>

#include "platform/clock.hpp"
#include "omp/layer.hpp"
#include "omp/session_progress.hpp"

namespace hytask::omp::detail {

// Whether a scheduling point at `now` should poll: HYTASK_OMPT_POLL_US have passed since the
// rank's last poll from one, and no request was handed over within HYTASK_OMP_POLL_DELAY_US.
inline bool poll_due(const layer& L, std::int64_t now) noexcept {
  return now - L.last_point_poll_ns.load(std::memory_order_relaxed) >= L.point_poll_ns &&
         L.poll_wait(now) <= 0;
}

// Polls `e` from a scheduling point (a due one: poll_due), counting a poll made in `polls`.
// Call with `users` held.
inline void point_poll(layer& L, mpi::detail::engine& e, std::int64_t now, std::atomic<std::uint64_t>& polls) {
  L.last_point_poll_ns.store(now, std::memory_order_relaxed);
  const std::uint64_t before = e.polls();
  e.poll();  // returns at once if another thread is polling
  if (e.polls() != before) polls.fetch_add(1, std::memory_order_relaxed);
}

// Polls when requests are outstanding, HYTASK_OMPT_POLL_US have passed since the rank's last
// poll from a scheduling point, and none was handed over within HYTASK_OMP_POLL_DELAY_US.
// `starts_wait`: the thread starts a wait (barrier, taskwait) and may go idle with no
// scheduling point after it; the progress thread is told.
inline void scheduling_point(bool starts_wait) {
  layer& L = the_layer();
  if (L.outstanding.load(std::memory_order_relaxed) <= 0) return;
  const std::int64_t now = core::now_ns();
  const bool due = poll_due(L, now);
  if (!due && !starts_wait) return;
  L.users.fetch_add(1, std::memory_order_seq_cst);
  if (mpi::detail::engine* e = L.point_engine.load(std::memory_order_seq_cst)) {
    if (starts_wait)
      if (progress_thread* t = L.thread.load(std::memory_order_acquire)) t->openmp_thread_waits();
    if (due) point_poll(L, *e, now, L.ompt_polls);
  }
  L.users.fetch_sub(1, std::memory_order_release);
}

}  // namespace hytask::omp::detail
