// Internal: the task record. Public headers need its layout to store a callable inline;
// users never touch it. Everything here may change between versions.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>

namespace hytask::detail {

struct task;
struct dep_domain;

// An edge from a predecessor to `succ`, linked into the predecessor's successor list.
struct edge {
  task* succ;
  edge* next;
};

enum task_flags : std::uint32_t {
  flag_boxed = 1u << 0,     // the callable lives on the heap, storage holds a pointer
  flag_internal = 1u << 1,  // runtime-owned (loop participants): no parent accounting
  flag_root = 1u << 2,      // the implicit root task of the main thread
  flag_started = 1u << 3,   // the body has begun (a parked fiber exists when suspended)
};

using invoke_fn = void (*)(task*);
using complete_hook_fn = void (*)(task*);

inline constexpr std::size_t task_inline_bytes = 64;
inline constexpr int task_inline_edges = 3;

struct alignas(64) task {
  // Set at spawn, read by the executing worker.
  invoke_fn invoke = nullptr;         // runs the callable, then destroys it
  task* parent = nullptr;
  const char* name = nullptr;         // interned, lives as long as the process
  std::uint64_t id = 0;
  std::int32_t priority = 0;
  std::uint32_t flags = 0;
  complete_hook_fn on_complete = nullptr;  // internal tasks: called instead of parent accounting
  void* hook_arg = nullptr;

  // Synchronisation.
  std::atomic<std::int32_t> pending{0};   // unresolved predecessors (+ a bias while spawning)
  std::atomic<std::int32_t> alive{1};     // 1 for the body + live children + holds
  std::atomic<std::int32_t> refs{1};      // execution + (1 if the parent's tracker refers to it)
  std::int32_t tracker_refs = 0;          // owned by the parent's dependency domain
  std::atomic<edge*> successors{nullptr};
  std::atomic<std::uint32_t> waiting{0};  // 1 while suspended in wait_all
  std::atomic<bool> has_error{false};
  std::exception_ptr error;               // first exception of this task or of a child

  void* fiber = nullptr;                  // parked context while suspended
  dep_domain* domain = nullptr;           // dependency tracker for this task's children
  task* link = nullptr;                   // intrusive link for pools and local lists

  int used_edges = 0;
  edge* extra_edges = nullptr;            // heap edges beyond the inline ones
  edge edges[task_inline_edges];

  alignas(std::max_align_t) unsigned char storage[task_inline_bytes];
};

// Stores a callable into the task, inline when it fits.
template <class F>
void emplace_callable(task* t, F&& f) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&>,
                "hytask::spawn: the task body must be callable with no arguments");
  if constexpr (sizeof(Fn) <= task_inline_bytes && alignof(Fn) <= alignof(std::max_align_t) &&
                std::is_nothrow_move_constructible_v<Fn>) {
    ::new (static_cast<void*>(t->storage)) Fn(std::forward<F>(f));
    t->invoke = [](task* self) {
      Fn* fn = std::launder(reinterpret_cast<Fn*>(self->storage));
      struct destroy_at_exit {
        Fn* p;
        ~destroy_at_exit() { p->~Fn(); }
      } guard{fn};
      (*fn)();
    };
  } else {
    Fn* boxed = new Fn(std::forward<F>(f));
    ::new (static_cast<void*>(t->storage)) Fn*(boxed);
    t->flags |= flag_boxed;
    t->invoke = [](task* self) {
      Fn* fn = *std::launder(reinterpret_cast<Fn**>(self->storage));
      struct destroy_at_exit {
        Fn* p;
        ~destroy_at_exit() { delete p; }
      } guard{fn};
      (*fn)();
    };
  }
}

}  // namespace hytask::detail
