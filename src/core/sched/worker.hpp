// A worker: one thread of the scheduler, its ready queues, its caches and the loop it runs.
//
// Each worker thread runs the scheduling loop (worker_loop) on fibers from its pool: find a
// task and run it, go home when the scheduler stops (or, worker 0, when what main waits for
// is done), idle when there is nothing to do. A task that suspends parks the fiber it ran on
// and the worker continues the loop on another; the parked fiber may later resume on another
// worker, so the loop asks which worker it runs on at every step.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "core/sched/deque.hpp"
#include "core/sched/fifo_levels.hpp"
#include "core/sched/ready_heap.hpp"
#include "hytask/core/detail/task.hpp"
#include "platform/fiber.hpp"

namespace hytask::core {

using detail::task;

// Predicate of main's helping loop; `found_nothing` is true right after a failed search.
using help_pred_fn = bool (*)(void* arg, bool found_nothing);

// A worker's state in two pages: the first holds what only the owner touches on every
// scheduling step, the second what other workers read or write (deques, mailbox, sleep
// word). Hardware prefetchers stream along a page: had a thief's reads of the deques shared
// a page with the owner's hot fields, they would drag those lines away from the owner.
struct alignas(4096) worker {
  // ---- page 0: owner only
  unsigned index = 0;
  task* next = nullptr;  // a successor released by the task that just finished (key 0)
  task* first = nullptr;  // a task find_work handed out and suspend gave back: runs next
  task* mailbox_local = nullptr;

  fiber home;                  // the thread's native context
  task* current_task = nullptr;
  // Set by current_task while it runs a body in line (scheduler::set_escape): called once
  // before current_task suspends or yields.
  void (*escape_fn)(void*) = nullptr;
  void* escape_arg = nullptr;
  std::uint64_t slice_start = 0;  // trace: when the current slice began

  // Caches.
  fiber* fiber_pool = nullptr;
  unsigned fiber_pool_size = 0;
  // Free task records, a stack of pointers (task_cache_cap of them at most): filling and
  // draining it in batches copies pointers, and never reads a record another core wrote.
  std::unique_ptr<task*[]> free_cache;
  unsigned free_count = 0;
  task* done_parent = nullptr;  // completions of children of done_parent not yet published
  std::int32_t done_count = 0;
  std::int64_t inflight_delta = 0;  // spawned - completed, not yet published
  std::uint64_t next_id = 0;
  std::atomic<std::uint64_t> tasks_run{0};  // owner writes; the watchdog reads
  // Owner writes, the watchdog reads: true from entering idle() until the worker next runs
  // a task (or, main, returns to the program). A worker that is not idle is running a task
  // (or main's own code), which is progress however long it takes.
  std::atomic<bool> idle_now{false};
  unsigned since_poll = 0;                   // task switches since the last busy poll
  std::int64_t last_poll_ns = 0;             // when this worker last polled while busy
  unsigned inject_tick = 0;                  // scheduling steps since injected work was checked
  std::int64_t poll_idle_since = -1;         // when this worker began polling idle (-1: not)
  std::uint64_t poll_tasks_seen = 0;         // tasks_run then: running a task ends the stretch
  // Polling idle on a crowded core (idle.cpp): when this thread's own run-queue time was last
  // read, that time, whether the stretch found the core crowded, until when that finding
  // holds for later stretches, and the current sleep between polls once it did.
  std::int64_t crowd_check_ns = -1;
  std::int64_t crowd_delay_ns = 0;
  bool crowded = false;
  std::int64_t crowded_until_ns = 0;
  std::int64_t poll_sleep_ns = 0;

  // Helping (worker 0 only): return home when help_pred says so.
  help_pred_fn help_pred = nullptr;
  void* help_arg = nullptr;
  bool help_poll = false;  // nobody signals help_pred: sleep with a timeout

  std::vector<unsigned> victims;  // steal order
  std::thread thread;

  // ---- page 1: shared with other workers
  // Ready tasks: those of key 0 in FIFOs per depth, the others (a priority, or the
  // communication class) in a heap, highest key first. See find_work for the whole order.
  alignas(4096) fifo_levels levels;
  ready_heap prio;
  // Key-0 tasks that had started and were resumed (an event, a message, their children):
  // they run before tasks that have not started, oldest first, so that the tasks holding a
  // fiber finish first and the number of parked fibers stays small.
  ws_deque<task*> resumed;
  // Tasks that yielded: run after every other source of work, oldest first. Taken from the
  // FIFO end by the owner and by thieves alike, so idle workers share them out.
  ws_deque<task*> yielded;
  // Tasks only this worker may run (loop participants): multi-producer stack.
  alignas(128) std::atomic<task*> mailbox{nullptr};
  // One line for waking and handing work to this worker (ready.cpp, hand_off):
  //   handoff     a task another worker made ready and gave to this one, which was spinning
  //               idle: it starts after one cache-line transfer instead of a steal;
  //   spinning    set while this worker spins idle (not while it runs, polls or sleeps);
  //   sleep_word  0 awake, 1 asleep, 2 notified (futex).
  alignas(128) std::atomic<task*> handoff{nullptr};
  std::atomic<std::uint32_t> sleep_word{0};
  std::atomic<bool> spinning{false};
};

// The worker running on this thread, or null. Out of line: a fiber may change threads.
worker* current_worker() noexcept;
void set_current_worker(worker* w) noexcept;

// The scheduling loop: the body of every fiber of every worker (marl's Worker::run).
// Defined in run.cpp, beside the steps it takes every turn (run, going home), which the
// compiler then inlines into it.
[[noreturn]] void worker_loop();

}  // namespace hytask::core
