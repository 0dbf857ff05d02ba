// Running and completing tasks: the scheduling loop, a task's body, its completion, releasing its successors and counting it out of its parent.
#include "core/sched/scheduler.hpp"

#include "core/sched/cancellation.hpp"
#include "platform/cpu.hpp"
#include "core/deps/dependency.hpp"
#include "core/deps/successors.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "core/ext/scope_ext.hpp"
#include "core/deps/versions.hpp"
#include "trace/trace.hpp"

namespace hytask::core {

using namespace sched;

// ---- running and completing ----------------------------------------------------------

void worker_loop() {
  scheduler* s = scheduler::instance();
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
  spill_slot(w, w->first);
  spill_slot(w, w->next);
  if (task* h = w->handoff.exchange(nullptr, std::memory_order_acquire)) spill_slot(w, h);
  flush_counts(w);
  switch_to(running_fiber(), &w->home, &after_recycle, nullptr);
}

void scheduler::run(worker* w, task* t) {
  begin_run(w, t);
  if (t->flags & detail::flag_started) {
    // Resume: continue on the task's parked fiber; this fiber goes back to the pool.
    unpark(t);
    switch_to(running_fiber(), static_cast<fiber*>(t->fiber), &after_recycle, nullptr);
    return;
  }
  t->flags |= detail::flag_started;
  // The successor line was last written by the spawning core (linking successors): fetch
  // it while the body runs, not when completion needs it.
  if (!(t->flags & detail::flag_untracked)) prefetch_for_write(&t->nsucc);
  // A failed dependency skips the body; so does a cancellation (core/cancel.hpp), looked for
  // only while one is in progress.
  bool run_body = true;
  if ((t->flags & detail::flag_failed) |
      static_cast<std::uint32_t>(cancel_active_.load(std::memory_order_acquire)))
    run_body = start_or_skip(t);
  try {
    t->invoke(t, run_body);
  } catch (...) {
    record_error(t, std::current_exception());
    t->flags |= detail::flag_error;
  }
  if (t->flags & detail::flag_failed) t->flags |= detail::flag_error;
  w = current_worker();  // the body may have suspended and resumed elsewhere
  if (trace::enabled() && !(t->flags & detail::flag_untraced))
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
  if (t->flags & detail::flag_untracked) return;  // nothing links to it, nothing reads the close
  // A task that failed (its body threw, it was skipped, or a child failed) fails its
  // successors: they are skipped, and fail theirs in turn. The closed count says so to the
  // tasks spawned later.
  const bool failed = has_failed(t);
  detail::release_successors(t, failed, [&](task* s) {
    if (failed) fail_before_start(s, t->error);
    if (s->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) place_released(w, s);
  });
}

void scheduler::place_released(worker* w, task* s) {
  if (w == nullptr) {
    inject(s);
  } else if (ready_key(s) != 0) {
    push_ready(w, s);
  } else if (w->next == nullptr) {
    note_queued(s);
    w->next = s;
    // It runs next: its callable's second line comes from the spawning core too.
    prefetch_for_write(reinterpret_cast<char*>(s) + 64);
  } else if (!hand_off(w, s)) {
    push_ready(w, s);
  }
}

void scheduler::complete(worker* w, task* t) {
  // Its failure status is decided here, once, before its successor list closes: a task
  // spawned later that names it reads the status through that close (add_edge), and a
  // successor writing the same version would settle it too. Completing after its group was
  // cancelled, it counts as cancelled (core/cancel.hpp); a cancel after this does not change
  // it. Nothing writes its flags or error from here on.
  if ((t->flags & detail::flag_grouped) || cancel_active_.load(std::memory_order_acquire) != 0)
    mark_if_cancelled(t);
  // A failure that counts (a cancellation does not): failed_by_cancellation may normalise
  // the error, so it runs before the close as well.
  const bool counted_failure = has_failed(t) && !failed_by_cancellation(t);
  if (t->flags & detail::flag_versions) settle_written_versions(t);
  release_successors(w, t);
  const std::uint32_t flags = t->flags;
  // Before the parent hears of it: a wait_all that returns has told the watcher of every
  // child (the global layer counts its completion messages there), and the versions a child
  // held are free for the parent's copy-back.
  if (flags & (detail::flag_watched | detail::flag_versions | detail::flag_grouped)) {
    if (flags & detail::flag_grouped) leave_group(t);  // before its parent hears of it
    if (flags & detail::flag_versions) complete_versions(t);
    if (flags & detail::flag_watched) t->on_complete(t);
  }
  if (flags & detail::flag_parent) {
    if (t->domain) {
      detail::dep_domain::recycle(t->domain);
      t->domain = nullptr;
    }
    release_scope_ext(t);
  }
  if (flags & detail::flag_internal) {
    if (t->on_complete) t->on_complete(t);
  } else {
    task* p = t->parent;
    // An exception is only possible if the body threw or a child passed one up. The parent
    // learns the first exception and how many tasks failed, to report at its wait_all.
    // A cancelled task is no failure (leave_group reported the cause, if any).
    if (counted_failure) {
      record_error(p, t->error);
      std::uint32_t threw = t->children_threw.load(std::memory_order_relaxed);
      std::uint32_t skipped = t->children_skipped.load(std::memory_order_relaxed);
      if (flags & detail::flag_failed) ++skipped;
      else if (flags & detail::flag_error) ++threw;
      if (threw) p->children_threw.fetch_add(threw, std::memory_order_relaxed);
      if (skipped) p->children_skipped.fetch_add(skipped, std::memory_order_relaxed);
    }
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
  after_drop(w, p, p->alive.fetch_sub(1, std::memory_order_seq_cst) - 1);
}

void scheduler::after_drop(worker* w, task* p, std::int32_t now) {
  if (now == 0) complete(w, p);
  // All children done (holds, from bind, are not children): a waiting parent resumes. The
  // holds count is read only when something besides the body's share is left.
  else if (now == detail::body_share ||
           now - p->holds.load(std::memory_order_seq_cst) == detail::body_share)
    wake_waiting_parent(w, p);
}

void scheduler::spill_slot(worker* w, task*& slot) {
  if (slot == nullptr) return;
  enqueue(w, slot);  // still queued: no note
  slot = nullptr;
  notify_pushed();
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
  after_drop(w, p, p->alive.fetch_sub(n, std::memory_order_seq_cst) - n);
}

void scheduler::wake_waiting_parent(worker* w, task* p) {
  if (p->waiting.load(std::memory_order_seq_cst) != 1) return;
  // Main waits by running tasks until its count is right; it re-checks when woken, so a
  // wake is all it needs (a late one is harmless). A task must be resumed exactly once.
  if (p == &root_) wake(workers_[0]);
  else if (p->waiting.exchange(0) == 1) resume_next(w, p);
}

void scheduler::flush_counts(worker* w) {
  while (w->done_parent != nullptr) flush_children(w);
  if (w->inflight_delta != 0) publish_inflight(w);
}

void scheduler::note_start(worker* w) {
  w->tasks_run.store(w->tasks_run.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (hooks_.every != 0) busy_poll(w);
}

void scheduler::begin_run(worker* w, task* t) {
  HYTASK_ASSERT(w->current_task == nullptr, "a worker runs one task at a time");
  if (w->done_parent != nullptr && w->done_parent != t->parent) {
    while (w->done_parent != nullptr) flush_children(w);
    // A parent resumed by that flush must not wait, unstealable in the next slot, while t runs.
    spill_slot(w, w->next);
  }
  if (w->idle_now.load(std::memory_order_relaxed)) w->idle_now.store(false, std::memory_order_relaxed);
  note_start(w);
  w->current_task = t;
  if (trace::enabled()) {
    w->slice_start = trace::now();
    if (t->flags & detail::flag_started) trace::instant("resume", "task", w->slice_start, task_id(w, t));
  }
}

}  // namespace hytask::core
