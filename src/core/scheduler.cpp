#include "core/scheduler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_set>

#include "core/dependency.hpp"
#include "core/futex.hpp"
#include "core/cpu.hpp"
#include "core/topology.hpp"
#include "hytask/errors.hpp"
#include "trace/trace.hpp"

namespace hytask::core {

scheduler* scheduler::instance_ = nullptr;

namespace {

thread_local worker* t_worker = nullptr;

constexpr std::int32_t spawn_bias = 1 << 30;
constexpr unsigned fiber_pool_cap = 32;
constexpr unsigned task_cache_cap = 1024;
constexpr unsigned task_batch = 256;
constexpr std::int64_t inflight_publish = 64;
constexpr std::int64_t steal_batch_max = 16;
// A worker with local work still takes a task made ready by a non-worker thread (normal
// class) at least this often, in scheduling steps.
constexpr unsigned inject_check_period = 61;
constexpr std::int64_t stuck_after_ns = 1000000;  // throttle: in-flight count frozen this long
constexpr std::uint32_t awake = 0, asleep = 1, notified = 2;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Rewrites line 0 of a pooled record; the other lines are clean (see free_task).
inline void reset_task(task* t) {
  t->invoke = nullptr;
  t->parent = nullptr;
  t->nsucc.store(0, std::memory_order_relaxed);
  t->flags = 0;
  t->priority = 0;
  t->pending.store(0, std::memory_order_relaxed);
  t->alive.store(detail::body_share, std::memory_order_relaxed);
  t->refs.store(1, std::memory_order_relaxed);
  t->tracker_refs = 0;
}

void record_error(task* t, std::exception_ptr e) {
  if (!t->has_error.exchange(true, std::memory_order_acq_rel)) t->error = std::move(e);
}

// Writes the running task's name for the stack overflow message (async-signal-safe).
std::size_t describe_running(char* buf, std::size_t cap) {
  worker* w = t_worker;
  task* t = w ? w->current_task : nullptr;
  const char* prefix = t ? "task '" : "the scheduler";
  std::size_t n = 0;
  for (const char* p = prefix; *p && n + 1 < cap; ++p) buf[n++] = *p;
  if (t) {
    const char* name = t->name ? t->name : "(unnamed)";
    for (const char* p = name; *p && n + 2 < cap; ++p) buf[n++] = *p;
    if (n + 1 < cap) buf[n++] = '\'';
  }
  return n;
}

struct park_args {
  task* t;
  arm_fn arm;
  void* arg;
};

}  // namespace

[[gnu::noinline]] worker* current_worker() noexcept {
  asm volatile("" ::: "memory");
  return t_worker;
}

[[gnu::noinline]] void set_current_worker(worker* w) noexcept { t_worker = w; }

std::uint64_t task_id(worker* w, task* t) {
  if (t->id == 0) {
    t->flags |= detail::flag_cold;
    t->id = w->next_id;
    w->next_id += scheduler::instance()->size();
  }
  return t->id;
}

// ---- construction and shutdown -------------------------------------------------------

scheduler::scheduler(const settings& s, const progress_hooks& hooks)
    : settings_(s), hooks_(hooks) {
  if (instance_ != nullptr)
    throw usage_error(
        "hytask: a hytask::runtime already exists; create exactly one, in main, and keep it "
        "alive while tasks run");
  reset_task(&root_);
  root_.name = "main";
  root_.flags = detail::flag_root | detail::flag_started | detail::flag_parent;
  root_.refs.store(spawn_bias, std::memory_order_relaxed);

  const unsigned n = std::max(1u, settings_.threads);
  const placement place = place_workers(topology::get(), n);
  for (unsigned i = 0; i < n; ++i) {
    auto* w = new worker;
    w->index = i;
    w->next_id = i + 1;
    workers_.push_back(w);
  }
  for (unsigned i = 0; i < n; ++i) workers_[i]->victims = steal_order(place.package_of_worker, i);

  set_fiber_main(&scheduler::fiber_main);
  install_overflow_handler(&describe_running, settings_.stack_size);

  worker* w0 = workers_[0];
  set_current_worker(w0);
  init_home_fiber(&w0->home);
  main_timer_slack_ = set_timer_slack(poll_timer_slack_ns);  // restored by shutdown
  if (settings_.pin == pin_policy::cores) pin_thread_to_pu(place.pu_of_worker[0]);
  instance_ = this;
  if (trace::enabled()) trace::set_thread(0, "worker 0 (main)");

  try {
    for (unsigned i = 1; i < n; ++i) {
      int pu = place.pu_of_worker[i];
      workers_[i]->thread = std::thread([this, i, pu] {
        if (settings_.pin == pin_policy::cores) pin_thread_to_pu(pu);
        worker_thread(i);
      });
    }
  } catch (...) {
    stopping_.store(true);
    for (auto* w : workers_)
      if (w->thread.joinable()) {
        wake(w);
        w->thread.join();
      }
    instance_ = nullptr;
    set_current_worker(nullptr);
    throw;
  }
}

scheduler::~scheduler() {
  if (!stopping_.load()) {
    try {
      shutdown();
    } catch (...) {
    }
  }
  for (worker* w : workers_) {
    while (fiber* f = w->fiber_pool) {
      w->fiber_pool = f->next_free;
      destroy_fiber(f);
    }
    delete w;
  }
  for (void* slab : slabs_) ::operator delete(slab, std::align_val_t{128});
  remove_signal_stack_for_thread();
  set_current_worker(nullptr);
  instance_ = nullptr;
}

void scheduler::worker_thread(unsigned index) {
  worker* w = workers_[index];
  set_current_worker(w);
  install_signal_stack_for_thread();
  set_timer_slack(poll_timer_slack_ns);
  if (trace::enabled()) trace::set_thread(static_cast<int>(index), "worker " + std::to_string(index));
  init_home_fiber(&w->home);
  fiber* f = take_fiber(w);
  switch_to(&w->home, f, nullptr, nullptr);
  // Back home: the runtime is stopping.
  flush_counts(w);
  destroy_home_fiber(&w->home);
  remove_signal_stack_for_thread();
}

void scheduler::shutdown() {
  worker* w = workers_[0];
  if (current_worker() != w)
    throw usage_error("hytask: the runtime must be shut down by the thread that created it");
  flush_counts(w);
  publish_children(&root_);
  root_.waiting.store(1, std::memory_order_seq_cst);
  help_until(
      w,
      [](void* self, bool) {
        auto* s = static_cast<scheduler*>(self);
        worker* w0 = s->workers_[0];
        std::int32_t cached = w0->done_parent == &s->root_ ? w0->done_count : 0;
        return s->root_.alive.load(std::memory_order_acquire) - cached == detail::body_share &&
               !s->mailbox_pending(w0);
      },
      this);
  root_.waiting.store(0, std::memory_order_relaxed);
  flush_counts(w);
  stopping_.store(true, std::memory_order_seq_cst);
  for (unsigned i = 1; i < workers_.size(); ++i) {
    wake(workers_[i]);
    if (workers_[i]->thread.joinable()) workers_[i]->thread.join();
  }
  if (root_.domain) {
    delete root_.domain;
    root_.domain = nullptr;
  }
  destroy_home_fiber(&w->home);
  set_timer_slack(main_timer_slack_);
  if (root_.has_error.load(std::memory_order_acquire)) {
    std::exception_ptr e = std::move(root_.error);
    root_.has_error.store(false);
    std::rethrow_exception(e);
  }
}

// ---- allocation ----------------------------------------------------------------------

task* scheduler::allocate(worker* w) {
  task* t = w->free_tasks;
  if (t == nullptr) {
    {
      std::lock_guard<std::mutex> lock(pool_mutex_);
      std::size_t take = std::min<std::size_t>(pool_.size(), task_batch);
      for (std::size_t i = 0; i < take; ++i) {
        task* p = pool_.back();
        pool_.pop_back();
        p->parent = w->free_tasks;
        w->free_tasks = p;
      }
      w->free_count += static_cast<unsigned>(take);
      if (take == 0) {
        constexpr std::size_t slab_tasks = 64;
        // 128-aligned so that a record's line pairs never straddle two records.
        void* mem = ::operator new(sizeof(task) * slab_tasks, std::align_val_t{128});
        slabs_.push_back(mem);
        auto* arr = static_cast<task*>(mem);
        for (std::size_t i = 0; i < slab_tasks; ++i) {
          task* p = ::new (&arr[i]) task;
          p->parent = w->free_tasks;
          w->free_tasks = p;
        }
        w->free_count += slab_tasks;
      }
    }
    t = w->free_tasks;
  }
  task* next = t->parent;
  w->free_tasks = next;
  --w->free_count;
  // Records often come back from another core: fetch the next one while this one is used.
  if (next != nullptr) {
    prefetch_for_write(next);
    prefetch_for_write(reinterpret_cast<char*>(next) + 64);
  }
  reset_task(t);
  return t;
}

void scheduler::free_task(worker* w, task* t) {
  // Leave line 2 clean for the next user (allocate rewrites line 0 only); a leaf task
  // without a name never dirtied it.
  if (t->succ_overflow) detail::free_successor_blocks(t);
  if (t->flags & detail::cold_line_flags) {
    t->name = nullptr;
    t->id = 0;
    if (t->has_error.load(std::memory_order_relaxed)) {
      t->error = nullptr;  // a pooled record must not keep an exception alive
      t->has_error.store(false, std::memory_order_relaxed);
    }
    t->on_complete = nullptr;
    t->hook_arg = nullptr;
  }
  if (w == nullptr) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool_.push_back(t);
    return;
  }
  t->parent = w->free_tasks;
  w->free_tasks = t;
  if (++w->free_count > task_cache_cap) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    for (unsigned i = 0; i < task_cache_cap / 2; ++i) {
      task* p = w->free_tasks;
      w->free_tasks = p->parent;
      pool_.push_back(p);
    }
    w->free_count -= task_cache_cap / 2;
  }
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
  return create_fiber(settings_.stack_size);
}

