// Idling: what a worker does with nothing to run (poll, spin, sleep), and the busy worker's polls.
#include "core/sched/scheduler.hpp"

#include <algorithm>
#include <thread>

#include "platform/cpu.hpp"
#include "platform/cpu_wait.hpp"
#include "platform/futex.hpp"
#include "core/sched/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

// ---- idling --------------------------------------------------------------------------

namespace {
// How often a worker polling idle reads its run-queue time, and the sleeps between its polls
// once its core is found crowded.
constexpr std::int64_t crowd_check_ns = 1'000'000;
constexpr std::int64_t crowd_sleep_min_ns = 20'000;
constexpr std::int64_t crowd_sleep_max_ns = 1'000'000;
// How long a verdict of "crowded" holds for the stretches that follow: each would otherwise
// yield for a millisecond to judge again (sleeping, a worker cannot tell: it waits for no
// CPU), taking that share from the other sessions at every wait.
constexpr std::int64_t crowd_memory_ns = 100'000'000;

// Whether the thread waited for its core a quarter of the time since the last reading or more:
// other runnable threads want it (more threads than cores on the node).
bool found_crowded(worker* w, std::int64_t now) {
  if (w->crowd_check_ns >= 0 && now - w->crowd_check_ns < crowd_check_ns) return false;
  const std::int64_t delay = thread_run_delay_ns();
  const bool crowded = w->crowd_check_ns >= 0 && delay >= 0 && w->crowd_delay_ns >= 0 &&
                       4 * (delay - w->crowd_delay_ns) >= now - w->crowd_check_ns;
  w->crowd_check_ns = now;
  w->crowd_delay_ns = delay;
  if (crowded) w->crowded_until_ns = now + crowd_memory_ns;
  return crowded;
}

// A new stretch of idle polling: judge the core afresh.
void end_stretch(worker* w) {
  w->poll_idle_since = -1;
  w->crowd_check_ns = -1;
  w->crowded = false;
  w->poll_sleep_ns = 0;
}
}  // namespace

void scheduler::idle(worker* w) {
  flush_counts(w);
  if (!w->idle_now.load(std::memory_order_relaxed)) w->idle_now.store(true, std::memory_order_relaxed);
  // Outstanding operations: an idle worker polls them, back to back for HYTASK_SPIN_US
  // after it last ran a task or saw an operation complete, then yielding its core between
  // polls. It does not sleep while operations it may poll are pending: it has nothing else
  // to do, and a sleeping poller adds its sleep to every message it waits for — the peer
  // answers a ping-pong just after the poller dozed off, and both drift into long sleeps.
  // This is what a blocking MPI call does. Unless the core is crowded: a yield leaves it
  // only to threads of the same scheduling group, and the kernel gives each process started
  // in a session of its own (every MPI rank) an equal share whatever it does with it, so on
  // a node with more threads than cores a rank that polls and yields takes the cores its
  // peers compute on (measured: a rank computing on both cores of this machine ran at half
  // speed while another waited for its message). When the worker stood in its core's run
  // queue a quarter of the time or more, it sleeps between polls instead, 20 us at first,
  // doubling to 1 ms while nothing completes; for 100 ms after such a finding, its later
  // waits sleep once their HYTASK_SPIN_US has passed. On a node known to run more worker
  // threads than it has CPUs (settings_.crowded_node) every wait does: there, once the
  // other ranks sleep, a rank that yields finds its core free and would never judge it
  // crowded, polling at a full core while idle. With nothing pending it spins briefly,
  // then sleeps until woken.
  const std::int64_t spin_ns = static_cast<std::int64_t>(settings_.spin_us) * 1000;
  bool delegated = false;  // another thread polls while this worker idles: it may sleep
  std::int64_t poll_sleep = 0;  // crowded: sleep this long, then poll again
  if (hooks_.poll != nullptr) {
    switch (hooks_.poll(hooks_.ctx, w->index, true)) {
      case poll_result::progressed:
        end_stretch(w);
        return;
      case poll_result::pending: {
        const std::int64_t now = now_ns();
        const std::uint64_t ran = w->tasks_run.load(std::memory_order_relaxed);
        if (w->poll_idle_since < 0 || ran != w->poll_tasks_seen) {
          end_stretch(w);
          w->poll_idle_since = now;
          w->poll_tasks_seen = ran;
        }
        if (now - w->poll_idle_since < spin_ns) {
          for (int i = 0; i < 16; ++i) cpu_relax();
          return;  // poll again, unless work showed up
        }
        if (!w->crowded && !(w->crowded = settings_.crowded_node || now < w->crowded_until_ns ||
                                          found_crowded(w, now))) {
          std::this_thread::yield();
          return;
        }
        w->poll_sleep_ns = std::clamp(2 * w->poll_sleep_ns, crowd_sleep_min_ns, crowd_sleep_max_ns);
        poll_sleep = w->poll_sleep_ns;
        break;
      }
      case poll_result::delegated:
        delegated = true;
        end_stretch(w);
        break;
      case poll_result::nothing_pending:
        end_stretch(w);
        break;
    }
  }
  // Spinning: other workers may hand this one a task (hand_off) until the flag drops. Not
  // while another thread polls for this worker: that thread needs the core more (with as
  // many threads as cores, a spinning worker delayed each completion it waited for by its
  // whole spin), and it wakes this worker when a completion releases work. Nor on a crowded
  // core.
  const std::int64_t spin_until = now_ns() + (delegated || poll_sleep != 0 ? 0 : spin_ns);
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
  // this, loses no wake-up). A worker on a crowded core sleeps with them pending, briefly.
  const bool pending = !delegated && poll_sleep == 0 && hooks_.has_pending != nullptr &&
                       hooks_.has_pending(hooks_.ctx, w->index);
  if (!pending && !work_visible(w) && !should_go_home(w, false)) {
    // Helping predicates that nobody signals (throttling) are re-checked after a timeout.
    const long timeout = poll_sleep != 0 ? static_cast<long>(poll_sleep) : w->help_poll ? 200000L : -1L;
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
