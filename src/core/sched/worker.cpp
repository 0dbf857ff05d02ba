// The scheduling loop (worker.hpp) and the calling thread's worker.
#include "core/sched/worker.hpp"

#include "core/sched/scheduler.hpp"

namespace hytask::core {

namespace {
thread_local worker* t_worker = nullptr;
}  // namespace

[[gnu::noinline]] worker* current_worker() noexcept {
  asm volatile("" ::: "memory");
  return t_worker;
}

[[gnu::noinline]] void set_current_worker(worker* w) noexcept { t_worker = w; }

void worker_loop() {
  scheduler* s = scheduler::instance();
  for (;;) {
    worker* w = current_worker();
    if (s->should_go_home(w, false)) {
      s->go_home(w);
      continue;
    }
    if (task* t = s->find_work(w)) {
      s->run(w, t);
      continue;
    }
    if (s->should_go_home(w, true)) {
      s->go_home(w);
      continue;
    }
    s->idle(w);
  }
}

}  // namespace hytask::core
