// spawn and wait_all: create tasks and wait for them.
//
// ```cpp context=tasks
// hytask::runtime rt(argc, argv);
// std::vector<double> a(n), b(n);
// hytask::spawn([&] { produce(a); }, hytask::out(a));
// hytask::spawn({.priority = 1, .name = "consume"}, [&] { consume(a, b); },
//               hytask::in(a), hytask::out(b));
// hytask::wait_all();
// ```
//
// A task is a callable run once on a worker, on its own fiber: it may suspend (yield, wait
// for its children, wait for an event or — with the MPI layer — for a message) and its
// worker runs other tasks meanwhile. Captured state must outlive the task: capture by value
// what changes, like loop indices.
//
// A task completes when its body has returned and all the tasks it spawned have completed;
// only then are the tasks that depend on it released.
//
// Throttling: when more than HYTASK_MAX_TASKS tasks are in flight, spawn runs ready tasks
// (or lets the calling task yield) instead of creating more, so memory stays bounded.
#pragma once

#include <string_view>
#include <type_traits>
#include <utility>

#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"
#include "hytask/core/detail/version_body.hpp"
#include "hytask/core/task_options.hpp"

namespace hytask {

namespace detail {

// Allocates a task whose parent is the calling task (or main's root). Throws
// hytask::usage_error when there is no runtime or the caller is not main or a task.
task* new_task(int priority, std::string_view name, task_group* group = nullptr);
task* new_task();
// Makes a task with no accesses ready.
void submit(task* t);

// Registers the accesses of one task being spawned, then submits it.
class spawn_context {
 public:
  explicit spawn_context(task* t);
  spawn_context(const spawn_context&) = delete;
  spawn_context& operator=(const spawn_context&) = delete;

  void region(const void* addr, std::size_t bytes, access_mode mode);
  // A region the program names (in/out/inout on its memory): region(), after checking it
  // against hytask::versioned objects' memory (a usage_error while a newer version is out).
  void program_region(const void* addr, std::size_t bytes, access_mode mode);
  // The task being spawned; external dependencies (events, MPI requests) add themselves with
  // add_external() and later call release_external(target()).
  task* target() const { return task_; }
  void add_external() { ++external_; }
  // A dependency on pred, a sibling named by a task_handle (hytask::after(handle)); a
  // usage_error when pred was spawned by another task.
  void direct(task* pred);
  // The spawn returns a task_handle: the record keeps one more reference, which the handle
  // drops.
  void keep_for_handle() { extra_refs_ = 1; }
  // The task communicates: put it in the communication class.
  void raise_priority();
  void submit();

 private:
  task* task_;
  task* parent_;
  int edges_ = 0;     // predecessors found among siblings
  int external_ = 0;  // external dependencies registered
  int extra_refs_ = 0;  // references beyond execution and tracker: a task_handle's
};

// Releases one external dependency of t; makes t ready when it was the last one. With an
// error, t fails: its body will not run and the error reaches the wait_all that covers it.
// `high` puts t in the communication class (tasks released by communication).
void release_external(task* t, std::exception_ptr error = nullptr, bool high = false);

// A spawn whose access threw: drops the body and submits the task with the dependencies
// declared so far, so that it completes as a no-op (its parent and its successors do not
// wait forever); spawn then rethrows.
void abandon_spawn(spawn_context& ctx);

}  // namespace detail

inline void region_access::apply(detail::spawn_context& ctx) const {
  ctx.program_region(addr, bytes, mode);
}
inline void region_list::apply(detail::spawn_context& ctx) const {
  for (const region_access& a : list) a.apply(ctx);
}

namespace detail {
// An access may have work to do before its task exists: the global layer's copyin spawns the
// task that transfers the data, which must be registered before the task that reads it (a
// nested spawn while the reader is half-declared could run tasks — the throttle — or
// interleave two tasks' registrations in the parent's tracker). spawn calls
// a.hytask_prepare() for such accesses, in order, before it allocates its task.
template <class A>
concept prepared_access = requires(const A& a) { a.hytask_prepare(); };
template <class A>
void prepare(const A& a) {
  if constexpr (prepared_access<A>) a.hytask_prepare();
}

// Registers the accesses through ctx and submits its task; an access that throws leaves the
// task to complete without running its body (abandon_spawn), and spawn rethrows.
template <class... A>
void register_and_submit(spawn_context& ctx, const A&... accesses) {
  try {
    (accesses.apply(ctx), ...);
  } catch (...) {
    abandon_spawn(ctx);
    throw;
  }
  ctx.submit();
}

// A spawn with hytask::versioned accesses: the body receives the versions' pointers.
template <class F, class... A>
void spawn_versioned(task* t, F&& f, const A&... accesses) {
  using body = typename version_body_for<version_body<std::decay_t<F>>, A...>::type;
  static_assert(version_body_check<body>::ok,
                "hytask::spawn: a task with hytask::versioned accesses receives one pointer per "
                "such access, in the order of the accesses (const T* for in, T* for out and "
                "inout): give the body those parameters");
  emplace_callable(t, body{std::forward<F>(f), {}});
  begin_version_binding(t, stored_callable<body>(t)->slots,
                        (std::size_t{is_version_access_v<A>} + ...));
  spawn_context ctx(t);
  register_and_submit(ctx, accesses...);
}

// Stores the body in t, registers its accesses (through a spawn_context even with none) and
// submits it; `handle`: the record keeps a reference for a task_handle.
template <class F, class... A>
void spawn_with_context(task* t, bool handle, F&& f, const A&... accesses) {
  static_assert(!(is_version_access_v<A> || ...),
                "hytask::spawn_handle: hytask::versioned accesses are not supported with a "
                "handle; use spawn");
  emplace_callable(t, std::forward<F>(f));
  spawn_context ctx(t);
  if (handle) ctx.keep_for_handle();
  register_and_submit(ctx, accesses...);
}

// Stores the body in t, registers its accesses and submits it.
template <class F, class... A>
void spawn_into(task* t, F&& f, const A&... accesses) {
  if constexpr ((is_version_access_v<A> || ...)) {
    spawn_versioned(t, std::forward<F>(f), accesses...);
  } else {
    emplace_callable(t, std::forward<F>(f));
    if constexpr (sizeof...(A) == 0) {
      submit(t);
    } else {
      spawn_context ctx(t);
      register_and_submit(ctx, accesses...);
    }
  }
}

}  // namespace detail

template <class F, access... A>
void spawn(const task_options& opts, F&& f, const A&... accesses) {
  (detail::prepare(accesses), ...);
  detail::spawn_into(detail::new_task(opts.priority, opts.name, opts.group), std::forward<F>(f),
                     accesses...);
}

template <class F, access... A>
  requires(!std::is_same_v<std::decay_t<F>, task_options>)
void spawn(F&& f, const A&... accesses) {
  (detail::prepare(accesses), ...);
  detail::spawn_into(detail::new_task(), std::forward<F>(f), accesses...);
}

// Waits until every task spawned by the calling task (or, from main, by main) has
// completed, then rethrows the first exception one of them threw; when several failed, it
// first prints how many on stderr. Successors of a failed task are skipped, not run. A task
// suspends here; main runs ready tasks while it waits.
void wait_all();

}  // namespace hytask