void scheduler::after_recycle(fiber* from, void*) {
  worker* w = current_worker();
  if (w->fiber_pool_size >= fiber_pool_cap) {
    destroy_fiber(from);
    return;
  }
  from->next_free = w->fiber_pool;
  w->fiber_pool = from;
  ++w->fiber_pool_size;
}

void scheduler::after_park(fiber* from, void* arg) {
  park_args pa = *static_cast<park_args*>(arg);  // copy: the parked stack may resume any time
  pa.t->fiber = from;
  pa.arm(pa.t, pa.arg);
}

// ---- ready queues and wake-ups -------------------------------------------------------

void scheduler::push_ready(worker* w, task* t) {
  (t->priority > 0 ? w->high : w->normal).push(t);
  notify_pushed();
}

void scheduler::notify_pushed() {
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

void scheduler::make_ready(task* t) {
  if (worker* w = current_worker()) push_ready(w, t);
  else inject(t);
}

void scheduler::inject(task* t) {
  {
    const int cls = t->priority > 0 ? 1 : 0;
    std::lock_guard<std::mutex> lock(inject_mutex_);
    injected_[cls].push_back(t);
    has_injected_.fetch_or(1u << cls, std::memory_order_relaxed);
  }
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

task* scheduler::take_injected(int cls) {
  std::lock_guard<std::mutex> lock(inject_mutex_);
  std::deque<task*>& q = injected_[cls];
  if (q.empty()) return nullptr;
  task* t = q.front();
  q.pop_front();
  if (q.empty()) has_injected_.fetch_and(~(1u << cls), std::memory_order_relaxed);
  return t;
}

void scheduler::post_to_mailbox(unsigned index, task* t) {
  worker* w = workers_[index];
  task* head = w->mailbox.load(std::memory_order_relaxed);
  do {
    t->link = head;
  } while (!w->mailbox.compare_exchange_weak(head, t, std::memory_order_release,
                                             std::memory_order_relaxed));
  full_fence();
  wake(w);
}

void scheduler::wake(worker* w) {
  std::uint32_t s = asleep;
  if (w->sleep_word.compare_exchange_strong(s, notified, std::memory_order_acq_rel))
    futex_wake(w->sleep_word);
}

void scheduler::wake_one() {
  const unsigned n = size();
  static std::atomic<unsigned> rotor{0};
  unsigned start = rotor.fetch_add(1, std::memory_order_relaxed);
  for (unsigned k = 0; k < n; ++k) {
    worker* w = workers_[(start + k) % n];
    std::uint32_t s = asleep;
    if (w->sleep_word.compare_exchange_strong(s, notified, std::memory_order_acq_rel)) {
      futex_wake(w->sleep_word);
      return;
    }
  }
}

// ---- finding work --------------------------------------------------------------------

task* scheduler::steal(worker* w) {
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->high.maybe_nonempty())
      if (task* t = o->high.steal()) return t;
  }
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (!o->normal.maybe_nonempty()) continue;
    task* t = o->normal.steal();
    if (t == nullptr) continue;
    // A steal costs a few cache-line transfers; take a batch while the victim has plenty
    // (the lines are now in this core's cache, so the next steals are cheap).
    std::int64_t batch = std::min<std::int64_t>(steal_batch_max, o->normal.size_estimate() / 2);
    for (std::int64_t k = 0; k < batch; ++k) {
      task* more = o->normal.steal();
      if (more == nullptr) break;
      w->normal.push(more);
    }
    return t;
  }
  return nullptr;
}

