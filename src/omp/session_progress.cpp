#include "omp/session_progress.hpp"

#include <pthread.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/period_ceiling.hpp"
#include "platform/clock.hpp"
#include "platform/futex.hpp"
#include "platform/thread_name.hpp"
#include "omp/layer.hpp"

namespace hytask::omp::detail {

progress_thread::progress_thread(mpi::detail::engine& e, std::int64_t min_ns, std::int64_t max_ns,
                                 bool ompt, bool task_hooks, int workers)
    : engine_(e), period_(min_ns, max_ns), ompt_(ompt), task_hooks_(task_hooks), idle_(workers) {
  timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (timer_ < 0)
    throw std::runtime_error(std::string("hytask::omp::session: timerfd_create failed (") +
                             std::strerror(errno) + "): the progress thread needs one file descriptor");
  thread_ = std::thread([this] { run(); });
  cpu_clock_known_ = pthread_getcpuclockid(thread_.native_handle(), &cpu_clock_) == 0;
}

progress_thread::~progress_thread() {
  stop_.store(true, std::memory_order_release);
  wake();
  arm(1);
  thread_.join();
  ::close(timer_);
}

std::uint64_t progress_thread::cpu_ns() const noexcept {
  timespec t{};
  if (!cpu_clock_known_ || clock_gettime(cpu_clock_, &t) != 0) return 0;
  return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

void progress_thread::arm(std::int64_t ns) noexcept {
  itimerspec t{};
  t.it_value = core::to_timespec(ns);
  timerfd_settime(timer_, 0, &t, nullptr);
}

void progress_thread::arm_at(std::int64_t deadline) noexcept {
  while (arming_.test_and_set(std::memory_order_acquire)) {
  }
  itimerspec t{};
  t.it_value = core::to_timespec(deadline);
  timerfd_settime(timer_, TFD_TIMER_ABSTIME, &t, nullptr);
  the_layer().thread_wakes_at.store(deadline, std::memory_order_relaxed);
  arming_.clear(std::memory_order_release);
}

void progress_thread::retime(bool start, std::int64_t now) noexcept {
  const layer& L = the_layer();
  if (!retime_due(L, start, start ? 1 : 0, now)) return;  // another boundary moved it
  arm_at(now + (start ? L.thread_backstop_ns.load(std::memory_order_relaxed) : layer::idle_grace_ns));
}

void progress_thread::wake() noexcept {
  word_.fetch_add(1, std::memory_order_release);
  core::futex_wake(word_, 1);
}

void progress_thread::registered() noexcept {
  // The engine counted the request as pending (seq_cst) before this looks: against the
  // thread's announce-then-look below, no registration is missed. The first hand-over that
  // finds it parked arms the timer; `armed_` is cleared before the thread parks, so a timer
  // armed under a stale look at `parked_` only makes a spurious wake.
  if (parked_.load(std::memory_order_seq_cst) && !armed_.exchange(true, std::memory_order_acq_rel))
    arm(std::max<std::int64_t>(1, the_layer().poll_delay_ns));
}

void progress_thread::openmp_thread_waits() noexcept {
  if (!waiter_.load(std::memory_order_relaxed)) waiter_.store(true, std::memory_order_relaxed);
  if (dozing_.load(std::memory_order_relaxed) && dozing_.exchange(false, std::memory_order_acq_rel))
    wake();
}

void progress_thread::run() {
  core::name_this_thread("hytask-omp");
  core::set_timer_slack(core::poll_timer_slack_ns);
  const std::int64_t aside_max = 16 * period_.max();
  std::int64_t aside_sleep = period_.max();
  std::uint64_t polls_seen = engine_.polls();
  mpi::detail::period_ceiling ceiling(period_.max());
  for (;;) {
    const std::uint32_t seen = word_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) break;
    if (engine_.pending() == 0) {
      ceiling.ended(core::now_ns());
      period_.set_max(ceiling.value());
      armed_.store(false, std::memory_order_relaxed);
      parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() == 0 && !stop_.load(std::memory_order_acquire)) {
        std::uint64_t fired;
        while (::read(timer_, &fired, sizeof fired) < 0 && errno == EINTR) {
        }
      }
      parked_.store(false, std::memory_order_relaxed);
      // Woken with nothing pending (completed meanwhile by another poller, a stop), no
      // exchange is timed: the ceiling learns from the ones this thread waited through.
      if (engine_.pending() != 0) ceiling.started(core::now_ns());
      period_.reset();  // a new exchange: its handshake wants an early poll
      aside_sleep = period_.max();
      polls_seen = engine_.polls();
      continue;
    }
    if (task_hooks_) {
      // Wrapped tasks run: their boundaries poll in line, without taking the core from the
      // compute. Sleep on the timer while they keep coming; a task that runs a backstop
      // period without one, or the team running none for layer::idle_grace_ns, wakes it.
      layer& L = the_layer();
      const std::int64_t now = core::now_ns();
      const std::int64_t b = beside_tasks_backstop(L, period_.max());
      const std::int64_t last = L.last_boundary_ns.load(std::memory_order_relaxed);
      if (L.tasks_running.load(std::memory_order_seq_cst) > 0 && now - last < b) {
        L.thread_backstop_ns.store(b, std::memory_order_relaxed);
        arm_at(last + b);
        L.thread_beside_tasks.store(true, std::memory_order_seq_cst);
        if (L.tasks_running.load(std::memory_order_seq_cst) > 0 && !stop_.load(std::memory_order_acquire)) {
          std::uint64_t fired;
          while (::read(timer_, &fired, sizeof fired) < 0 && errno == EINTR) {
          }
        }
        L.thread_beside_tasks.store(false, std::memory_order_seq_cst);
        aside_.fetch_add(1, std::memory_order_relaxed);
        polls_seen = engine_.polls();
        if (L.tasks_running.load(std::memory_order_relaxed) == 0) period_.reset();  // the team idles
        continue;
      }
    }
    long sleep_ns;
    const bool others = engine_.polls() != polls_seen;
    const bool waiter = waiter_.exchange(false, std::memory_order_acq_rel);
    if (ompt_ && others && !waiter) {
      aside_.fetch_add(1, std::memory_order_relaxed);
      sleep_ns = static_cast<long>(aside_sleep);
      aside_sleep = std::min(aside_max, 2 * aside_sleep);
    } else {
      // An OpenMP thread may have gone idle waiting for these requests: from now on latency
      // counts, as for hytask's idle workers; the period grows again while nothing completes.
      if (waiter) period_.reset();
      // An exchange is being posted: poll once its hand-overs have stopped.
      if (const std::int64_t wait = the_layer().poll_wait(core::now_ns()); wait > 0) {
        if (word_.load(std::memory_order_acquire) == seen) core::futex_wait(word_, seen, static_cast<long>(wait));
        continue;
      }
      const std::uint64_t before = engine_.polls();
      const core::poll_result r = engine_.poll();
      if (engine_.polls() != before) polls_.fetch_add(1, std::memory_order_relaxed);
      sleep_ns = static_cast<long>(period_.after(r));
      // The OpenMP threads left a core idle since the last look (waiting for these requests,
      // typically): polling costs the compute nothing, and latency counts.
      if (idle_.idle()) {
        period_.reset();
        sleep_ns = static_cast<long>(period_.min());
      }
      aside_sleep = period_.max();
    }
    polls_seen = engine_.polls();
    dozing_.store(sleep_ns > period_.max(), std::memory_order_release);
    if (word_.load(std::memory_order_acquire) == seen) core::futex_wait(word_, seen, sleep_ns);
    dozing_.store(false, std::memory_order_relaxed);
  }
}

}  // namespace hytask::omp::detail
