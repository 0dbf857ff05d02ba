// Internal to the scheduler's source files: constants and small helpers they share.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <string_view>

#include "platform/assert.hpp"
#include "platform/clock.hpp"
#include "core/sched/scheduler.hpp"

namespace hytask::core::sched {

// A task's pending count starts at this while it is spawned (its predecessors are still being
// linked: it cannot become ready meanwhile); so do the root task's references, which then never
// reach zero.
constexpr std::int32_t spawn_bias = 1 << 30;
constexpr unsigned fiber_pool_cap = 32;
constexpr unsigned task_cache_cap = 1024;
constexpr unsigned task_batch = 256;
constexpr std::size_t slab_tasks = 64;                 // records allocated together
constexpr std::size_t prefault_records_max = 1 << 16;  // 16 MiB of records at most
constexpr std::int64_t inflight_publish = 64;
constexpr std::int64_t steal_batch_max = 16;
// A worker with local work still takes a task made ready by a non-worker thread (normal
// class) at least this often, in scheduling steps.
constexpr unsigned inject_check_period = 61;
constexpr std::int64_t stuck_after_ns = 1000000;  // throttle: in-flight count frozen this long
constexpr int stuck_streak_max = 6;  // ... doubled per extension since it last fell, up to 64 ms
constexpr std::uint32_t awake = 0, asleep = 1, notified = 2;

using core::now_ns;

// Rewrites line 0 of a pooled record; the other lines are clean (see free_task).
inline void reset_task(task* t) {
  t->invoke = nullptr;
  t->parent = nullptr;
  t->flags = 0;
  t->priority = 0;
  t->depth = 0;
  t->comm.store(0, std::memory_order_relaxed);
  t->pending.store(0, std::memory_order_relaxed);
  t->alive.store(detail::body_share, std::memory_order_relaxed);
  t->refs.store(1, std::memory_order_relaxed);
}

// Debug bookkeeping of the invariant "a task is in at most one ready place (a queue, a
// worker's next or first slot, a mailbox) and is not running while there".
inline void note_queued([[maybe_unused]] task* t) {
#if defined(HYTASK_ASSERTIONS)
  HYTASK_ASSERT(!(t->flags & detail::flag_queued), "a task is made ready twice");
  HYTASK_ASSERT(!(t->flags & detail::flag_root), "main's root task is never queued");
  HYTASK_ASSERT(t->pending.load(std::memory_order_relaxed) == 0,
                "a task is made ready only when all its predecessors have completed");
  t->flags |= detail::flag_queued;
#endif
}
// The task's parked fiber is about to run it again.
inline void unpark([[maybe_unused]] task* t) {
#if defined(HYTASK_ASSERTIONS)
  auto* f = static_cast<fiber*>(t->fiber);
  HYTASK_ASSERT(f != nullptr && f->parked_task == t, "a task resumes on a fiber not parked with it");
  f->parked_task = nullptr;
#endif
}
inline void note_taken([[maybe_unused]] task* t) {
#if defined(HYTASK_ASSERTIONS)
  HYTASK_ASSERT(t->flags & detail::flag_queued, "a task runs only after it was made ready");
  t->flags &= ~detail::flag_queued;
#endif
}

// Whether a running or waiting task's children have all completed: alive holds the body's
// share, the children and the holds; holds (bound requests) are not children.
inline bool children_done(const task* t) {
  return t->alive.load(std::memory_order_seq_cst) - t->holds.load(std::memory_order_seq_cst) ==
         detail::body_share;
}

// Whether t failed: its body threw, it was skipped, or a child's exception reached it
// uncaught. has_error is read only when a flag says it may be set.
inline bool has_failed(const task* t) {
  return (t->flags & (detail::flag_error | detail::flag_parent)) &&
         t->has_error.load(std::memory_order_acquire);
}

// A predecessor of t (a task or a request) failed, before t started: t will be skipped.
// Called before that predecessor releases its share of t's pending count, whose acq_rel
// publishes this to whoever runs t. Only the first failing predecessor writes (t has not
// started, so nothing else writes its flags).
inline void fail_before_start(task* t, std::exception_ptr error) {
  if (!t->has_error.exchange(true, std::memory_order_acq_rel)) {
    t->error = std::move(error);
    t->flags |= detail::flag_failed;
  }
}

inline void record_error(task* t, std::exception_ptr e) {
  if (!t->has_error.exchange(true, std::memory_order_acq_rel)) t->error = std::move(e);
}

// wait_all's end when children failed: clears t's record of them and rethrows the first
// exception; when more than one task failed, first says how many on stderr (one line).
[[noreturn]] void rethrow_children_failures(task* t, const char* where);

// A task the runtime spawns on the current task's behalf (versioned's copy-back): like
// hytask::spawn's record, but never a cancellation point — the runtime's bookkeeping goes on
// in a cancelled task.
task* new_runtime_task(int priority, std::string_view name);

}  // namespace hytask::core::sched