task* scheduler::steal_yielded(worker* w) {
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->yielded.maybe_nonempty())
      if (task* t = o->yielded.take_oldest()) return t;
  }
  return nullptr;
}

task* scheduler::find_work(worker* w) {
  task* t = nullptr;
  if (w->mailbox_local == nullptr && w->mailbox.load(std::memory_order_relaxed) != nullptr)
    w->mailbox_local = w->mailbox.exchange(nullptr, std::memory_order_acquire);
  const unsigned injected = has_injected_.load(std::memory_order_relaxed);
  if ((t = w->mailbox_local) != nullptr) {
    w->mailbox_local = t->link;
  } else if ((t = w->high.pop()) != nullptr) {
  } else if ((injected & 2u) && (t = take_injected(1)) != nullptr) {
  } else if ((injected & 1u) && ++w->inject_tick >= inject_check_period &&
             (t = take_injected(0)) != nullptr) {
    w->inject_tick = 0;
  } else if ((t = w->next) != nullptr) {
    w->next = nullptr;
    return t;
  } else if ((t = w->normal.pop()) == nullptr) {
    if (injected & 1u) t = take_injected(0);
    if (t == nullptr) t = steal(w);
    if (t == nullptr && w->yielded.maybe_nonempty()) t = w->yielded.take_oldest();
    if (t == nullptr) t = steal_yielded(w);
  }
  // The next-slot task must not sit unstealable behind other work.
  if (t != nullptr && w->next != nullptr) {
    push_ready(w, w->next);
    w->next = nullptr;
  }
  return t;
}

