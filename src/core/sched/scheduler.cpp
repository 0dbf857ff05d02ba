// The scheduler: starting and stopping the workers, and the worker a thread runs as.
#include "core/sched/scheduler.hpp"

#include <string>

#include "platform/cpu.hpp"
#include "core/deps/dependency.hpp"
#include "platform/futex.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "core/ext/scope_ext.hpp"
#include "platform/thread_name.hpp"
#include "platform/topology.hpp"
#include "core/deps/versions.hpp"
#include "hytask/errors.hpp"
#include "trace/trace.hpp"

namespace hytask::core {

using namespace sched;

namespace {

// Writes the running task's name for the stack overflow message (async-signal-safe).
std::size_t describe_running(char* buf, std::size_t cap) {
  worker* w = current_worker();
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

}  // namespace

scheduler* scheduler::instance_ = nullptr;

std::uint64_t task_id(worker* w, task* t) {
  if (t->id == 0) {
    t->flags |= detail::flag_cold;
    t->id = w->next_id;
    w->next_id += scheduler::instance()->size();
  }
  return t->id;
}

// ---- construction and shutdown -------------------------------------------------------

scheduler::scheduler(const core_settings& s, const progress_hooks& hooks)
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
    w->free_cache = std::make_unique<task*[]>(task_cache_cap);
    workers_.push_back(w);
  }
  for (unsigned i = 0; i < n; ++i) workers_[i]->victims = steal_order(place.package_of_worker, i);

  prefault_records();
  start_versions(&root_);
  set_fiber_main(&worker_loop);
  install_overflow_handler(&describe_running, settings_.stack_size);

  worker* w0 = workers_[0];
  set_current_worker(w0);
  init_home_fiber(&w0->home);
  main_timer_slack_ = set_timer_slack(poll_timer_slack_ns);  // restored by shutdown
  instance_ = this;
  if (trace::enabled()) trace::set_thread(0, "worker 0 (main)");

  try {
    for (unsigned i = 1; i < n; ++i) {
      int pu = place.pu_of_worker[i];
      workers_[i]->thread = std::thread([this, i, pu] {
        // Named once pinned: a binding report that sees the name sees the binding.
        if (settings_.pin == pin_policy::cores) pin_thread_to_pu(pu);
        name_this_thread("hytask-worker");
        worker_thread(i);
      });
    }
    // Main is pinned after the workers exist: a thread inherits its creator's affinity, and
    // had main been pinned first, every worker would start queued behind main on main's core
    // until the OS preempted main (about 2 ms measured), then move to its own.
    if (settings_.pin == pin_policy::cores) {
      remember_unpinned_affinity();
      pin_thread_to_pu(place.pu_of_worker[0]);
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
  release_scope_ext(&root_);
  end_versions(&root_);
  destroy_home_fiber(&w->home);
  set_timer_slack(main_timer_slack_);
  if (settings_.pin == pin_policy::cores) {
    leave_main_core();
    forget_unpinned_affinity();
  }
  if (root_.has_error.load(std::memory_order_acquire))
    sched::rethrow_children_failures(&root_, "the runtime's end");
}

}  // namespace hytask::core
