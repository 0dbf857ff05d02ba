// The scheduler: workers, ready queues, task lifecycle, suspension and idling.
//
// Worker 0 is the thread that created the runtime (main). It runs tasks only while it
// waits inside hytask (wait_all, a throttled spawn, yield); it does so on pooled fibers, so
// its own stack is never borrowed by a task. Workers 1..n-1 are background threads that run
// the scheduling loop on fibers until shutdown.
//
// A task runs as a plain call on the fiber that runs the loop. If it suspends, that fiber
// is parked with the task and the worker continues the loop on another fiber from its pool;
// resuming switches back to the parked fiber. So a task that never suspends costs no switch.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "core/sched/comm_types.hpp"
#include "core/sched/worker.hpp"
#include "platform/fiber.hpp"
#include "core/ext/progress_hooks.hpp"
#include "core/core_settings.hpp"
#include "core/face.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

using detail::task;

// arm_fn (what suspend calls once the task is parked): core/face.hpp.

class scheduler {
 public:
  // The progress hooks are fixed for the scheduler's life: workers read them unsynchronised.
  explicit scheduler(const core_settings& s, const progress_hooks& hooks = {});
  ~scheduler();
  scheduler(const scheduler&) = delete;
  scheduler& operator=(const scheduler&) = delete;