bool scheduler::work_visible(worker* w) {
  if (w->mailbox_local || w->mailbox.load(std::memory_order_relaxed) || w->next ||
      w->yielded.maybe_nonempty() || w->high.maybe_nonempty() || w->normal.maybe_nonempty() ||
      has_injected_.load(std::memory_order_relaxed))
    return true;
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->high.maybe_nonempty() || o->normal.maybe_nonempty() || o->yielded.maybe_nonempty())
      return true;
  }
  return false;
}

// ---- running and completing ----------------------------------------------------------

void scheduler::fiber_main() {
  scheduler* s = instance_;
  for (;;) {
    worker* w = current_worker();
    if (s->should_go_home(w, false)) {
      s->go_home(w);
      continue;
    }
    if (task* t = s->find_work(w)) {
      s->run(w, t);
      continue;
    }
    if (s->should_go_home(w, true)) {
      s->go_home(w);
      continue;
    }
    s->idle(w);
  }
}

bool scheduler::should_go_home(worker* w, bool found_nothing) {
  if (w->help_pred) return w->help_pred(w->help_arg, found_nothing);
  // Cancelled loop participants may still sit in the mailbox: run (and free) them first.
  return stopping_.load(std::memory_order_acquire) && !mailbox_pending(w);
}

bool scheduler::mailbox_pending(const worker* w) const {
  return w->mailbox_local != nullptr || w->mailbox.load(std::memory_order_acquire) != nullptr;
}

