// Waiting for an operation: a task suspends until its completion resumes it, main runs other
// tasks meanwhile, any other thread polls (or has the thread that may call MPI poll) with a
// growing sleep; test polls once.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

#include "comm/cancel.hpp"
#include "comm/comm.hpp"
#include "core/face.hpp"

namespace hytask::mpi::detail {

void comm_system::wait(operation* op) {
  if (op->state.load(std::memory_order_acquire) == op_complete) return;
  const core::thread_place here = core::this_thread_place();
  if (here.on_worker && here.current == nullptr) {
    op->done.wait();  // main: runs other tasks (and, through the hook, polls) meanwhile
    return;
  }
  if (core::task* me = here.current) {
    // A task suspends; it is resumed in the communication class when HYTASK_COMM_PRIORITY=1.
    struct node : hytask::detail::event_waiter {
      operation* op;
      hytask::detail::task* t;
      bool high;
    } n;
    n.op = op;
    n.high = settings_.comm_priority;
    // A cancellation interrupts it (comm/cancel.hpp): a receive is cancelled, a send drained.
    watch_cancellation(op, me);
    core::suspend(
        [](hytask::detail::task* t, void* arg) {
          auto* self = static_cast<node*>(arg);
          self->t = t;
          self->fire = [](hytask::detail::event_waiter* e) {
            auto* me = static_cast<node*>(e);
            core::resume(me->t, me->high);
          };
          self->op->done.add_waiter(self);
        },
        &n);
    return;
  }
  // A thread that is not a worker.
  std::int64_t backoff_ns = 1000;
  while (op->state.load(std::memory_order_acquire) != op_complete) {
    if (may_call_mpi()) {
      run_commands();
      if (engine_.poll() == core::poll_result::progressed) {
        backoff_ns = 1000;
        continue;
      }
    } else {
      nudge();
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(backoff_ns));
    backoff_ns = std::min<std::int64_t>(2 * backoff_ns, 1000000);
  }
}

bool comm_system::test(operation* op) {
  if (op->state.load(std::memory_order_acquire) == op_complete) return true;
  if (may_call_mpi()) {
    run_commands();
    engine_.poll();
  } else {
    nudge();
  }
  return op->state.load(std::memory_order_acquire) == op_complete;
}

}  // namespace hytask::mpi::detail