  static scheduler* instance() noexcept { return instance_; }
  const core_settings& config() const noexcept { return settings_; }
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()); }
  worker& at(unsigned i) noexcept { return *workers_[i]; }
  task* root() noexcept { return &root_; }

  // Waits for every task (main only), then stops the workers. Rethrows an uncollected
  // exception of a root-level task.
  void shutdown();

  // --- task lifecycle (hot paths) ---
  task* allocate(worker* w);
  void make_ready(task* t);                 // from any thread
  void push_ready(worker* w, task* t);      // from a worker thread
  // push_ready of n tasks at once: one fence and one wake-up look for the whole batch.
  void push_ready_many(worker* w, task* const* ts, std::uint32_t n);
  void notify_pushed();                     // after publishing work: wake a sleeper if any
  void release_successors(worker* w, task* t);
  // A task whose last predecessor just completed on w (null: a thread that is not a
  // worker): runs next on w when w's next slot is free, else goes to a spinning worker or
  // w's queues.
  void place_released(worker* w, task* t);
  // A record for a task created on any thread (w null: not a worker), counted in flight as
  // a spawn is; the caller sets its parent and callable.
  task* allocate_counted(worker* w);
  void drop_ref(task* t);

  // --- waiting ---
  // wait_all; without `rethrow`, the children's failures stay recorded in the current task
  // (they fail it, and reach its parent, when it completes).
  void wait_children(worker* w, bool rethrow = true);
  void suspend(arm_fn arm, void* arg);      // current task, or main's root
  // Makes a suspended task ready again, from any thread, behind the ready tasks of its key;
  // `comm` puts it in the communication class (resumed by a completed communication).
  void resume(task* t, bool comm = false);
  // The same from a worker at a scheduling point that released t (its last child completed):
  // t runs next on this worker, like a released successor.
  void resume_next(worker* w, task* t);
  void yield();
  void throttle(worker* w);
  void help_until(worker* w, help_pred_fn pred, void* arg);  // main's home context only
  void post_to_mailbox(unsigned worker_index, task* t);

  // --- bodies run in line (a recorded graph's independent tasks, graph.cpp) ---
  // A task starts or resumes on w, or a body is about to run in line in w's current task:
  // counted for the watchdog, and for the poll every HYTASK_PROGRESS_EVERY task starts.
  void note_start(worker* w);
  // Whether w should leave a task that runs bodies in line, at `depth`, for other work:
  // find_work would take something before an unstarted ordinary task of that depth from
  // w's FIFOs, or main has finished what it waits for.
  bool has_work_before(worker* w, unsigned depth);
  // While w's current task runs a body in line: fn(arg) is called once, before that task
  // suspends or yields, to give away what it has not run yet (null: nothing to give).
  static void set_escape(worker* w, void (*fn)(void*), void* arg) noexcept {
    w->escape_fn = fn;
    w->escape_arg = arg;
  }
  // Whether w's FIFOs hold nothing another worker could steal (lazy splitting).
  static bool nothing_to_steal(const worker* w) noexcept { return !w->levels.has_ready(); }

  // --- priorities ---
  // The order among ready tasks: the key, then FIFO. key = 2 * priority + communication
  // class, so the communication class sits just above ordinary tasks of the same priority.
  static std::int64_t ready_key(const task* t) noexcept {
    return 2 * static_cast<std::int64_t>(t->priority) + t->comm.load(std::memory_order_relaxed);
  }
  // The communication class is on (HYTASK_COMM_PRIORITY=1).
  bool comm_class() const noexcept { return settings_.comm_priority; }
  // Puts t in the communication class (before it is ready; no effect when the class is off).
  void raise_to_comm(task* t) noexcept {
    if (settings_.comm_priority) t->comm.store(1, std::memory_order_relaxed);
  }
  // At spawn, once t's callable is stored: tasks of a type that communicated before start in
  // the communication class.
  void classify(task* t) noexcept {
    if (settings_.comm_priority && comm_types_.contains(t->invoke))
      t->comm.store(1, std::memory_order_relaxed);
  }
  // The running task t posted a communication: remember its type. True when it is new.
  bool learn_comm(task* t) { return settings_.comm_priority && comm_types_.learn(t->invoke); }
  std::size_t comm_types_learned() const noexcept { return comm_types_.size(); }

  // --- cancellation (core/cancel.hpp) ---
  // Non-zero while some cancelled group still has tasks: tasks are then checked where they
  // start and complete.
  int cancel_active() const noexcept { return cancel_active_.load(std::memory_order_acquire); }
  void add_cancel_active(int d) noexcept { cancel_active_.fetch_add(d, std::memory_order_acq_rel); }

  // --- upper layers ---
  const progress_hooks& hooks() const noexcept { return hooks_; }
  void wake_for_progress();   // an operation was registered: wake a sleeping worker to poll
  void poll_hint(worker* w);  // this_task::poll(): poll now if operations are pending
  task* hold_current();       // the current task will not complete before release_hold
  void release_hold(task* t, std::exception_ptr error = nullptr);  // from any thread
  std::uint64_t tasks_started() const noexcept;  // sum over workers, for the watchdog
  bool any_worker_busy() const noexcept;         // some worker is not idle (watchdog)
  bool any_worker_idle() const noexcept;         // some worker found no task (and may sleep)
  std::int64_t in_flight() const noexcept {      // tasks spawned, not completed (approximate)
    return std::max<std::int64_t>(0, inflight_.load(std::memory_order_relaxed) +
                                         set_aside_.load(std::memory_order_relaxed));
  }
  // Tasks that the throttle does not count: held until the spawning thread does something
  // later (a layer's tasks that wait for an event only main's next call can cause, as the
  // global layer's wait for their phase's matching, which needs main's next fence). A spawn
  // that waited for them would wait forever. take_back counts them again, once that
  // something has happened; their completion is counted as any task's.
  void set_aside(std::int64_t tasks) noexcept {
    inflight_.fetch_sub(tasks, std::memory_order_relaxed);
    set_aside_.fetch_add(tasks, std::memory_order_relaxed);
  }
  void take_back(std::int64_t tasks) noexcept {
    inflight_.fetch_add(tasks, std::memory_order_relaxed);
    set_aside_.fetch_sub(tasks, std::memory_order_relaxed);
  }
  void wake_worker(unsigned index) { wake(workers_[index]); }

  // The loop run by every fiber (worker.cpp) drives the scheduler's private steps.
  friend void worker_loop();

  // Spawn-side accounting of tasks in flight (published in batches).
  bool over_limit(const worker* w) const noexcept {
    return inflight_.load(std::memory_order_relaxed) + w->inflight_delta >=
           static_cast<std::int64_t>(settings_.max_tasks) +
               throttle_extra_.load(std::memory_order_relaxed);
  }
  void note_spawn(worker* w) noexcept {
    if (++w->inflight_delta >= 64) publish_inflight(w);
  }
  // Adds w's unpublished spawns and completions to the shared count; ends a throttle
  // extension once the count is back under the limit.
  void publish_inflight(worker* w) noexcept {
    const std::int64_t now =
        inflight_.fetch_add(w->inflight_delta, std::memory_order_relaxed) + w->inflight_delta;
    w->inflight_delta = 0;
    if (throttle_extra_.load(std::memory_order_relaxed) != 0 &&
        now < static_cast<std::int64_t>(settings_.max_tasks))
      end_throttle_extension();
  }
  void end_throttle_extension() noexcept {
    throttle_extra_.store(0, std::memory_order_relaxed);
    throttle_streak_.store(0, std::memory_order_relaxed);
  }

  // How far beyond HYTASK_MAX_TASKS spawning is currently allowed (while everything in
  // flight was found stuck); 0 normally.
  std::int64_t throttle_extension() const noexcept {
    return throttle_extra_.load(std::memory_order_relaxed);
  }

  void flush_counts(worker* w);
  // Adds the children t counted in its plain field to alive (t's own code only).
  static void publish_children(task* t);

 private:
  friend struct loop_access;
  void worker_thread(unsigned index);
  task* find_work(worker* w);
  bool work_visible(worker* w);
  task* pop_prio(worker* w, std::int64_t min);   // own heap, key >= min
  task* steal_prio(worker* w, std::int64_t min); // the victim heap with the highest key >= min
  task* steal_levels(worker* w);
  task* steal_oldest(worker* w, ws_deque<task*> worker::*fifo);  // resumed or yielded tasks
  void run(worker* w, task* t);
  void begin_run(worker* w, task* t);  // bookkeeping before a task's body starts or resumes
  void busy_poll(worker* w);             // a busy worker's scheduling point: poll if it is time
  void escape_inline(worker* w);  // the current task suspends or yields: call its escape_fn
  void unget(worker* w, task* t);      // return a task find_work handed out, to run it next
  void body_done(worker* w, task* t);
  void complete(worker* w, task* t);
  void child_done(worker* w, task* parent);
  void child_done_direct(worker* w, task* parent);  // one decrement, now (holds, foreign threads)
  void after_drop(worker* w, task* p, std::int32_t now);  // p's alive fell to now: complete or wake
  void spill_slot(worker* w, task*& slot);  // a slot's task into the ready queues (stealable)
  void flush_children(worker* w);
  void wake_waiting_parent(worker* w, task* p);  // w may be null (a foreign thread)
  void idle(worker* w);
  void go_home(worker* w);
  bool should_go_home(worker* w, bool found_nothing);
  bool mailbox_pending(const worker* w) const;
  void wake_one();
  void wake(worker* w);
  fiber* take_fiber(worker* w);  // never throws: no stack for a suspending task is fatal
  void free_task(worker* w, task* t);
  void refill_cache(worker* w);  // a batch of records from the pool into w's empty cache
  void add_slab();          // a slab of fresh records into the pool (pool_mutex_ held)
  void prefault_records();  // at start: the records a program under the limit will use
  void enqueue(worker* w, task* t);  // into w's ready queues; no notification
  // Gives a key-0 task made ready on w to another worker that spins idle; false if none does.
  bool hand_off(worker* w, task* t);
  void inject(task* t);
  task* take_injected(std::int64_t min);  // key >= min

  static void after_recycle(fiber* from, void* arg);
  static void after_park(fiber* from, void* arg);

  static scheduler* instance_;

  core_settings settings_;
  progress_hooks hooks_;
  std::atomic<int> cancel_active_{0};  // read where every task starts: beside the settings
  std::vector<worker*> workers_;
  task root_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint32_t> root_resumed_{0};
  unsigned long main_timer_slack_ = 0;  // the main thread's, before it became worker 0

  alignas(64) std::atomic<std::int64_t> inflight_{0};
  std::atomic<std::int64_t> set_aside_{0};  // see set_aside()
  std::atomic<std::int64_t> throttle_extra_{0};  // limit extension while everything is stuck
  std::atomic<int> throttle_streak_{0};          // extensions since the count last fell
  std::atomic<bool> throttle_capped_warned_{false};
  alignas(64) std::atomic<int> sleepers_{0};

  // Tasks made ready by threads that are not workers (the MPI progress thread, a user
  // thread setting an event), in key order. A worker takes those of a positive key as it
  // does its own, and the others at least every inject_check_period scheduling steps, so a
  // worker that keeps spawning cannot starve them.
  ready_heap injected_;
  // Tasks of a positive key in the workers' heaps (approximate): a worker whose own heap has
  // none looks at the others' before running an ordinary task. Written only where
  // priorities are used.
  alignas(64) std::atomic<std::int64_t> positive_ready_{0};
  alignas(64) std::atomic<int> in_transit_{0};  // steal_levels calls under way
  // Read at every spawn (classify), written only when a type is learned: a line of its own,
  // not in_transit_'s, which every steal writes (sharing it cost main a miss per spawn).
  alignas(64) comm_types comm_types_;

  std::mutex pool_mutex_;         // global task pool
  std::vector<task*> pool_;       // batches flow here from workers that free more than they spawn
  std::vector<void*> slabs_;
};

// Drops one of a task record's owners (its execution, the parent's tracker); true when it was
// the last one. Owners are never added after spawn, so seeing a count of 1 means the caller
// is the only owner left and may skip the atomic decrement.
inline bool last_ref(task* t) {
  return t->refs.load(std::memory_order_acquire) == 1 ||
         t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1;
}


// Throws hytask::usage_error for a call of hytask::<what> ("spawn", "graph::run") with no
// runtime alive or from a thread that is not a worker, saying which and what to do.
[[noreturn]] void no_worker(const char* what);
// The calling thread's worker, or that error.
inline worker* require_worker(const char* what) {
  worker* w = current_worker();
  if (w == nullptr) no_worker(what);
  return w;
}

// The task's id, assigned on first use from the worker's sequence (unique per runtime).
std::uint64_t task_id(worker* w, task* t);

// Interns a task name for the life of the process.
const char* intern_name(std::string_view name);

}  // namespace hytask::core