void scheduler::go_home(worker* w) {
  // Work only this worker could run must become stealable while main is away.
  if (w->next) {
    push_ready(w, w->next);
    w->next = nullptr;
  }
  flush_counts(w);
  switch_to(running_fiber(), &w->home, &after_recycle, nullptr);
}

void scheduler::run(worker* w, task* t) {
  begin_run(w, t);
  if (t->flags & detail::flag_started) {
    // Resume: continue on the task's parked fiber; this fiber goes back to the pool.
    switch_to(running_fiber(), static_cast<fiber*>(t->fiber), &after_recycle, nullptr);
    return;
  }
  t->flags |= detail::flag_started;
  try {
    t->invoke(t, (t->flags & detail::flag_failed) == 0);  // a failed dependency skips the body
  } catch (...) {
    record_error(t, std::current_exception());
    t->flags |= detail::flag_error;
  }
  if (t->flags & detail::flag_failed) t->flags |= detail::flag_error;
  w = current_worker();  // the body may have suspended and resumed elsewhere
  if (trace::enabled())
    trace::slice(t->name, "task", w->slice_start, trace::now(), task_id(w, t), "end");
  w->current_task = nullptr;
  body_done(w, t);
}

void scheduler::body_done(worker* w, task* t) {
  // Without children or holds nobody else touches alive: it is exactly the body's share.
  if (!(t->flags & detail::flag_parent)) {
    complete(w, t);
    return;
  }
  const std::int32_t drop = detail::body_share - t->unpublished;
  t->unpublished = 0;
  if (t->alive.fetch_sub(drop, std::memory_order_acq_rel) == drop) complete(w, t);
}

void scheduler::publish_children(task* t) {
  if (t->unpublished != 0) {
    t->alive.fetch_add(t->unpublished, std::memory_order_seq_cst);
    t->unpublished = 0;
  }
}

void scheduler::release_successors(worker* w, task* t) {
  const std::uint32_t n = t->nsucc.exchange(detail::successors_closed, std::memory_order_acq_rel);
  if (n == 0) return;
  // Successors were spawned on other cores, typically: start fetching all of them before the
  // first (serialising) atomic decrement.
  const std::uint32_t inline_n = std::min(n, detail::task_inline_successors);
  for (std::uint32_t i = 0; i < inline_n; ++i) prefetch_for_write(t->succ[i]);
  auto release = [&](task* s) {
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    if (w == nullptr) inject(s);
    else if (s->priority > 0 || w->next != nullptr) push_ready(w, s);
    else w->next = s;
  };
  for (std::uint32_t i = 0; i < inline_n; ++i) release(t->succ[i]);
  // Read only what the closed count covers: an adder that lost the race with completion may
  // still be linking a block after those.
  std::uint32_t left = n - inline_n;
  if (left == 0) return;
  detail::successor_block* b = t->succ_blocks;
  for (;;) {
    std::uint32_t k = std::min(left, detail::successor_block::slots);
    for (std::uint32_t i = 0; i < k; ++i) release(b->slot[i]);
    left -= k;
    if (left == 0) return;
    b = b->next;
  }
}

