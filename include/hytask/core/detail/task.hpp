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
struct group_state;

enum task_flags : std::uint32_t {
  flag_internal = 1u << 1,  // runtime-owned (loop participants): no parent accounting
  flag_root = 1u << 2,      // the implicit root task of the main thread
  flag_started = 1u << 3,   // the body has begun (a parked fiber exists when suspended)
  flag_parent = 1u << 4,    // has spawned children or taken holds: alive may differ from body_share
  flag_cold = 1u << 5,      // line 2 holds a name, an id or hooks to clear before reuse
  flag_error = 1u << 6,     // the body threw (its exception is in line 2)
  flag_failed = 1u << 7,    // a predecessor (task or request) failed: the body is skipped
  flag_queued = 1u << 8,    // in a ready queue (checked by the scheduler's debug assertions)
  flag_watched = 1u << 9,   // a layer above the core hears of its completion (core/watch.hpp)
  // holds versions of hytask::versioned objects, or (as a parent) its children renamed some:
  // `versions` is set (core/versions.hpp)
  flag_versions = 1u << 10,
  flag_grouped = 1u << 11,  // spawned into a hytask::task_group: `group` is set (core/cancel.hpp)
  // never cancelled: a layer's task that a protocol across ranks needs run (core/cancel.hpp)
  flag_uncancellable = 1u << 12,
  // never in a dependency tracker, so no successor is ever linked to it (a recorded graph's
  // task, whose successors the graph releases): its successor line is not touched
  flag_untracked = 1u << 13,
  // did nothing a trace should show (a loop participant that found no iteration left): its
  // run leaves no slice in HYTASK_TRACE
  flag_untraced = 1u << 14,
};
// Line 2 needs a look at completion and reuse only when one of these is set; a leaf task
// without a name never touches it.
inline constexpr std::uint32_t cold_line_flags =
    flag_parent | flag_cold | flag_error | flag_internal | flag_failed;

// Runs the callable if `run`, then destroys it (a task failed by a dependency is not run).
using invoke_fn = void (*)(task*, bool run);
using complete_hook_fn = void (*)(task*);

inline constexpr std::size_t task_inline_bytes = 88;
inline constexpr std::uint32_t task_inline_successors = 7;
// nsucc's value once the task has completed: closed to new successors, and whether it
// failed, so that a task spawned later learns both from the one line it links through.
inline constexpr std::uint32_t successors_closed = 0xffffffffu;         // succeeded
inline constexpr std::uint32_t successors_closed_failed = 0xfffffffeu;  // failed
inline constexpr bool successors_are_closed(std::uint32_t n) { return n >= successors_closed_failed; }
inline constexpr unsigned max_depth = 63;  // deeper tasks share the deepest ready queue

// alive = body_share while the body runs + published children + holds - completed
// children. The share is large so that children completing before the parent published
// its count of them (it counts spawns in a plain field and publishes them in one atomic
// add, at wait_all or when its body ends) never bring alive to a false zero.
inline constexpr std::int32_t body_share = 1 << 30;

// Successor slots beyond the inline ones.
struct successor_block {
  static constexpr std::uint32_t slots = 15;
  successor_block* next;
  task* slot[slots];
};

// Layout, chosen so that a task whose callable holds three pointers is one cache line:
//   line 0     the fields spawn writes and completion reads (40 bytes), then the callable
//              storage (a callable aligned to 16 starts 8 bytes into it),
//              which continues into line 1 for larger callables;
//   lines 2-3  fields few tasks use (names, ids, errors, suspension, hooks);
//   line 4     the successor count and slots and the tracker's reference count, touched
//              only by dependencies and completion;
//   line 5     overflow blocks.
// A record is returned to its pool with lines 2-4 clean, so allocation rewrites line 0 only.
// Successors are added only by the parent's spawning code (one writer); a slot is
// published by a CAS on nsucc, and completion closes nsucc with an exchange. The count
// sits with the slots, not in line 0: the spawning thread links a successor to a task that
// is running or has just run on another core, and so touches one line of it, not two, and
// leaves line 0 (pending, refs, the callable) with the core that runs it.
struct alignas(64) task {
  // ---- line 0 (40 bytes of header)
  invoke_fn invoke = nullptr;  // runs the callable, then destroys it
  task* parent = nullptr;
  std::uint32_t flags = 0;
  std::int32_t priority = 0;       // task_options::priority
  std::uint8_t succ_overflow = 0;  // set by the (single) successor adder when it made blocks
  std::uint8_t depth = 0;          // nesting: the root's is 0, its children's 1, ... (capped)
  // 1: the communication class, just above ordinary tasks of the same priority. Set before
  // the task is ready, possibly by several threads at once (a task released by two requests).
  std::atomic<std::uint8_t> comm{0};
  std::uint8_t spare = 0;
  std::atomic<std::int32_t> pending{0};  // unresolved predecessors (+ a bias while spawning)
  std::atomic<std::int32_t> alive{body_share};
  std::atomic<std::int32_t> refs{1};     // execution + (1 if the parent's tracker refers to it)
  alignas(8) unsigned char storage[task_inline_bytes];  // bytes 40..127

