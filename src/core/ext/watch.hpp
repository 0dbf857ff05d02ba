// Completion watches: for a layer above the core (the global dependencies) that must act
// when a task completes — its body returned and its children completed.
#pragma once

#include "hytask/core/detail/task.hpp"

namespace hytask::core {

// While t is being spawned (before it is submitted): fn(t) is called once t completes, on
// the thread that completes it, after t's successors were released and before t's parent
// counts it done — so a wait_all that returns has seen fn run for every child. arg is kept
// in the record (watch_arg). One watch per task; not for internal tasks.
inline void watch_completion(detail::task* t, detail::complete_hook_fn fn, void* arg) noexcept {
  t->on_complete = fn;
  t->hook_arg = arg;
  t->flags |= detail::flag_watched | detail::flag_cold;
}

inline void* watch_arg(const detail::task* t) noexcept { return t->hook_arg; }
inline bool watched(const detail::task* t) noexcept {
  return (t->flags & detail::flag_watched) != 0;
}

}  // namespace hytask::core
