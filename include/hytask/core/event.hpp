// event: a one-shot signal that tasks can wait for or depend on.
//
// ```cpp context=tasks
// hytask::event ready;
// hytask::spawn([&] { ready.wait(); use(); });          // suspends only this task
// hytask::spawn([&] { use(); }, hytask::after(ready));  // not started before set()
// // ... later, from any thread:
// ready.set();
// ```
//
// set() may be called from any thread, including threads that are not workers. An event
// must outlive the tasks that wait for it or depend on it.
#pragma once

#include <atomic>
#include <cstdint>

#include "hytask/core/access.hpp"

namespace hytask {

namespace detail {
struct event_waiter {
  event_waiter* next;
  void (*fire)(event_waiter*);
};
}  // namespace detail

class event {
 public:
  event() = default;
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  ~event();

  void set();
  bool is_set() const noexcept;
  // Returns once set() has been called. A task suspends; main runs other tasks meanwhile.
  void wait();

  // Internal: registers w to fire on set(); fires it at once if the event is already set.
  void add_waiter(detail::event_waiter* w);

 private:
  // 0 = not set, no waiters; 1 = set; otherwise the head of the waiter list.
  std::atomic<std::uintptr_t> state_{0};
};

struct event_access {
  event* ev;
  void apply(detail::spawn_context& ctx) const;
};

// A dependency: the task is not started before the event is set.
inline event_access after(event& e) { return event_access{&e}; }

}  // namespace hytask
