// The progress loop: the hooks through which the scheduler's workers poll (they ask the access
// mode, comm/access.hpp), and the loop of the progress thread (multiple mode) or the MPI
// thread (funneled mode): run queued operations, one round of the progress policy, sleep on
// the thread word until the round's timeout, a post, a nudge or stop.
#include <cstdint>

#include "comm/comm.hpp"
#include "core/face.hpp"
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

core::poll_result comm_system::hook_entry(void* self, unsigned worker, bool idle) {
  return static_cast<comm_system*>(self)->access_->worker_poll(worker, idle);
}

bool comm_system::has_pending_entry(void* self, unsigned worker) {
  return static_cast<comm_system*>(self)->access_->worker_has_pending(worker);
}

void comm_system::run_commands_entry(void* self) { static_cast<comm_system*>(self)->run_commands(); }

void comm_system::thread_main(bool is_mpi_thread) {
  // The funneled MPI thread exists before the trace and the workers: it idles until start()
  // (nothing can be submitted before), so that it sees both set up.
  for (;;) {
    const std::uint32_t seen = word_.load();
    if (started_.load(std::memory_order_acquire) || stopping_.load(std::memory_order_acquire)) break;
    word_.wait(seen, -1);
  }
  if (trace::enabled()) trace::set_thread(1000, is_mpi_thread ? "MPI thread" : "progress thread");
  core::set_timer_slack(policy_->timer_slack_ns());
  // Serialized mode: held while this thread may be inside MPI, never while it sleeps.
  serial_lock* const serial = is_mpi_thread ? access_->serial() : nullptr;
  for (;;) {
    const std::uint32_t seen = word_.load();
    // The request is taken before the commands are run: a poster queues its command, then
    // asks, and wakes this thread only if no request was pending. Taken after them, a
    // request left by an earlier nudge could swallow the wake-up of a command queued between
    // the two, and this thread would sleep with it queued (a hang seen in CI, one run in a
    // few hundred under load).
    const bool asked = word_.take_poll_request();
    if (serial) serial->lock();
    if (is_mpi_thread) run_commands();
    // Funneled: while a worker idles with operations pending, the MPI thread polls for it
    // (comm/access.cpp) instead of following the progress policy.
    if (is_mpi_thread && access_->mpi_thread_serves()) {
      if (serial) serial->unlock();
      continue;
    }
    long timeout = policy_->round(asked);
    if (serial) serial->unlock();
    if (stopping_.load(std::memory_order_acquire) && !has_work()) break;
    if (stopping_.load(std::memory_order_acquire)) timeout = 1000000;  // draining: keep polling
    if (timeout < 0) {
      // Parked until an operation is registered: announce it, then look again (against the
      // poster's register-then-look, no registration is missed).
      thread_parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() != 0) timeout = policy_->park_timeout();
    }
    if (word_.load() == seen) word_.wait(seen, timeout);
    thread_parked_.store(false, std::memory_order_relaxed);
    policy_->woke();
  }
  if (is_mpi_thread) {
    if (serial) serial->lock();
    finalise();
    if (serial) serial->unlock();
  }
}

}  // namespace hytask::mpi::detail
