// The progress loop: the hooks through which the scheduler's workers poll (they ask the access
// mode, comm/access.hpp), and the loop of the progress thread (multiple mode) or the MPI
// thread (funneled mode): run queued operations, one round of the progress policy, sleep on
// the thread word until the round's timeout, a post, a nudge or stop.
#include <cstdint>
#include <thread>

#include "comm/comm.hpp"
#include "core/layer.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {

core::progress_hooks comm_system::progress_hooks() {
  core::progress_hooks h;
  h.poll = &comm_system::hook_entry;
  h.has_pending = &comm_system::has_pending_entry;
  h.ctx = this;
  // Under every policy an idle worker polls (or asks the MPI-owning thread to): it is a
  // free core. The policies differ in what happens while every worker is busy.
  h.every = policy_->busy_every();
  h.every_ns = policy_->busy_every_ns();
  return h;
}

void comm_system::wake_thread() noexcept {
  word_->fetch_add(1, std::memory_order_release);
  core::futex_wake(*word_, 1, shared_word_);
}

core::poll_result comm_system::hook_entry(void* self, unsigned worker, bool idle) {
  return static_cast<comm_system*>(self)->access_->worker_poll(worker, idle);
}

bool comm_system::has_pending_entry(void* self, unsigned worker) {
  return static_cast<comm_system*>(self)->access_->worker_has_pending(worker);
}

void comm_system::thread_main(bool is_mpi_thread) {
  // The funneled MPI thread exists before the trace and the workers: it idles until start()
  // (nothing can be submitted before), so that it sees both set up.
  for (;;) {
    const std::uint32_t seen = word_->load(std::memory_order_acquire);
    if (started_.load(std::memory_order_acquire) || stopping_.load(std::memory_order_acquire)) break;
    core::futex_wait(*word_, seen, -1, shared_word_);
  }
  if (trace::enabled()) trace::set_thread(1000, is_mpi_thread ? "MPI thread" : "progress thread");
  core::set_timer_slack(policy_->timer_slack_ns());
  const std::int64_t spin_ns = static_cast<std::int64_t>(settings_.spin_us) * 1000;
  std::int64_t serving_since = -1;  // serving idle workers: since the last completion
  for (;;) {
    const std::uint32_t seen = word_->load(std::memory_order_acquire);
    // The request is taken before the commands are run: a poster queues its command, then
    // asks, and wakes this thread only if no request was pending. Taken after them, a
    // request left by an earlier nudge could swallow the wake-up of a command queued between
    // the two, and this thread would sleep with it queued (a hang seen in CI, one run in a
    // few hundred under load).
    const bool asked = poll_requested_.exchange(false, std::memory_order_acq_rel);
    if (is_mpi_thread) run_commands();
    if (is_mpi_thread && serves_idle_workers()) {
      // A worker idles while operations are pending: it cannot poll (access.cpp) and
      // sleeps, so this thread polls for it as an idle worker would in multiple mode: back
      // to back for HYTASK_SPIN_US after the last completion, then yielding the core between
      // polls; and it yields right after a completion, which may have woken that worker.
      // The policy's own schedule resumes once every worker is busy or nothing is pending.
      const core::poll_result r = engine_.poll();
      const std::int64_t now = core::now_ns();
      if (r == core::poll_result::progressed || serving_since < 0) serving_since = now;
      if (r != core::poll_result::progressed && now - serving_since < spin_ns) {
        for (int i = 0; i < 16; ++i) core::cpu_relax();
      } else {
        std::this_thread::yield();
      }
      continue;
    }
    serving_since = -1;
    long timeout = policy_->round(asked);
    if (stopping_.load(std::memory_order_acquire) && !has_work()) break;
    if (stopping_.load(std::memory_order_acquire)) timeout = 1000000;  // draining: keep polling
    if (timeout < 0) {
      // Parked until an operation is registered: announce it, then look again (against the
      // poster's register-then-look, no registration is missed).
      thread_parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() != 0) timeout = policy_->park_timeout();
    }
    if (word_->load(std::memory_order_acquire) == seen)
      core::futex_wait(*word_, seen, timeout, shared_word_);
    thread_parked_.store(false, std::memory_order_relaxed);
    policy_->woke();
  }
  if (is_mpi_thread) finalise();
}

bool comm_system::serves_idle_workers() const {
  if (!has_work()) return false;
  return core::any_worker_idle();
}

}  // namespace hytask::mpi::detail
