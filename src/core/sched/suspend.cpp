// Suspension: waiting for children, events and holds without blocking the worker; yield.
#include "core/sched/scheduler.hpp"

#include <cstdio>

#include "core/deps/dependency.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "core/ext/scope_ext.hpp"
#include "core/deps/versions.hpp"
#include "platform/messages.hpp"
#include "trace/trace.hpp"

namespace hytask::core {

using namespace sched;

namespace {

struct park_args {
  task* t;
  arm_fn arm;
  void* arg;
};

}  // namespace

void scheduler::after_park(fiber* from, void* arg) {
  park_args pa = *static_cast<park_args*>(arg);  // copy: the parked stack may resume any time
  HYTASK_ASSERT(from->parked_task == nullptr, "a fiber is parked with two tasks");
#if defined(HYTASK_ASSERTIONS)
  from->parked_task = pa.t;
#endif
  pa.t->fiber = from;
  pa.arm(pa.t, pa.arg);
}

task* scheduler::hold_current() {
  worker* w = current_worker();
  task* t = w ? w->current_task : nullptr;
  if (t == nullptr) return nullptr;
  t->flags |= detail::flag_parent;  // alive may now differ from the body's share
  t->alive.fetch_add(1, std::memory_order_relaxed);
  t->holds.fetch_add(1, std::memory_order_relaxed);
  return t;
}

void scheduler::release_hold(task* t, std::exception_ptr error) {
  // The error is published by the decrement (acq_rel) before complete() reads it; the task
  // has flag_parent set (hold_current), so complete() looks at has_error.
  if (error) record_error(t, std::move(error));
  t->holds.fetch_sub(1, std::memory_order_seq_cst);  // first: see task::holds
  child_done_direct(current_worker(), t);
}

void scheduler::help_until(worker* w, help_pred_fn pred, void* arg) {
  if (pred(arg, false)) return;
  // A new wait: if it idles, it polls back to back for HYTASK_SPIN_US first, as a wait that
  // follows a task does (idle.cpp), and not in the sleeps of the previous wait's stretch,
  // which other threads' polls may have ended without this one seeing a completion (main
  // in a ping-pong slept up to 1 ms per round trip on a crowded node).
  w->poll_idle_since = -1;
  help_pred_fn saved_pred = w->help_pred;
  void* saved_arg = w->help_arg;
  w->help_pred = pred;
  w->help_arg = arg;
  switch_to(&w->home, take_fiber(w), nullptr, nullptr);
  w->help_pred = saved_pred;
  w->help_arg = saved_arg;
  w->idle_now.store(false, std::memory_order_relaxed);  // back in the program's own code
}

void scheduler::escape_inline(worker* w) {
  if (w->escape_fn == nullptr) return;
  void (*fn)(void*) = w->escape_fn;
  w->escape_fn = nullptr;
  fn(w->escape_arg);
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
  escape_inline(w);
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
    w->current_task = nullptr;  // t is parked from here on
    begin_run(w, next);
    unpark(next);
    switch_to(running_fiber(), static_cast<fiber*>(next->fiber), &after_park, &pa);
    return;  // resumed by begin_run + a switch to this fiber
  }
  if (next != nullptr) unget(w, next);
  fiber* loop = take_fiber(w);
  w->current_task = nullptr;
  switch_to(running_fiber(), loop, &after_park, &pa);
  // Resumed by run() or by another task's hand-off, which set current_task.
}

void scheduler::unget(worker* w, task* t) {
  note_queued(t);
  if (t->flags & detail::flag_internal) {  // loop participants come from the mailbox only
    t->link = w->mailbox_local;
    w->mailbox_local = t;
  } else {
    HYTASK_ASSERT(w->first == nullptr, "one task at most is given back between two finds");
    w->first = t;
  }
}

void scheduler::resume(task* t, bool comm) {
  if (t == &root_) {
    root_resumed_.store(1, std::memory_order_seq_cst);
    wake(workers_[0]);
    return;
  }
  if (comm) raise_to_comm(t);
  make_ready(t);
}

void scheduler::resume_next(worker* w, task* t) {
  if (t == &root_ || w == nullptr || w->next != nullptr || ready_key(t) != 0) {
    resume(t);
    return;
  }
  note_queued(t);
  w->next = t;
}

void scheduler::wait_children(worker* w, bool rethrow) {
  task* me = w->current_task;
  const bool is_main = me == nullptr;
  if (is_main) me = &root_;
  if (w->done_parent == me) flush_children(w);
  publish_children(me);
  // Children only: holds (bound requests) keep the task from completing, not wait_all.
  if (!children_done(me)) {
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
            // All children done already: run it next, on this worker.
            if (children_done(t) &&
                t->waiting.exchange(0) == 1)
              instance_->resume_next(current_worker(), t);
          },
          nullptr);
    }
  }
  if (me->domain) me->domain->clear();
  release_scope_ext(me);  // the children are done: nothing refers to their scope's state
  if (me->versions != nullptr) wait_versions(me);  // main's always has
  if (rethrow && me->has_error.load(std::memory_order_acquire))
    rethrow_children_failures(me, "wait_all");
}

void sched::rethrow_children_failures(task* t, const char* where) {
  std::exception_ptr e = std::move(t->error);
  t->error = nullptr;
  const std::uint32_t threw = t->children_threw.exchange(0, std::memory_order_relaxed);
  const std::uint32_t skipped = t->children_skipped.exchange(0, std::memory_order_relaxed);
  t->has_error.store(false, std::memory_order_release);
  if (threw + skipped > 1) {
    messagef(verbosity::warning,
             "%s: %u tasks failed (%u threw, %u skipped because a task or request they depend "
             "on failed); rethrowing the first exception",
             where, threw + skipped, threw, skipped);
  }
  std::rethrow_exception(e);
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
  escape_inline(w);  // what the task had yet to run in line is work for the others
  // A wait this worker helps in while it runs the task (main's, in help_until) may have
  // ended: main's own context, resumed, is work no queue shows. Yielding lets the loop go
  // back to it; returning here kept a yielding loop on main, and main's wait with it, until
  // the loop ended by itself.
  const bool helped_wait_done = w->help_pred != nullptr && w->help_pred(w->help_arg, false);
  if (!helped_wait_done && !work_visible(w)) {
    // Nothing else is ready, so the yielding task is all this worker has: it may be waiting
    // for something that only communication releases (a flag set by a task that waits for a
    // message). Poll as an idle worker would, or have the thread that may poll asked, and
    // switch only if that released work; never polling here left such a loop spinning
    // forever where no other thread polls (masteronly mode).
    if (hooks_.poll == nullptr || hooks_.poll(hooks_.ctx, w->index, true) != poll_result::progressed ||
        !work_visible(w))
      return;
  }
  suspend(
      [](task* t, void*) {
        // No wake-up: this worker stays busy and runs the task again itself when nothing
        // else is ready; idle workers that are awake may take it meanwhile.
        note_queued(t);
        current_worker()->yielded.push(t);
      },
      nullptr);
}

}  // namespace hytask::core
