// The public task API on top of the scheduler: spawn internals, wait_all, yield, events.
#include <string>

#include "core/sched/cancellation.hpp"
#include "core/deps/dependency.hpp"
#include "platform/futex.hpp"
#include "core/ext/root_wait.hpp"
#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "core/deps/versions.hpp"
#include "hytask/core/event.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/core/task_group.hpp"
#include "hytask/core/task_handle.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/errors.hpp"

namespace hytask {
namespace detail {
namespace {

using core::sched::spawn_bias;

// spawn and this_task::yield are cancellation points (as in Schuchart et al.'s DART
// tasks): a task whose group, an ancestor's group or the job is cancelled gets
// hytask::task_cancelled there, which ends its body as a cancellation, not a failure. Main is
// not a task and never gets it. One load while nothing is cancelled.
[[gnu::noinline, gnu::cold]] void cancelled_here(core::worker* w, const char* call) {
  task* t = w->current_task;
  if (t == nullptr || !core::task_cancelled(t)) return;
  throw task_cancelled(std::string("hytask: ") + call +
                       " in a cancelled task (its task_group, an ancestor's or the job was "
                       "cancelled): a cancellation point; the task ends here");
}

inline void cancellation_point(core::scheduler* s, core::worker* w, const char* call) {
  if (s->cancel_active() != 0) [[unlikely]] cancelled_here(w, call);
}

// `check`: a cancellation point (the program's spawn), or not (the runtime's own tasks).
template <bool check>
inline task* spawn_common(core::worker* w) {
  core::scheduler* s = core::scheduler::instance();
  if constexpr (check) cancellation_point(s, w, "spawn");
  if (s->over_limit(w)) {
    s->throttle(w);
    w = core::current_worker();  // a throttled task may have moved
  }
  task* t = s->allocate(w);
  task* parent = w->current_task;
  if (parent == nullptr) {
    // Main's root: its line 0 holds `alive`, which workers completing its children write;
    // reading its flags or depth here would pull that line back on every spawn.
    parent = s->root();
    t->depth = 1;
  } else {
    t->depth = static_cast<std::uint8_t>(parent->depth < max_depth ? parent->depth + 1 : max_depth);
    if (!(parent->flags & flag_parent)) parent->flags |= flag_parent;
  }
  t->parent = parent;
  ++parent->unpublished;  // published in one atomic add at wait_all or when the body ends
  t->spawn_seq = ++parent->children_spawned;
  s->note_spawn(w);
  return t;
}

}  // namespace

void throw_null_region(const char* which, std::size_t bytes) {
  throw usage_error(std::string("hytask::") + which + ": null pointer with a region of " +
                    std::to_string(bytes) +
                    " bytes; pass a valid address, or a count of 0 for no dependency");
}

namespace {

task* named(task* t, int priority, std::string_view name, task_group* group) {
  t->priority = priority;
  if (!name.empty()) {
    t->name = core::intern_name(name);
    t->flags |= flag_cold;
  }
  if (group != nullptr) core::join_group(t, group->state());
  return t;
}

}  // namespace

task* new_task() { return spawn_common<true>(core::require_worker("spawn")); }

task* new_task(int priority, std::string_view name, task_group* group) {
  return named(spawn_common<true>(core::require_worker("spawn")), priority, name, group);
}

}  // namespace detail

namespace core::sched {
detail::task* new_runtime_task(int priority, std::string_view name) {
  return detail::named(detail::spawn_common<false>(core::require_worker("spawn")), priority, name,
                       nullptr);
}
}  // namespace core::sched

namespace detail {

void submit(task* t) {
  core::scheduler* s = core::scheduler::instance();
  s->classify(t);
  s->push_ready(core::current_worker(), t);
}

spawn_context::spawn_context(task* t) : task_(t), parent_(t->parent) {
  t->pending.store(spawn_bias, std::memory_order_relaxed);
  // Before the accesses: a task in the communication class raises its predecessors.
  core::scheduler::instance()->classify(t);
}

void spawn_context::region(const void* addr, std::size_t bytes, access_mode mode) {
  if (bytes == 0) return;
  auto lo = reinterpret_cast<std::uintptr_t>(addr);
  std::uintptr_t hi = lo + bytes;
  if (hi < lo)
    throw usage_error("hytask::spawn: a region wraps around the address space (" +
                      std::to_string(bytes) + " bytes); check the count passed to in/out/inout");
  dep_domain*& d = parent_->domain;
  if (d == nullptr) d = dep_domain::acquire();
  edges_ += d->access(task_, lo, hi, mode);
}

void spawn_context::program_region(const void* addr, std::size_t bytes, access_mode mode) {
  if (bytes != 0 && core::renamed_objects()) core::check_plain_access(task_, addr, bytes, mode);
  region(addr, bytes, mode);
}

void spawn_context::submit() {
  if (parent_->domain) parent_->domain->finish_spawn();
  task_->refs.store((task_->tracker_refs > 0 ? 2 : 1) + extra_refs_, std::memory_order_relaxed);
  if (edges_ == 0 && external_ == 0) {  // nobody can touch pending: no atomic needed
    task_->pending.store(0, std::memory_order_relaxed);
    core::scheduler::instance()->push_ready(core::current_worker(), task_);
    return;
  }
  const std::int32_t drop = spawn_bias - edges_ - external_;
  if (task_->pending.fetch_sub(drop, std::memory_order_acq_rel) == drop)
    core::scheduler::instance()->push_ready(core::current_worker(), task_);
}

void spawn_context::direct(task* pred) {
  if (pred == nullptr)
    throw usage_error("hytask::after(task_handle): the handle is empty (moved from, or default "
                      "made); pass the handle spawn_handle returned");
  if (pred->parent != parent_)
    throw usage_error(
        "hytask::after(task_handle): the handle's task was spawned by another task; a direct "
        "dependency names a sibling (a task spawned by the same task, or both by main): "
        "depend through memory (in/out) or an event otherwise");
  edges_ += add_edge(pred, task_);
}

void release_handle(task* t) noexcept {
  // After the runtime ended its records are gone with it: nothing to drop.
  if (core::scheduler* s = core::scheduler::instance()) s->drop_ref(t);
}

void wait_handle(task* t) {
  if (successors_are_closed(t->nsucc.load(std::memory_order_acquire))) return;
  core::worker* w = core::require_worker("task_handle::wait");
  task* self = w->current_task != nullptr ? w->current_task : core::scheduler::instance()->root();
  if (t->parent != self)
    throw usage_error("hytask::task_handle::wait: call it from the task that spawned the "
                      "handle's task (or main, for tasks main spawned)");
  // A sibling that sets an event once t has completed; this task suspends on the event.
  event done;
  spawn([&done] { done.set(); }, task_access{t});
  done.wait();
}

void abandon_spawn(spawn_context& ctx) {
  task* t = ctx.target();
  t->invoke(t, false);                 // destroys the callable
  t->invoke = [](task*, bool) {};      // and leaves nothing to run
  ctx.submit();
}

void spawn_context::raise_priority() { core::scheduler::instance()->raise_to_comm(task_); }

void release_external(task* t, std::exception_ptr error, bool high) {
  if (error) core::sched::fail_before_start(t, std::move(error));
  if (high) core::scheduler::instance()->raise_to_comm(t);
  if (t->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
    core::scheduler::instance()->make_ready(t);
}

}  // namespace detail

namespace {
core::root_wait_hooks g_root_wait;
}  // namespace

void wait_all() {
  core::worker* w = core::require_worker("wait_all");
  const bool root = w->current_task == nullptr;
  const core::root_wait_hooks hooks = g_root_wait;
  if (!root || hooks.before == nullptr) {
    core::scheduler::instance()->wait_children(w);
    return;
  }
  hooks.before(hooks.ctx);
  try {
    core::scheduler::instance()->wait_children(w);
  } catch (...) {
    const std::exception_ptr children = std::current_exception();
    try {
      hooks.after(hooks.ctx);
    } catch (const usage_error&) {
      throw;  // a misuse the layer found job-wide (a conflict) explains the children's failures
    } catch (...) {  // otherwise the children's failure is the one to report
    }
    std::rethrow_exception(children);
  }
  hooks.after(hooks.ctx);
}

namespace this_task {

void yield() {
  core::worker* w = core::require_worker("this_task::yield");
  core::scheduler* s = core::scheduler::instance();
  detail::cancellation_point(s, w, "this_task::yield");
  s->yield();
}

void poll() {
  core::worker* w = core::current_worker();
  if (w == nullptr) return;  // not a worker: nothing this thread may poll for
  core::scheduler::instance()->poll_hint(w);
}

bool inside_task() {
  core::worker* w = core::current_worker();
  return w != nullptr && w->current_task != nullptr;
}

std::string_view name() {
  core::worker* w = core::current_worker();
  if (w == nullptr || w->current_task == nullptr || w->current_task->name == nullptr) return {};
  return w->current_task->name;
}

std::uint64_t id() {
  core::worker* w = core::current_worker();
  return (w != nullptr && w->current_task != nullptr) ? core::task_id(w, w->current_task) : 0;
}

}  // namespace this_task

int worker_index() {
  core::worker* w = core::current_worker();
  return w ? static_cast<int>(w->index) : -1;
}

unsigned worker_count() {
  core::scheduler* s = core::scheduler::instance();
  return s ? s->size() : 0;
}

// ---- event ---------------------------------------------------------------------------

namespace {
constexpr std::uintptr_t event_set = 1;
}

event::~event() = default;

void event::set() {
  std::uintptr_t old = state_.exchange(event_set, std::memory_order_acq_rel);
  if (old == event_set) return;
  auto* w = reinterpret_cast<detail::event_waiter*>(old);
  while (w != nullptr) {
    detail::event_waiter* next = w->next;  // fire may free or resume the node's owner
    w->fire(w);
    w = next;
  }
}

bool event::is_set() const noexcept { return state_.load(std::memory_order_acquire) == event_set; }

void event::add_waiter(detail::event_waiter* w) {
  std::uintptr_t head = state_.load(std::memory_order_acquire);
  do {
    if (head == event_set) {
      w->fire(w);
      return;
    }
    w->next = reinterpret_cast<detail::event_waiter*>(head);
  } while (!state_.compare_exchange_weak(head, reinterpret_cast<std::uintptr_t>(w),
                                         std::memory_order_acq_rel, std::memory_order_acquire));
}

void event::wait() {
  if (is_set()) return;
  core::worker* w = core::current_worker();
  if (w == nullptr) {
    // A thread that is not a worker simply sleeps.
    struct node : detail::event_waiter {
      std::atomic<std::uint32_t> done{0};
    } n;
    n.fire = [](detail::event_waiter* e) {
      auto* self = static_cast<node*>(e);
      self->done.store(1, std::memory_order_release);
      core::futex_wake(self->done);
    };
    add_waiter(&n);
    while (n.done.load(std::memory_order_acquire) == 0) core::futex_wait(n.done, 0);
    return;
  }
  struct node : detail::event_waiter {
    event* ev;
    detail::task* t;
  } n;
  n.ev = this;
  core::scheduler::instance()->suspend(
      [](detail::task* t, void* arg) {
        auto* self = static_cast<node*>(arg);
        self->t = t;
        self->fire = [](detail::event_waiter* e) {
          core::scheduler::instance()->resume(static_cast<node*>(e)->t);
        };
        self->ev->add_waiter(self);
      },
      &n);
}

void event_access::apply(detail::spawn_context& ctx) const {
  if (ev->is_set()) return;
  struct node : detail::event_waiter {
    detail::task* t;
  };
  auto* n = new node;
  n->t = ctx.target();
  n->fire = [](detail::event_waiter* e) {
    auto* self = static_cast<node*>(e);
    detail::task* t = self->t;
    delete self;
    detail::release_external(t);
  };
  ctx.add_external();
  ev->add_waiter(n);
}

}  // namespace hytask

void hytask::core::set_root_wait_hooks(root_wait_hooks h) noexcept { hytask::g_root_wait = h; }

[[noreturn]] void hytask::core::no_worker(const char* what) {
  if (scheduler::instance() == nullptr)
    throw usage_error(std::string("hytask::") + what +
                      " called with no hytask::runtime alive: construct one in main "
                      "(hytask::runtime rt(argc, argv);) and keep it alive while tasks run");
  throw usage_error(std::string("hytask::") + what +
                    " called from a thread that is not a hytask worker: call it from main (the "
                    "thread that created the runtime) or from inside a task");
}
