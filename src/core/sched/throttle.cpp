// Throttling: bounding the tasks in flight.
#include "core/sched/scheduler.hpp"

#include <algorithm>
#include <cstdio>

#include "platform/cpu.hpp"
#include "platform/fiber.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "platform/messages.hpp"

namespace hytask::core {

using namespace sched;

void scheduler::throttle(worker* w) {
  flush_counts(w);
  const std::int64_t limit = static_cast<std::int64_t>(settings_.max_tasks);
  const std::int64_t quarter = std::max<std::int64_t>(1, limit / 4);
  const std::int64_t current = inflight_.load(std::memory_order_relaxed);
  if (current < limit) {
    if (throttle_extra_.load(std::memory_order_relaxed) != 0) end_throttle_extension();
    return;
  }
  const std::int64_t extra = throttle_extra_.load(std::memory_order_relaxed);
  const std::int64_t extended = limit + extra;
  if (current < extended) return;
  const int streak = throttle_streak_.load(std::memory_order_relaxed);
  struct state {
    scheduler* s;
    worker* w;
    std::int64_t low;
    std::int64_t frozen_ns;       // how long a frozen count means stuck
    bool stuck = false;
    std::int64_t seen = -1;       // in-flight count when it last changed
    std::int64_t seen_at_ns = 0;  // and when
  } st{this, w, extended - quarter, stuck_after_ns << std::min(streak, stuck_streak_max)};
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
    // A count that stays put for a while tells that apart from workers that are merely
    // between two tasks.
    const std::int64_t t = now_ns();
    if (now_inflight != x->seen) {
      x->seen = now_inflight;
      x->seen_at_ns = t;
      return false;
    }
    x->stuck = t - x->seen_at_ns > x->frozen_ns;
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
  if (!st.stuck) {
    // The tasks in flight move again: the extension shrinks by half, so that the count
    // comes back to the limit, where the extension ends (and the time a frozen count must
    // last is 1 ms again). Keeping that time meanwhile matters: a peer that sends in bursts
    // would otherwise make the extension swing between half and double.
    if (extra / 2 >= quarter) throttle_extra_.store(extra / 2, std::memory_order_relaxed);
    else if (extra != 0) end_throttle_extension();
    return;
  }
  // Stuck: spawning more is the only way forward, unless the tasks in flight wait for
  // something slow (a peer rank descheduled, a long message): the two look alike. Extend
  // the limit, doubling the extension (many suspended tasks cost a few checks, not one per
  // quarter), and double the time a count must stay frozen before the next extension (up to
  // 64 ms), so that a slow peer does not make spawning run ahead without bound. Each task
  // that suspends holds a fiber: the extension grows by at most the fibers left, so it stops
  // where suspended tasks would run out of them — not where tasks that merely wait for
  // their predecessors (no fiber: they have not started) reach that number.
  const auto fibers = static_cast<std::int64_t>(fiber_limit());
  const auto held = static_cast<std::int64_t>(live_fibers());
  const std::int64_t ceiling = extra + std::max<std::int64_t>(0, fibers - held);
  const std::int64_t grown = std::min(std::max(quarter, 2 * extra), ceiling);
  if (grown > extra) {
    throttle_extra_.store(grown, std::memory_order_relaxed);
    throttle_streak_.store(streak + 1, std::memory_order_relaxed);
  } else if (!throttle_capped_warned_.exchange(true, std::memory_order_relaxed)) {
    messagef(verbosity::warning,
             "spawning waits: the %lld tasks in flight wait for %zu suspended ones, and "
             "spawning more would take more fibers than this system affords (about %zu, a "
             "quarter of vm.max_map_count). If a suspended task waits for one not spawned yet, "
             "this is a deadlock: raise vm.max_map_count or restructure the program.",
             static_cast<long long>(inflight_.load(std::memory_order_relaxed)), live_fibers(),
             fiber_limit());
  }
}

}  // namespace hytask::core
