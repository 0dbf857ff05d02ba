// libgomp's task entry point, interposed: GCC compiles `#pragma omp task` into a call of
// GOMP_task, which this library defines and forwards to libgomp's own (dlsym(RTLD_NEXT)).
// While a session asks for it (libgomp, which has no OMPT), each task's function is wrapped
// so that its start and end are task scheduling points where the thread polls in line
// (scheduling_point.hpp), as OMPT's callbacks do under libomp, and the session's progress
// thread knows that a task runs and when the last boundary was (it then stays asleep: the
// next boundary polls without taking the core from the compute).
//
// The wrapped task's argument block is a header followed by the original block at the
// original alignment. libgomp writes a detached task's event into the first word of the block
// it is given (where GCC places the event) and then copies the block, byte for byte or with
// the compiler's copy function; the header's first word receives the event, and the wrapper
// puts it where GCC's code reads it: the copied original block's first word, or, with a copy
// function, the caller's block before that function copies it.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "omp/layer.hpp"
#include "omp/scheduling_point.hpp"
#include "platform/messages.hpp"

namespace {

using task_fn = void (*)(void*);
using copy_fn = void (*)(void*, void*);
using gomp_task_fn = void (*)(task_fn, void*, copy_fn, long, long, bool, unsigned, void**, int, void*);

extern "C" void GOMP_task(task_fn, void*, copy_fn, long, long, bool, unsigned, void**, int, void*);

constexpr unsigned kFlagDetach = 1u << 13;  // GOMP_TASK_FLAG_DETACH (GCC's gomp-constants.h)

struct header {
  void* event;  // first word: libgomp writes a detached task's event here
  task_fn fn;
  copy_fn cpyfn;
  long offset;   // of the original block; 0: the task had none (data == nullptr)
  void* source;  // with a copy function: the caller's block it copies from (not arg_size long)
  bool detach;
};

gomp_task_fn real_gomp_task() {
  static const gomp_task_fn f = reinterpret_cast<gomp_task_fn>(dlsym(RTLD_NEXT, "GOMP_task"));
  return f;
}

inline char* original(void* block) {
  auto* h = static_cast<header*>(block);
  return h->offset == 0 ? nullptr : static_cast<char*>(block) + h->offset;
}

void run_wrapped(void* block) {
  auto* h = static_cast<header*>(block);
  char* data = original(block);
  // Without a copy function the block is a byte copy of the caller's, whose first word
  // libgomp would have set; with one, copy_wrapped set it before the copy function ran.
  if (h->detach && h->cpyfn == nullptr && data != nullptr) std::memcpy(data, &h->event, sizeof(void*));
  const std::int64_t start = hytask::omp::detail::task_boundary(true, 0);
  h->fn(data);
  hytask::omp::detail::task_boundary(false, start);
}

// libgomp calls it within GOMP_task, while the caller's block is alive.
void copy_wrapped(void* to, void* from) {
  std::memcpy(to, from, sizeof(header));
  auto* h = static_cast<header*>(from);
  if (h->detach) std::memcpy(h->source, &h->event, sizeof(void*));  // where libgomp writes it
  h->cpyfn(original(to), h->source);
}

}  // namespace

namespace hytask::omp::detail {

std::int64_t task_boundary(bool starts, std::int64_t started) {
  layer& L = the_layer();
  const int running = starts ? L.tasks_running.fetch_add(1, std::memory_order_seq_cst) + 1
                             : L.tasks_running.fetch_sub(1, std::memory_order_seq_cst) - 1;
  if (L.outstanding.load(std::memory_order_relaxed) <= 0) return 0;
  const std::int64_t now = core::now_ns();
  // Shared by the team: written at most once a microsecond.
  if (now - L.last_boundary_ns.load(std::memory_order_relaxed) > 1000)
    L.last_boundary_ns.store(now, std::memory_order_relaxed);
  if (!starts && started != 0) note_long_task(L, now - started);
  const bool due = poll_due(L, now);
  const bool retime = retime_due(L, starts, running, now);
  if (!due && !retime) return now;
  L.users.fetch_add(1, std::memory_order_seq_cst);
  if (mpi::detail::engine* e = L.point_engine.load(std::memory_order_seq_cst)) {
    if (due) point_poll(L, *e, now, L.hook_polls);
    if (retime)
      if (progress_thread* t = L.thread.load(std::memory_order_acquire)) t->retime(starts, now);
  }
  L.users.fetch_sub(1, std::memory_order_release);
  return now;
}

bool gomp_task_hooked() noexcept {
  return real_gomp_task() != nullptr &&
         dlsym(RTLD_DEFAULT, "GOMP_task") == reinterpret_cast<void*>(&GOMP_task);
}

}  // namespace hytask::omp::detail

extern "C" void GOMP_task(task_fn fn, void* data, copy_fn cpyfn, long arg_size, long arg_align,
                          bool if_clause, unsigned flags, void** depend, int priority, void* detach) {
  const gomp_task_fn real = real_gomp_task();
  if (real == nullptr) {
    hytask::core::message(hytask::core::verbosity::error,
                          "hytask_omp: GOMP_task called, but no OpenMP runtime after hytask_omp "
                          "defines it (dlsym(RTLD_NEXT) found none): link the program with -fopenmp");
    std::abort();
  }
  if (!hytask::omp::detail::the_layer().task_hooks.load(std::memory_order_relaxed)) {
    real(fn, data, cpyfn, arg_size, arg_align, if_clause, flags, depend, priority, detach);
    return;
  }
  const long align = arg_align > static_cast<long>(alignof(header)) ? arg_align : static_cast<long>(alignof(header));
  const long offset = (static_cast<long>(sizeof(header)) + align - 1) / align * align;
  const long size = offset + arg_size;
  // libgomp copies the block before GOMP_task returns: the stack holds it, or the heap when
  // the task's arguments are large.
  const std::size_t need = static_cast<std::size_t>(size + align - 1);
  alignas(64) char local[2048];
  std::unique_ptr<char[]> heap;
  char* buffer = local;
  if (need > sizeof local) {
    heap = std::make_unique<char[]>(need);
    buffer = heap.get();
  }
  char* block = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(buffer) + align - 1) &
                                        ~static_cast<std::uintptr_t>(align - 1));
  auto* h = reinterpret_cast<header*>(block);
  h->event = nullptr;
  h->fn = fn;
  h->cpyfn = cpyfn;
  h->offset = data == nullptr ? 0 : offset;
  h->source = data;
  h->detach = (flags & kFlagDetach) != 0;
  // Without a copy function libgomp copies arg_size bytes of the caller's block; with one, the
  // block is the copy function's input, of its own size, and arg_size is the task's.
  if (cpyfn == nullptr && data != nullptr && arg_size > 0)
    std::memcpy(block + offset, data, static_cast<std::size_t>(arg_size));
  real(&run_wrapped, block, cpyfn != nullptr ? &copy_wrapped : nullptr, size, align, if_clause, flags,
       depend, priority, detach);
}
