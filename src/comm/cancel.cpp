// Cancellation in the MPI layer (comm/cancel.hpp).
#include "comm/cancel.hpp"

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "core/face.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi::detail {

bool task_is_cancelled(const hytask::detail::task* t) noexcept {
  return core::is_cancelled(t);
}

std::exception_ptr cancelled_error(const operation* op) {
  return std::make_exception_ptr(hytask::task_cancelled(
      "hytask::mpi: " + describe(op) + ": cancelled with its task (hytask::task_group)"));
}

void throw_cancelled(const operation* op) { std::rethrow_exception(cancelled_error(op)); }

void watch_cancellation(operation* op, hytask::detail::task* t) {
  if (op->internal) return;  // the runtime's own (a copyin transfer): never cancelled
  op->waiter.store(t, std::memory_order_seq_cst);
  // Against the hook: it marks the task cancelled, then has the poller look at the waiters;
  // here the waiter is set, then the task looked at. One of the two sees the other.
  if (cancellable(op) && task_is_cancelled(t)) comm_system::instance()->cancel(op);
}

namespace {
void on_cancel() {
  if (comm_system* c = comm_system::instance()) c->scan_cancelled();
}
}  // namespace

void install_cancel_hook() { core::set_cancel_hook(&on_cancel); }
void uninstall_cancel_hook() { core::set_cancel_hook(nullptr); }

void comm_system::cancel(operation* op) {
  engine_.request_cancel(op);
  ask_for_poll();
}

void comm_system::scan_cancelled() {
  engine_.request_scan();
  ask_for_poll();
}

void comm_system::ask_for_poll() {
  nudge();  // the thread that may call MPI, in funneled and masteronly modes
  if (access_->workers_poll())
    core::wake_for_progress();
  policy_->registered();
}

}  // namespace hytask::mpi::detail
