// HYTASK_PROGRESS=workers (the default): busy workers poll every HYTASK_POLL_EVERY task
// switches, and at any switch once HYTASK_POLL_US have passed since their last poll while
// operations are pending. Workers poll only between tasks, so while every worker runs a
// long task a transfer would move once per task: the backstop (HYTASK_BACKSTOP_US; not in
// masteronly mode) is a thread that looks every period while operations are pending and
// polls only if no worker has polled since its last look.
//
// A wake costs the core's compute 20-50 us on a virtual machine (measured: a thread waking
// every 500 us slowed the compute beside it by 10 %), so:
//   - while the workers poll (the look was not needed), the period doubles, up to 16x;
//   - while its own polls complete nothing (a receive waiting for a message not sent yet)
//     it doubles up to 4x only: a large transfer over TCP moves only when polled and
//     completes nothing until its end (16x took an 8 MiB transfer beside 10 ms tasks from
//     55-87 % overlap to 31 %);
//   - a poll that completes something, or one after a new operation, brings it back to
//     HYTASK_BACKSTOP_US;
//   - while operations come and go (an exchange in progress) it keeps looking at its period
//     even when none is pending at this instant, so that posts need not wake it: a wake per
//     message (a system call on the poster's side, a context switch on the backstop's) took
//     a ping-pong from 1.3 to 5 us per round trip. Only after 50 ms without any pending
//     operation does it park until the next post;
//   - asleep for longer than its shortest period, it may be woken by a post (a transfer
//     beginning beside long tasks should not wait up to 16 periods for its first poll) —
//     unless the workers were polling at its last look (they will see the post), and at
//     most once per 16 periods, so that a steady exchange does not pay a wake per message.
#include <algorithm>
#include <atomic>

#include "comm/comm.hpp"
#include "platform/clock.hpp"
#include "comm/progress_policy.hpp"
#include "comm/progress_registry.hpp"

namespace hytask::mpi::detail {
namespace {

class progress_workers final : public progress_policy_impl {
 public:
  explicit progress_workers(comm_system& c)
      : progress_policy_impl(c),
        backstop_(c.config().backstop_us > 0 && c.mode() != hytask::mpi_mode::masteronly),
        period_ns_(static_cast<std::int64_t>(c.config().backstop_us) * 1000),
        wait_(period_ns_) {}

  unsigned busy_every() const override { return c_.config().poll_every; }
  std::int64_t busy_every_ns() const override {
    return static_cast<std::int64_t>(c_.config().poll_us) * 1000;
  }
  bool wants_thread() const override { return backstop_; }
  // The backstop's sleeps need no precision: a slack of half the period lets the kernel
  // fold its wake-ups into timer interrupts that happen anyway.
  unsigned long timer_slack_ns() const override {
    return backstop_ ? c_.config().backstop_us * 500ul : core::poll_timer_slack_ns;
  }

  long round(bool asked) override {
    engine& e = c_.eng();
    if (asked) {
      e.poll();
    } else if (backstop_ && e.pending() != 0) {
      const bool fresh = reset_.exchange(false, std::memory_order_acq_rel);
      needed_ = e.polls() == polls_seen_;  // no worker polled since the last look
      if (needed_) {
        const core::poll_result r = e.poll();
        wait_ = fresh || r == core::poll_result::progressed
                    ? period_ns_
                    : std::min(busy_max(), 2 * std::min(wait_, busy_max() / 2));
      } else {
        wait_ = std::min(idle_max(), 2 * wait_);
      }
    } else if (backstop_) {
      wait_ = std::min(idle_max(), 2 * wait_);  // nothing pending
      needed_ = true;  // a post after a quiet spell may start a transfer beside long tasks
    }
    polls_seen_ = e.polls();
    if (!backstop_) return -1;
    long timeout = -1;
    const std::int64_t t = core::now_ns();
    if (e.pending() != 0) last_active_ns_ = t;
    if (t - last_active_ns_ < quiet_ns) timeout = static_cast<long>(wait_);
    wakeable_.store(needed_ && timeout > period_ns_ && t - last_post_wake_ns_ >= idle_max(),
                    std::memory_order_seq_cst);
    return timeout;
  }

  long park_timeout() override {
    if (!backstop_) return -1;
    wait_ = period_ns_;
    return static_cast<long>(wait_);
  }

  void woke() override {
    if (backstop_ && !wakeable_.exchange(false, std::memory_order_acq_rel) &&
        reset_.load(std::memory_order_relaxed))
      last_post_wake_ns_ = core::now_ns();  // woken by a post (it cleared the flag): look now
  }

  void registered() override {
    if (!backstop_) return;
    if (c_.mode() == hytask::mpi_mode::multiple && c_.thread_parked()) {
      c_.wake_thread();
      return;
    }
    // A new operation may need its handshake soon: the backstop's next sleep is its shortest
    // period, and a backstop asleep for long is woken (at most once per 16 periods).
    if (!reset_.load(std::memory_order_relaxed)) reset_.store(true, std::memory_order_release);
    if (wakeable_.load(std::memory_order_relaxed) &&
        wakeable_.exchange(false, std::memory_order_acq_rel))
      c_.wake_thread();
  }

 private:
  static constexpr std::int64_t quiet_ns = 50'000'000;  // without operations: park
  std::int64_t busy_max() const { return 4 * period_ns_; }
  std::int64_t idle_max() const { return 16 * period_ns_; }

  const bool backstop_;
  const std::int64_t period_ns_;
  // Owned by the thread.
  std::int64_t wait_;
  std::int64_t last_active_ns_ = 0, last_post_wake_ns_ = 0;
  std::uint64_t polls_seen_ = c_.eng().polls();
  bool needed_ = true;  // the last look had to poll (or found nothing pending)
  // Shared with posting threads.
  std::atomic<bool> reset_{false};     // a new operation: back to the shortest period
  std::atomic<bool> wakeable_{false};  // asleep long: the next post may wake it
};

std::unique_ptr<progress_policy_impl> make_progress_workers(comm_system& c) {
  return std::make_unique<progress_workers>(c);
}

}  // namespace

void register_progress_workers() noexcept {
  register_progress_policy(hytask::progress_policy::workers, &make_progress_workers);
}

}  // namespace hytask::mpi::detail
