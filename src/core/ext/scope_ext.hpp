// Scope extensions: state a layer above the core keeps for the children of one task (the
// MPI layer: the channels they declared and the order in which they posted on each), with
// the lifetime of that group of children. The core releases it when the task's children are
// all done: at the end of the task's wait_all, when the task completes, and for main at the
// runtime's end. One layer owns the slot; it registers how to release its state.
//
// A task's spawn_seq is its position among its parent's children (1, 2, ...): siblings
// compare by it in spawn order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hytask/core/detail/task.hpp"

namespace hytask::core {

using scope_release_fn = void (*)(void* state);

// Registers the releasing function (once, before any state is installed).
void set_scope_release(scope_release_fn f) noexcept;

// The task whose children a spawn from this thread creates: the running task, or main's
// root; null on a thread that is not a worker.
detail::task* spawning_scope() noexcept;

// t's state, or null.
inline void* scope_ext(detail::task* t) noexcept {
  return t->scope_ext.load(std::memory_order_acquire);
}

// Installs fresh as t's state unless some is there; returns the state in place (fresh or
// the earlier one, which the caller then uses and frees fresh). Safe against concurrent
// installs by t's children and t itself.
void* install_scope_ext(detail::task* t, void* fresh) noexcept;

// Whether a child of `scope` that declared an access to some byte of [p, p + bytes) has not
// completed. Only the thread that spawns for scope may ask (it owns scope's tracker).
bool scope_region_busy(detail::task* scope, const void* p, std::size_t bytes) noexcept;

// Called by the core when t's children are all done.
void release_scope_ext(detail::task* t) noexcept;

}  // namespace hytask::core
