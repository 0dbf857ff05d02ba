// Throttling: bounding the tasks in flight.
#include "core/scheduler.hpp"

#include <algorithm>

#include "core/cpu.hpp"
#include "core/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

void scheduler::throttle(worker* w) {
  flush_counts(w);
  const std::int64_t limit = static_cast<std::int64_t>(settings_.max_tasks);
  const std::int64_t quarter = std::max<std::int64_t>(1, limit / 4);
  const std::int64_t current = inflight_.load(std::memory_order_relaxed);
  if (current < limit) {
    if (throttle_extra_.load(std::memory_order_relaxed) != 0)
      throttle_extra_.store(0, std::memory_order_relaxed);
    return;
  }
  const std::int64_t extended = limit + throttle_extra_.load(std::memory_order_relaxed);
  if (current < extended) return;
  struct state {
    scheduler* s;
    worker* w;
    std::int64_t low;
    bool stuck = false;
    std::int64_t seen = -1;       // in-flight count when it last changed
    std::int64_t seen_at_ns = 0;  // and when
  } st{this, w, extended - quarter};
  auto done = [](void* a, bool found_nothing) {
    auto* x = static_cast<state*>(a);
    // Unpublished local completions count too; publishing them here, per task, would undo
    // the batching.
    const std::int64_t now_inflight =
        x->s->inflight_.load(std::memory_order_relaxed) + x->w->inflight_delta;
    if (now_inflight <= x->low) return true;
    if (!found_nothing) return false;
    // Nothing to run here and the count does not move: every task in flight is suspended,
    // or waits for one that is, and their wake-up may depend on tasks not spawned yet.
    // A count that stays put for a millisecond tells that apart from workers that are
    // merely between two tasks.
    const std::int64_t t = now_ns();
    if (now_inflight != x->seen) {
      x->seen = now_inflight;
      x->seen_at_ns = t;
      return false;
    }
    x->stuck = t - x->seen_at_ns > stuck_after_ns;
    return x->stuck;
  };
  if (w->current_task == nullptr) {
    w->help_poll = true;
    help_until(w, done, &st);
    w->help_poll = false;
  } else {
    // A task throttles by yielding, so that its stack is never borrowed by other tasks.
    for (;;) {
      st.w = current_worker();
      bool visible = work_visible(st.w);
      if (done(&st, !visible)) break;
      if (visible) yield();
      else cpu_relax();
    }
  }
  // Stuck: spawning more is the only way forward. Extend the limit (doubling the extension,
  // so many suspended tasks cost a few checks, not one per quarter) before checking again;
  // the extension ends when the count falls below the limit.
  if (st.stuck) {
    const std::int64_t extra = throttle_extra_.load(std::memory_order_relaxed);
    throttle_extra_.store(std::max(quarter, 2 * extra), std::memory_order_relaxed);
  }
}

}  // namespace hytask::core