void scheduler::complete(worker* w, task* t) {
  release_successors(w, t);
  const std::uint32_t flags = t->flags;
  if ((flags & detail::flag_parent) && t->domain) {
    delete t->domain;
    t->domain = nullptr;
  }
  if (flags & detail::flag_internal) {
    if (t->on_complete) t->on_complete(t);
  } else {
    task* p = t->parent;
    // An exception is only possible if the body threw or a child passed one up.
    if ((flags & (detail::flag_error | detail::flag_parent)) &&
        t->has_error.load(std::memory_order_acquire))
      record_error(p, t->error);
    if (w != nullptr) {
      if (--w->inflight_delta <= -inflight_publish) publish_inflight(w);
    } else {
      inflight_.fetch_sub(1, std::memory_order_relaxed);
    }
    child_done(w, p);
  }
  if (last_ref(t)) free_task(w, t);
}

void scheduler::child_done_direct(worker* w, task* p) {
  std::int32_t now = p->alive.fetch_sub(1, std::memory_order_seq_cst) - 1;
  if (now == 0) complete(w, p);
  else if (now == detail::body_share) wake_waiting_parent(p);
}

void scheduler::child_done(worker* w, task* p) {
  if (w == nullptr) {
    child_done_direct(nullptr, p);
    return;
  }
  if (w->done_parent == p) {
    ++w->done_count;
    return;
  }
  while (w->done_parent != nullptr) flush_children(w);
  w->done_parent = p;
  w->done_count = 1;
}

void scheduler::flush_children(worker* w) {
  task* p = w->done_parent;
  std::int32_t n = w->done_count;
  w->done_parent = nullptr;
  w->done_count = 0;
  if (p == nullptr) return;
  std::int32_t now = p->alive.fetch_sub(n, std::memory_order_seq_cst) - n;
  if (now == 0) complete(w, p);
  else if (now == detail::body_share) wake_waiting_parent(p);
}

void scheduler::wake_waiting_parent(task* p) {
  if (p->waiting.load(std::memory_order_seq_cst) != 1) return;
  // Main waits by running tasks until its count is right; it re-checks when woken, so a
  // wake is all it needs (a late one is harmless). A task must be resumed exactly once.
  if (p == &root_) wake(workers_[0]);
  else if (p->waiting.exchange(0) == 1) resume(p);
}

void scheduler::flush_counts(worker* w) {
  while (w->done_parent != nullptr) flush_children(w);
  if (w->inflight_delta != 0) publish_inflight(w);
}

// ---- idling --------------------------------------------------------------------------

void scheduler::idle(worker* w) {
  flush_counts(w);
  // Outstanding operations: an idle worker polls them, back to back for HYTASK_SPIN_US
  // after it last ran a task or saw an operation complete, then yielding its core between
  // polls. It does not sleep while operations it may poll are pending: it has nothing else
  // to do, and a sleeping poller adds its sleep to every message it waits for — the peer
  // answers a ping-pong just after the poller dozed off, and both drift into long sleeps.
  // This is what a blocking MPI call does; the yield leaves the core to other threads when
  // it is oversubscribed. With nothing pending it spins briefly, then sleeps until woken.
  const std::int64_t spin_ns = static_cast<std::int64_t>(settings_.spin_us) * 1000;
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
      case poll_result::nothing_pending:
        w->poll_idle_since = -1;
        break;
    }
  }
  const std::int64_t spin_until = now_ns() + spin_ns;
  do {
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (work_visible(w) || should_go_home(w, false)) return;
    }
  } while (now_ns() < spin_until);

  w->sleep_word.store(asleep, std::memory_order_seq_cst);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  full_fence();
  // Operations registered since this worker last polled: poll them rather than sleep
  // (registering and then looking for sleepers, against announcing sleep and then checking
  // this, loses no wake-up).
  const bool pending = hooks_.has_pending != nullptr &&
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