  // ---- line 2: clean whenever the record is in a pool
  alignas(64) const char* name = nullptr;  // interned, lives as long as the process
  std::uint64_t id = 0;                    // assigned when first needed (trace, this_task::id)
  std::int32_t unpublished = 0;            // children spawned, not yet added to alive
  std::atomic<std::uint32_t> waiting{0};   // 1 while suspended in wait_all
  std::atomic<bool> has_error{false};
  // Holds taken on this task (bind): counted in alive, so the task does not complete
  // before them, but not children, so wait_all does not wait for them. Decremented before
  // alive, so alive - holds never falls below what the children leave.
  std::atomic<std::int32_t> holds{0};
  std::exception_ptr error;                // first exception of this task or of a child
  // Failures among the children not yet reported by a wait_all: bodies that threw, and
  // tasks skipped because something they depended on failed (written on error paths only).
  std::atomic<std::uint32_t> children_threw{0};
  std::atomic<std::uint32_t> children_skipped{0};
  std::uint64_t spawn_seq = 0;         // position among its parent's children, from 1
  std::uint64_t children_spawned = 0;  // as a parent: children spawned so far (never reset)
  // State a layer above the core keeps for this task's children (core/scope_ext.hpp).
  std::atomic<void*> scope_ext{nullptr};
  void* fiber = nullptr;                   // parked context while suspended
  dep_domain* domain = nullptr;            // dependency tracker for this task's children
  task* link = nullptr;                    // intrusive link for mailboxes and yield lists
  // Internal tasks: called instead of parent accounting; watched ones: called at completion.
  complete_hook_fn on_complete = nullptr;
  void* hook_arg = nullptr;
  // The versions this task holds, and the objects its children renamed (core/versions.hpp);
  // set with flag_versions, freed when the task completes.
  void* versions = nullptr;
  // The task_group it was spawned into (flag_grouped); written at spawn, read by the tasks
  // it spawns (a cancelled ancestor cancels them), released when it completes.
  group_state* group = nullptr;

  // ---- line 4
  alignas(64) std::atomic<std::uint32_t> nsucc{0};  // successors linked; closed at completion
  // References from the parent's dependency domain, owned by it; beside the count it links
  // through, so that linking and releasing a task that ran elsewhere take one line of it.
  // Zero whenever the record is pooled (it is freed only after the domain let go).
  std::int32_t tracker_refs = 0;
  task* succ[task_inline_successors];
  successor_block* succ_blocks = nullptr;  // overflow slots, in order
  successor_block* succ_tail = nullptr;
};

static_assert(offsetof(task, succ) - offsetof(task, nsucc) == 8 && offsetof(task, nsucc) % 64 == 0,
              "the task record's layout: the successor count and slots share a line");
static_assert(offsetof(task, storage) == 40,
              "the task record's layout: line 0 holds the header and the callable's first 24 bytes");

// Where in the storage a callable of type Fn starts: at 40 bytes into the record, or at 48
// when it needs 16-byte alignment.
template <class Fn>
inline constexpr std::size_t callable_offset = alignof(Fn) > 8 ? 8 : 0;

// Whether a callable of type Fn is stored in the record itself (else it is boxed).
template <class Fn>
inline constexpr bool stored_inline = sizeof(Fn) + callable_offset<Fn> <= task_inline_bytes &&
                                      alignof(Fn) <= 16 && std::is_nothrow_move_constructible_v<Fn>;

template <class Fn>
void* callable_address(task* t) {
  return t->storage + callable_offset<Fn>;
}

// Stores a callable into the task, inline when it fits.
template <class F>
void emplace_callable(task* t, F&& f) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&>,
                "hytask::spawn: the task body must be callable with no arguments");
  if constexpr (stored_inline<Fn>) {
    ::new (callable_address<Fn>(t)) Fn(std::forward<F>(f));
    t->invoke = [](task* self, bool run) {
      Fn* fn = std::launder(static_cast<Fn*>(callable_address<Fn>(self)));
      struct destroy_at_exit {
        Fn* p;
        ~destroy_at_exit() { p->~Fn(); }
      } guard{fn};
      if (run) (*fn)();
    };
  } else {
    Fn* boxed = new Fn(std::forward<F>(f));
    ::new (static_cast<void*>(t->storage)) Fn*(boxed);
    t->invoke = [](task* self, bool run) {
      Fn* fn = *std::launder(reinterpret_cast<Fn**>(self->storage));
      struct destroy_at_exit {
        Fn* p;
        ~destroy_at_exit() { delete p; }
      } guard{fn};
      if (run) (*fn)();
    };
  }
}

// The callable emplace_callable stored in t (its type must be Fn).
template <class Fn>
Fn* stored_callable(task* t) {
  if constexpr (stored_inline<Fn>) return std::launder(static_cast<Fn*>(callable_address<Fn>(t)));
  else return *std::launder(reinterpret_cast<Fn**>(t->storage));
}

}  // namespace hytask::detail
