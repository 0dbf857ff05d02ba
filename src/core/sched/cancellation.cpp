// Cancellation: task groups and cancelled tasks (core/cancel.hpp).
#include "core/sched/cancellation.hpp"

#include <atomic>
#include <mutex>

#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "hytask/core/task_group.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/errors.hpp"

namespace hytask::detail {

struct group_state {
  std::atomic<bool> cancelled{false};
  std::atomic<std::int32_t> refs{1};  // the handle, and each task not completed
  std::atomic<std::int32_t> live{0};  // tasks not completed
  std::mutex mu;
  bool counted = false;        // in the scheduler's cancel_active (under mu)
  std::exception_ptr cause;    // written under mu before `cancelled`, then read-only
};

}  // namespace hytask::detail

namespace hytask::core {

using detail::group_state;
using detail::task;

bool is_task_cancelled(const std::exception_ptr& e) noexcept {
  if (!e) return false;
  try {
    std::rethrow_exception(e);
  } catch (const hytask::task_cancelled&) {
    return true;
  } catch (...) {
    return false;
  }
}

namespace {

std::atomic<cancel_hook_fn> g_hook{nullptr};

constexpr std::uint32_t never_cancelled = detail::flag_internal | detail::flag_uncancellable;

// The job's cancellation, as a group every task descends from.
std::atomic<bool> g_job{false};
group_state& job_state() {
  static group_state* g = [] {
    auto* s = new group_state;
    s->cancelled.store(true, std::memory_order_relaxed);
    return s;
  }();
  return *g;
}

void call_hook() noexcept {
  if (cancel_hook_fn f = g_hook.load(std::memory_order_acquire)) f();
}

void unref(group_state* g) noexcept {
  if (g->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete g;
}

// The group whose cancellation reaches t, or null.
group_state* cancelling_group(const task* t) noexcept {
  const task* root = scheduler::instance()->root();
  for (; t != nullptr && t != root; t = t->parent)
    if (group_state* g = t->group; g != nullptr && g->cancelled.load(std::memory_order_acquire))
      return g;
  return g_job.load(std::memory_order_acquire) ? &job_state() : nullptr;
}

void cancel(group_state* g, std::exception_ptr cause) noexcept {
  {
    std::lock_guard lk(g->mu);
    if (g->cancelled.load(std::memory_order_relaxed)) return;
    g->cause = std::move(cause);
    g->cancelled.store(true, std::memory_order_seq_cst);
    // Tasks of the group in flight must be looked at where they start and complete; a task
    // spawned into it from now on is marked at spawn.
    if (g->live.load(std::memory_order_seq_cst) > 0) {
      g->counted = true;
      if (scheduler* s = scheduler::instance()) s->add_cancel_active(1);
    }
  }
  call_hook();
}

}  // namespace

const std::exception_ptr& cancel_marker() noexcept {
  static const std::exception_ptr marker =
      std::make_exception_ptr(hytask::task_cancelled("hytask: the task was cancelled"));
  return marker;
}

bool task_cancelled(const task* t) noexcept { return cancelling_group(t) != nullptr; }

void join_group(task* t, group_state* g) noexcept {
  t->group = g;
  t->flags |= detail::flag_grouped;
  g->refs.fetch_add(1, std::memory_order_relaxed);
  g->live.fetch_add(1, std::memory_order_seq_cst);
  // Against cancel(): it stores `cancelled` and then reads `live`; here the reverse. One of
  // the two sees the other, so the task is either counted as in flight or marked now.
  if (g->cancelled.load(std::memory_order_seq_cst)) sched::fail_before_start(t, cancel_marker());
}

bool start_or_skip(task* t) noexcept {
  if (t->flags & detail::flag_failed) return false;
  if ((t->flags & never_cancelled) || !task_cancelled(t)) return true;
  sched::fail_before_start(t, cancel_marker());
  return false;
}

void mark_if_cancelled(task* t) noexcept {
  if (t->flags & never_cancelled) return;
  group_state* g = cancelling_group(t);
  if (g == nullptr) return;
  // A task_cancelled its body let escape (an interrupted MPI call) is no failure either.
  if (!t->has_error.load(std::memory_order_acquire)) {
    sched::record_error(t, cancel_marker());
    t->flags |= detail::flag_error;
  } else if (t->error != cancel_marker() && is_task_cancelled(t->error)) {
    t->error = cancel_marker();
  }
}

bool failed_by_cancellation(task* t) noexcept {
  if (t->error == cancel_marker()) return true;
  if (!is_task_cancelled(t->error) || (t->flags & never_cancelled) || !task_cancelled(t))
    return false;
  t->error = cancel_marker();
  return true;
}

void leave_group(task* t) noexcept {
  group_state* own = t->group;
  // complete() marked it before its successors were released, if its group was cancelled
  // by then; a cancel after that leaves it a completed task.
  if (t->error == cancel_marker()) {
    // The cause reaches the wait_all that covers the group's tasks (first exception wins).
    if (own->cancelled.load(std::memory_order_acquire) && own->cause && t->parent != nullptr)
      sched::record_error(t->parent, own->cause);
  } else if (sched::has_failed(t) && t->error != cancel_marker() && !is_task_cancelled(t->error)) {
    // A task of the group that failed cancels the group, with its exception.
    cancel(own, t->error);
  }
  t->group = nullptr;
  if (own->live.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
      own->cancelled.load(std::memory_order_seq_cst)) {
    std::lock_guard lk(own->mu);
    if (own->counted && own->live.load(std::memory_order_relaxed) == 0) {
      own->counted = false;
      scheduler::instance()->add_cancel_active(-1);
    }
  }
  unref(own);
}

void cancel_job() noexcept {
  if (g_job.exchange(true, std::memory_order_seq_cst)) return;
  if (scheduler* s = scheduler::instance()) s->add_cancel_active(1);
  call_hook();
}

void end_job_cancel() noexcept {
  if (!g_job.exchange(false, std::memory_order_seq_cst)) return;
  if (scheduler* s = scheduler::instance()) s->add_cancel_active(-1);
}

bool job_cancelled() noexcept { return g_job.load(std::memory_order_acquire); }

void set_cancel_hook(cancel_hook_fn f) noexcept { g_hook.store(f, std::memory_order_release); }

}  // namespace hytask::core

namespace hytask {

task_group::task_group() : state_(new detail::group_state) {}

task_group::~task_group() { core::unref(state_); }

void task_group::cancel() noexcept { core::cancel(state_, nullptr); }

void task_group::cancel(std::exception_ptr cause) noexcept { core::cancel(state_, std::move(cause)); }

bool task_group::cancelled() const noexcept { return state_->cancelled.load(std::memory_order_acquire); }

bool this_task::cancelled() noexcept {
  core::scheduler* s = core::scheduler::instance();
  if (s == nullptr || s->cancel_active() == 0) return false;
  core::worker* w = core::current_worker();
  if (w == nullptr) return false;
  if (w->current_task == nullptr) return core::job_cancelled();  // main: the job's
  if (w->current_task->flags & core::never_cancelled) return false;
  return core::task_cancelled(w->current_task);
}

}  // namespace hytask
