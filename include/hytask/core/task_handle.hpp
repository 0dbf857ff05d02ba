// task_handle: a dependency on one task by name rather than by the memory it touches (the
// "direct" dependencies of Schuchart et al.'s DART tasks).
//
// ```cpp context=tasks
// hytask::task_handle setup = hytask::spawn_handle([] { /* read the input */ });
// hytask::spawn([] { /* solve */ }, hytask::after(setup));  // starts once setup completed
// setup.wait();  // the spawning task (or main) waits for it alone
// ```
//
// - spawn_handle takes what spawn takes (options, body, accesses) and returns a handle to the
//   task; after(handle) is an access like in/out: the new task starts once that one
//   has completed (its body and its children), and is skipped if it failed or was cancelled,
//   as with a dependency through memory. Handles mix freely with in/out/inout.
// - Only siblings: the task that names a handle in after() must be spawned by the task (or
//   main) that spawned the handle's task; other tasks get hytask::usage_error. Across
//   ranks, depend through global memory (hytask::global).
// - wait() suspends the calling task (main runs other tasks) until the task has completed,
//   from the task that spawned it; done() tells without waiting. A failure is not thrown
//   here: it reaches the wait_all that covers the task.
// - A handle keeps the task's record (a few hundred bytes) until it is destroyed; it is moved,
//   not copied.
#pragma once

#include <atomic>
#include <type_traits>
#include <utility>

#include "hytask/core/spawn.hpp"

namespace hytask {

namespace detail {
// Drops the reference a handle holds on t.
void release_handle(task* t) noexcept;
// task_handle::wait.
void wait_handle(task* t);
}  // namespace detail

class task_handle {
 public:
  task_handle() noexcept = default;
  task_handle(task_handle&& o) noexcept : t_(std::exchange(o.t_, nullptr)) {}
  task_handle& operator=(task_handle&& o) noexcept {
    if (this != &o) {
      if (t_ != nullptr) detail::release_handle(t_);
      t_ = std::exchange(o.t_, nullptr);
    }
    return *this;
  }
  task_handle(const task_handle&) = delete;
  task_handle& operator=(const task_handle&) = delete;
  ~task_handle() {
    if (t_ != nullptr) detail::release_handle(t_);
  }

  bool valid() const noexcept { return t_ != nullptr; }
  // Whether the task has completed (succeeded, failed or was cancelled).
  bool done() const noexcept {
    return t_ == nullptr ||
           detail::successors_are_closed(t_->nsucc.load(std::memory_order_acquire));
  }
  // Returns once the task has completed; call it from the task that spawned it, or main.
  void wait() const {
    if (t_ != nullptr) detail::wait_handle(t_);
  }

  // Internal: takes over a reference the spawn took for the handle.
  explicit task_handle(detail::task* t) noexcept : t_(t) {}
  detail::task* get() const noexcept { return t_; }

 private:
  detail::task* t_ = nullptr;
};

struct task_access {
  detail::task* pred;
  void apply(detail::spawn_context& ctx) const { ctx.direct(pred); }
};

// A dependency on the task of h (a sibling of the task being spawned).
inline task_access after(const task_handle& h) { return task_access{h.get()}; }

template <class F, access... A>
task_handle spawn_handle(const task_options& opts, F&& f, const A&... accesses) {
  (detail::prepare(accesses), ...);
  detail::task* t = detail::new_task(opts.priority, opts.name, opts.group);
  detail::spawn_with_context(t, /*handle=*/true, std::forward<F>(f), accesses...);
  return task_handle(t);
}

template <class F, access... A>
  requires(!std::is_same_v<std::decay_t<F>, task_options>)
task_handle spawn_handle(F&& f, const A&... accesses) {
  return spawn_handle(task_options{}, std::forward<F>(f), accesses...);
}

}  // namespace hytask
