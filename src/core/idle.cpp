// Idling: what a worker does with nothing to run (poll, spin, sleep), and the busy worker's polls.
#include "core/scheduler.hpp"

#include <thread>

#include "core/cpu.hpp"
#include "core/futex.hpp"
#include "core/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

// ---- idling --------------------------------------------------------------------------

void scheduler::idle(worker* w) {
  flush_counts(w);
  if (!w->idle_now.load(std::memory_order_relaxed)) w->idle_now.store(true, std::memory_order_relaxed);
  // Outstanding operations: an idle worker polls them, back to back for HYTASK_SPIN_US
  // after it last ran a task or saw an operation complete, then yielding its core between
  // polls. It does not sleep while operations it may poll are pending: it has nothing else
  // to do, and a sleeping poller adds its sleep to every message it waits for — the peer
  // answers a ping-pong just after the poller dozed off, and both drift into long sleeps.
  // This is what a blocking MPI call does; the yield leaves the core to other threads when
  // it is oversubscribed. With nothing pending it spins briefly, then sleeps until woken.
  const std::int64_t spin_ns = static_cast<std::int64_t>(settings_.spin_us) * 1000;
  bool delegated = false;  // another thread polls while this worker idles: it may sleep
  if (hooks_.poll != nullptr) {
    switch (hooks_.poll(hooks_.ctx, w->index, true)) {
      case poll_result::progressed:
        w->poll_idle_since = -1;
        return;
      case poll_result::pending: {
        const std::int64_t now = now_ns();
        const std::uint64_t ran = w->tasks_run.load(std::memory_order_relaxed);
        if (w->poll_idle_since < 0 || ran != w->poll_tasks_seen) {
          w->poll_idle_since = now;
          w->poll_tasks_seen = ran;
        }
        if (now - w->poll_idle_since < spin_ns) {
          for (int i = 0; i < 16; ++i) cpu_relax();
        } else {
          std::this_thread::yield();
        }
        return;  // poll again, unless work showed up
      }
      case poll_result::delegated:
        delegated = true;
        [[fallthrough]];
      case poll_result::nothing_pending:
        w->poll_idle_since = -1;
        break;
    }
  }
  // Spinning: other workers may hand this one a task (hand_off) until the flag drops. Not
  // while another thread polls for this worker: that thread needs the core more (with as
  // many threads as cores, a spinning worker delayed each completion it waited for by its
  // whole spin), and it wakes this worker when a completion releases work.
  const std::int64_t spin_until = now_ns() + (delegated ? 0 : spin_ns);
  w->spinning.store(true, std::memory_order_relaxed);
  do {
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (work_visible(w) || should_go_home(w, false)) {
        w->spinning.store(false, std::memory_order_seq_cst);  // see hand_off
        return;
      }
    }
  } while (now_ns() < spin_until);
  w->spinning.store(false, std::memory_order_seq_cst);

  w->sleep_word.store(asleep, std::memory_order_seq_cst);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  full_fence();
  // Operations registered since this worker last polled: poll them rather than sleep
  // (registering and then looking for sleepers, against announcing sleep and then checking
  // this, loses no wake-up).
  const bool pending = !delegated && hooks_.has_pending != nullptr &&
                       hooks_.has_pending(hooks_.ctx, w->index);
  if (!pending && !work_visible(w) && !should_go_home(w, false)) {
    // Helping predicates that nobody signals (throttling) are re-checked after a timeout.
    const long timeout = w->help_poll ? 200000L : -1L;
    while (w->sleep_word.load(std::memory_order_acquire) == asleep) {
      futex_wait(w->sleep_word, asleep, timeout);
      if (timeout >= 0) break;
    }
  }
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  w->sleep_word.store(awake, std::memory_order_relaxed);
}

void scheduler::poll_hint(worker* w) {
  if (hooks_.poll == nullptr || !hooks_.has_pending(hooks_.ctx, w->index)) return;
  hooks_.poll(hooks_.ctx, w->index, false);
  w->last_poll_ns = now_ns();
}

void scheduler::wake_for_progress() {
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

bool scheduler::any_worker_busy() const noexcept {
  for (const worker* w : workers_)
    if (!w->idle_now.load(std::memory_order_relaxed)) return true;
  return false;
}

bool scheduler::any_worker_idle() const noexcept {
  for (const worker* w : workers_)
    if (w->idle_now.load(std::memory_order_relaxed)) return true;
  return false;
}

std::uint64_t scheduler::tasks_started() const noexcept {
  std::uint64_t n = 0;
  for (worker* w : workers_) n += w->tasks_run.load(std::memory_order_relaxed);
  return n;
}

// Every `every` switches, cheaply; and, while operations are pending, whenever `every_ns`
// has passed since this worker last polled, so that tasks longer than that poll at each
// switch whatever `every` is (a rendezvous then waits for one task, not for eight). The clock
// is read only while something is pending.
void scheduler::busy_poll(worker* w) {
  bool due = ++w->since_poll >= hooks_.every;
  std::int64_t now = 0;
  if (!due && hooks_.every_ns != 0 && hooks_.has_pending(hooks_.ctx, w->index)) {
    now = now_ns();
    due = now - w->last_poll_ns >= hooks_.every_ns;
  }
  if (!due) return;
  w->since_poll = 0;
  hooks_.poll(hooks_.ctx, w->index, false);
  if (hooks_.every_ns != 0) w->last_poll_ns = now != 0 ? now : now_ns();
}

}  // namespace hytask::core
