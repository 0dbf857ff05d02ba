// Task records and fiber stacks: per-worker caches over a global pool.
#include "core/sched/scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "platform/cpu.hpp"
#include "core/deps/dependency.hpp"
#include "platform/fiber.hpp"
#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"
#include "core/sched/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

// ---- allocation ----------------------------------------------------------------------

task* scheduler::allocate(worker* w) {
  if (w->free_count == 0) refill_cache(w);
  task* t = w->free_cache[--w->free_count];
  // Records often come back from another core: fetch the next one while this one is used.
  if (w->free_count != 0) {
    task* next = w->free_cache[w->free_count - 1];
    prefetch_for_write(next);
    prefetch_for_write(reinterpret_cast<char*>(next) + 64);
  }
  reset_task(t);
  return t;
}

task* scheduler::allocate_counted(worker* w) {
  if (w != nullptr) {
    note_spawn(w);
    return allocate(w);
  }
  inflight_.fetch_add(1, std::memory_order_relaxed);
  task* t;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (pool_.empty()) add_slab();
    t = pool_.back();
    pool_.pop_back();
  }
  reset_task(t);
  return t;
}

void scheduler::refill_cache(worker* w) {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (pool_.empty()) add_slab();
  const std::size_t take = std::min<std::size_t>(pool_.size(), task_batch);
  std::copy(pool_.end() - static_cast<std::ptrdiff_t>(take), pool_.end(), w->free_cache.get());
  pool_.resize(pool_.size() - take);
  w->free_count = static_cast<unsigned>(take);
}

void scheduler::add_slab() {
  // 128-aligned so that a record's line pairs never straddle two records. Constructing the
  // records writes every page of the slab: it is faulted in here, not in a task's spawn.
  void* mem = ::operator new(sizeof(task) * slab_tasks, std::align_val_t{128});
  slabs_.push_back(mem);
  auto* arr = static_cast<task*>(mem);
  for (std::size_t i = slab_tasks; i-- > 0;) pool_.push_back(::new (&arr[i]) task);
}

void scheduler::prefault_records() {
  // Enough for the throttle's limit and every worker's cache: a program that stays under
  // the limit never allocates a record, and its first task graph pays no page fault for
  // them (a fresh process paid ~11 us per fault, one per 16 records). Capped: a huge limit
  // is only reached by programs that spawn faster than they run.
  const std::size_t want = std::min<std::size_t>(
      settings_.max_tasks + std::size_t{task_batch} * workers_.size(), prefault_records_max);
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool_.reserve(want + task_cache_cap * workers_.size());
  while (pool_.size() < want) add_slab();
}

void scheduler::free_task(worker* w, task* t) {
  // Leave line 2 clean for the next user (allocate rewrites line 0 only); a leaf task
  // without a name never dirtied it.
  if (t->succ_overflow) detail::free_successor_blocks(t);
  // Closed at completion; reopened here, where the line is usually in cache (the exchange
  // that closed it), rather than at allocation on the spawning core. An untracked task
  // never closed it.
  if (!(t->flags & detail::flag_untracked)) t->nsucc.store(0, std::memory_order_relaxed);
  if (t->flags & detail::cold_line_flags) {
    t->name = nullptr;
    t->id = 0;
    if (t->has_error.load(std::memory_order_relaxed)) {
      t->error = nullptr;  // a pooled record must not keep an exception alive
      t->has_error.store(false, std::memory_order_relaxed);
      t->children_threw.store(0, std::memory_order_relaxed);
      t->children_skipped.store(0, std::memory_order_relaxed);
    }
    t->children_spawned = 0;
    t->on_complete = nullptr;
    t->hook_arg = nullptr;
  }
  if (w == nullptr) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool_.push_back(t);
    return;
  }
  if (w->free_count == task_cache_cap) {
    // Full: the older half goes to the pool (the newer records are the likelier to be in
    // this core's cache, for this worker's next spawns).
    constexpr unsigned half = task_cache_cap / 2;
    task** cache = w->free_cache.get();
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      pool_.insert(pool_.end(), cache, cache + half);
    }
    std::copy(cache + half, cache + task_cache_cap, cache);
    w->free_count -= half;
  }
  w->free_cache[w->free_count++] = t;
}

void scheduler::drop_ref(task* t) {
  if (last_ref(t)) free_task(current_worker(), t);
}

fiber* scheduler::take_fiber(worker* w) {
  if (fiber* f = w->fiber_pool) {
    w->fiber_pool = f->next_free;
    --w->fiber_pool_size;
    return f;
  }
  try {
    return create_fiber(settings_.stack_size);
  } catch (const std::exception& e) {
    // A fiber is taken where a task or main suspends: it has posted an MPI operation into
    // its stack, or has children that refer to it. Throwing would unwind that stack while
    // others still write into it (a silent wrong answer), so this is fatal.
    messagef(verbosity::error,
             "a task cannot suspend, no stack for a new fiber: %s. %zu fibers exist, each a "
             "stack of %zu KiB; this system affords about %zu. Lower HYTASK_MAX_TASKS (fewer "
             "tasks waiting at once) or HYTASK_STACK_SIZE, or raise the sysctl "
             "vm.max_map_count.",
             e.what(), live_fibers(), settings_.stack_size / 1024, fiber_limit());
    wait_until_stderr_read();
    std::abort();
  }
}

void scheduler::after_recycle(fiber* from, void*) {
  HYTASK_ASSERT(from->parked_task == nullptr, "a fiber with a parked task is recycled");
  worker* w = current_worker();
  if (w->fiber_pool_size >= fiber_pool_cap) {
    destroy_fiber(from);
    return;
  }
  from->next_free = w->fiber_pool;
  w->fiber_pool = from;
  ++w->fiber_pool_size;
}

}  // namespace hytask::core
