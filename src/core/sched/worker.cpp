// The calling thread's worker (worker.hpp); the loop itself is in run.cpp.
#include "core/sched/worker.hpp"


namespace hytask::core {

namespace {
thread_local worker* t_worker = nullptr;
}  // namespace

[[gnu::noinline]] worker* current_worker() noexcept {
  asm volatile("" ::: "memory");
  return t_worker;
}

[[gnu::noinline]] void set_current_worker(worker* w) noexcept { t_worker = w; }

}  // namespace hytask::core
