#include "omp/progress_thread.hpp"

#include <algorithm>

#include "core/futex.hpp"
#include "core/thread_name.hpp"

namespace hytask::omp::detail {

progress_thread::progress_thread(mpi::detail::engine& e, std::int64_t min_ns, std::int64_t max_ns,
                                 bool ompt, int workers)
    : engine_(e), period_(min_ns, max_ns), ompt_(ompt), idle_(workers) {
  thread_ = std::thread([this] { run(); });
}

progress_thread::~progress_thread() {
  stop_.store(true, std::memory_order_release);
  wake();
  thread_.join();
}

void progress_thread::wake() noexcept {
  word_.fetch_add(1, std::memory_order_release);
  core::futex_wake(word_, 1);
}

void progress_thread::registered() noexcept {
  // The engine counted the request as pending (seq_cst) before this looks: against the
  // thread's announce-then-look below, no registration is missed.
  if (parked_.load(std::memory_order_seq_cst)) wake();
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
  for (;;) {
    const std::uint32_t seen = word_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) break;
    if (engine_.pending() == 0) {
      parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() == 0 && !stop_.load(std::memory_order_acquire))
        core::futex_wait(word_, seen);
      parked_.store(false, std::memory_order_relaxed);
      period_.reset();  // a new exchange: its handshake wants an early poll
      aside_sleep = period_.max();
      polls_seen = engine_.polls();
      continue;
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