void scheduler::wake_for_progress() {
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

task* scheduler::hold_current() {
  worker* w = current_worker();
  task* t = w ? w->current_task : nullptr;
  if (t == nullptr) return nullptr;
  t->flags |= detail::flag_parent;  // alive may now differ from the body's share
  t->alive.fetch_add(1, std::memory_order_relaxed);
  return t;
}

void scheduler::release_hold(task* t, std::exception_ptr error) {
  // The error is published by the decrement (acq_rel) before complete() reads it; the task
  // has flag_parent set (hold_current), so complete() looks at has_error.
  if (error) record_error(t, std::move(error));
  child_done_direct(current_worker(), t);
}

std::uint64_t scheduler::tasks_started() const noexcept {
  std::uint64_t n = 0;
  for (worker* w : workers_) n += w->tasks_run.load(std::memory_order_relaxed);
  return n;
}

// ---- waiting, suspension, yield, throttling ------------------------------------------

void scheduler::help_until(worker* w, help_pred_fn pred, void* arg) {
  if (pred(arg, false)) return;
  help_pred_fn saved_pred = w->help_pred;
  void* saved_arg = w->help_arg;
  w->help_pred = pred;
  w->help_arg = arg;
  switch_to(&w->home, take_fiber(w), nullptr, nullptr);
  w->help_pred = saved_pred;
  w->help_arg = saved_arg;
}

void scheduler::suspend(arm_fn arm, void* arg) {
  worker* w = current_worker();
  task* t = w->current_task;
  if (t == nullptr) {
    // main, outside any task: run other tasks until resume(root).
    root_resumed_.store(0, std::memory_order_seq_cst);
    arm(&root_, arg);
    help_until(
        w,
        [](void* self, bool) {
          return static_cast<scheduler*>(self)->root_resumed_.load(std::memory_order_acquire) != 0;
        },
        this);
    return;
  }
  if (trace::enabled()) {
    std::uint64_t now = trace::now();
    trace::slice(t->name, "task", w->slice_start, now, task_id(w, t), "suspend");
    trace::instant("suspend", "task", now, task_id(w, t));
  }
  park_args pa{t, arm, arg};
  // Hand-off: if the next task to run is itself parked, switch straight to it (one context
  // switch) instead of going through a loop fiber (two switches and a pool round trip).
  task* next = find_work(w);
  if (next != nullptr && (next->flags & detail::flag_started)) {
    begin_run(w, next);
    switch_to(running_fiber(), static_cast<fiber*>(next->fiber), &after_park, &pa);
    return;  // resumed by begin_run + a switch to this fiber
  }
  if (next != nullptr) unget(w, next);
  fiber* loop = take_fiber(w);
  w->current_task = nullptr;
  switch_to(running_fiber(), loop, &after_park, &pa);
  // Resumed by run() or by another task's hand-off, which set current_task.
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

void scheduler::begin_run(worker* w, task* t) {
  while (w->done_parent != nullptr && w->done_parent != t->parent) flush_children(w);
  w->tasks_run.store(w->tasks_run.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (hooks_.every != 0) busy_poll(w);
  w->current_task = t;
  if (trace::enabled()) {
    w->slice_start = trace::now();
    if (t->flags & detail::flag_started) trace::instant("resume", "task", w->slice_start, task_id(w, t));
  }
}

void scheduler::unget(worker* w, task* t) {
  if (t->flags & detail::flag_internal) {  // loop participants come from the mailbox only
    t->link = w->mailbox_local;
    w->mailbox_local = t;
  } else if (w->next == nullptr) {
    w->next = t;
  } else {
    push_ready(w, t);
  }
}

void scheduler::resume(task* t, bool high) {
  if (t == &root_) {
    root_resumed_.store(1, std::memory_order_seq_cst);
    wake(workers_[0]);
    return;
  }
  if (high) t->priority = 1;
  make_ready(t);
}

void scheduler::wait_children(worker* w) {
  task* me = w->current_task;
  const bool is_main = me == nullptr;
  if (is_main) me = &root_;
  if (w->done_parent == me) flush_children(w);
  publish_children(me);
  if (me->alive.load(std::memory_order_acquire) != detail::body_share) {
    if (is_main) {
      me->waiting.store(1, std::memory_order_seq_cst);
      help_until(
          w,
          [](void* self, bool) {
            auto* s = static_cast<scheduler*>(self);
            worker* w0 = s->workers_[0];
            std::int32_t cached = w0->done_parent == &s->root_ ? w0->done_count : 0;
            return s->root_.alive.load(std::memory_order_acquire) - cached == detail::body_share;
          },
          this);
      me->waiting.store(0, std::memory_order_relaxed);
      flush_counts(w);
    } else {
      suspend(
          [](task* t, void*) {
            t->waiting.store(1, std::memory_order_seq_cst);
            if (t->alive.load(std::memory_order_seq_cst) == detail::body_share &&
                t->waiting.exchange(0) == 1)
              instance_->resume(t);
          },
          nullptr);
    }
  }
  if (me->domain) me->domain->clear();
  if (me->has_error.load(std::memory_order_acquire)) {
    std::exception_ptr e = std::move(me->error);
    me->error = nullptr;
    me->has_error.store(false, std::memory_order_release);
    std::rethrow_exception(e);
  }
}

void scheduler::yield() {
  worker* w = current_worker();
  if (w->current_task == nullptr) {
    // main: run one ready task, if any.
    struct once {
      worker* w;
      std::uint64_t start;
    } arg{w, w->tasks_run.load(std::memory_order_relaxed)};
    help_until(
        w,
        [](void* a, bool found_nothing) {
          auto* o = static_cast<once*>(a);
          return found_nothing || o->w->tasks_run.load(std::memory_order_relaxed) != o->start;
        },
        &arg);
    return;
  }
  if (!work_visible(w)) return;
  suspend(
      [](task* t, void*) {
        // No wake-up: this worker stays busy and runs the task again itself when nothing
        // else is ready; idle workers that are awake may take it meanwhile.
        current_worker()->yielded.push(t);
      },
      nullptr);
}

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

// ---- names ---------------------------------------------------------------------------

const char* intern_name(std::string_view name) {
  if (name.empty()) return nullptr;
  struct entry {
    const char* key = nullptr;
    std::size_t len = 0;
    const char* value = nullptr;
  };
  thread_local entry cache[64];
  entry& e = cache[(reinterpret_cast<std::uintptr_t>(name.data()) >> 3 ^ name.size()) & 63];
  if (e.key == name.data() && e.len == name.size() && std::memcmp(e.value, name.data(), e.len) == 0)
    return e.value;
  static std::mutex m;
  static std::unordered_set<std::string> names;
  static bool warned = false;
  constexpr std::size_t max_names = 1 << 20;
  const char* value;
  {
    std::lock_guard<std::mutex> lock(m);
    auto it = names.find(std::string(name));
    if (it == names.end()) {
      if (names.size() >= max_names) {
        if (!warned) {
          std::fprintf(stderr,
                       "hytask: more than %zu distinct task names; further new names show as "
                       "'(unnamed)'. Use a few names and put varying data elsewhere.\n",
                       max_names);
          warned = true;
        }
        return "(unnamed)";
      }
      it = names.emplace(name).first;
    }
    value = it->c_str();
  }
  e = entry{name.data(), name.size(), value};
  return value;
}

}  // namespace hytask::core
