// Fibers: execution contexts with their own stacks, switched by Boost.Context's fcontext.
//
// A fiber is a stack plus a saved context. Stacks are mmap'ed with a PROT_NONE guard page
// below them, so an overflow faults on the guard page; the SIGSEGV handler (on an alternate
// signal stack) recognises the guard page of the running fiber and reports a stack overflow.
//
// Switching: switch_to(from, to, after, arg) saves `from`, resumes `to`, and then runs
// `after(from, arg)` on `to`'s side, once `from`'s context is fully saved. That hand-off is
// what makes it safe to publish a suspended fiber (to a pool, or to a task that another
// thread may resume) without racing with the switch itself.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hytask::core {

struct fiber;
using after_switch_fn = void (*)(fiber* from, void* arg);

struct fiber {
  void* ctx = nullptr;           // saved fcontext while not running
  unsigned char* map = nullptr;  // mmap'ed region: guard page + stack (null for a thread's home)
  std::size_t map_size = 0;
  fiber* next_free = nullptr;
  // Sanitizer bookkeeping (unused in normal builds).
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* san_fake_stack = nullptr;
  void* tsan_fiber = nullptr;
  // Debug bookkeeping (HYTASK_ASSERTIONS): the task parked on this fiber, if any.
  void* parked_task = nullptr;
  std::uint32_t running = 0;

  bool in_guard(const void* addr) const;
};

// Entry point of every new fiber; must never return. Set once by the scheduler.
using fiber_main_fn = void (*)();
void set_fiber_main(fiber_main_fn fn);

// Creates a fiber with a stack of `stack_size` usable bytes (rounded up to pages).
// Throws std::system_error if the stack cannot be mapped.
fiber* create_fiber(std::size_t stack_size);
void destroy_fiber(fiber* f);
// Fibers that exist now (parked with a task, pooled, or running): a measure of the memory
// held by stacks, for tests and statistics.
std::size_t live_fibers() noexcept;
// Fibers the process can afford at once: each stack is two memory mappings (the guard and
// the stack), and Linux allows a process vm.max_map_count of them (65530 by default); a
// quarter of that is left to fibers, the rest to the program, MPI and malloc.
std::size_t fiber_limit() noexcept;

// Describes the calling thread's native context; switch_to can return to it.
void init_home_fiber(fiber* home);
void destroy_home_fiber(fiber* home);

// Saves the running context into `from` and resumes `to`. When something later switches
// back to `from`, this call returns there (maybe on another thread).
void switch_to(fiber* from, fiber* to, after_switch_fn after, void* arg);

// The fiber running on this thread (for the overflow handler); maintained by switch_to.
fiber* running_fiber() noexcept;

// Installs the SIGSEGV handler that turns a guard-page hit into a clear message, and an
// alternate signal stack for the calling thread. `describe` writes the name of what was
// running into the buffer (async-signal-safe). Idempotent per thread.
using overflow_describe_fn = std::size_t (*)(char* buf, std::size_t cap);
void install_overflow_handler(overflow_describe_fn describe, std::size_t stack_size_for_msg);
void install_signal_stack_for_thread();
void remove_signal_stack_for_thread();

}  // namespace hytask::core
