// Tasks held by operations (hytask/comm/request.hpp): bind ends the current task's hold when
// the requests complete (its successors wait for them), after(req) holds a task's start until
// they do; either fails the task when an operation fails.
#include <exception>
#include <span>
#include <utility>

#include "comm/api_common.hpp"
#include "hytask/core/spawn.hpp"

namespace hytask::mpi {

using detail::failure_of;
using detail::operation;
using detail::sys;

namespace {

// A waiter that ends a task's hold when the operation completes.
struct hold_node : hytask::detail::event_waiter {
  hytask::detail::task* t;
  operation* op;
};

void bind_one(hytask::detail::task* t, operation* op) {
  detail::acquire(op);
  auto* n = new hold_node;
  n->t = t;
  n->op = op;
  detail::watch_cancellation(op, t);  // the task is held until op completes: alive meanwhile
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<hold_node*>(e);
    std::exception_ptr err = failure_of(self->op);
    hytask::detail::task* task = self->t;
    detail::release(self->op);
    delete self;
    core::release_hold(task, std::move(err));
  };
  op->done.add_waiter(n);
}

}  // namespace

void bind(std::span<request> requests) {
  sys("bind");
  hytask::detail::task* t = core::hold_current();
  if (t == nullptr) {  // outside a task: nothing to hold, so wait
    waitall(requests);
    return;
  }
  // hold_current took one hold; take one per further request.
  bool first = true;
  for (request& r : requests) {
    if (!r.valid()) continue;
    if (!first) core::hold_current();
    first = false;
    bind_one(t, r.get());
  }
  if (first) core::release_hold(t);  // no valid request
}

void bind(request& r) { bind(std::span<request>(&r, 1)); }
void bind(request&& r) {
  request keep(std::move(r));
  bind(keep);
}

namespace detail {

namespace {
struct after_node : hytask::detail::event_waiter {
  hytask::detail::task* t;
  operation* op;
  bool high;
};
}  // namespace

void attach_after(hytask::detail::spawn_context& ctx, operation* const* ops, std::size_t n) {
  comm_system& c = sys("after");
  for (std::size_t i = 0; i < n; ++i) {
    operation* op = ops[i];
    if (op == nullptr) continue;
    if (op->state.load(std::memory_order_acquire) == op_complete) {
      std::exception_ptr err = failure_of(op);
      if (!err) continue;
      ctx.add_external();  // fails the task now, but only after the spawn has settled
      hytask::detail::release_external(ctx.target(), std::move(err));
      continue;
    }
    ctx.add_external();
    acquire(op);
    auto* node = new after_node;
    node->t = ctx.target();
    node->op = op;
    node->high = c.comm_priority();
    node->fire = [](hytask::detail::event_waiter* e) {
      auto* self = static_cast<after_node*>(e);
      std::exception_ptr err = failure_of(self->op);
      hytask::detail::task* t = self->t;
      bool high = self->high;
      release(self->op);
      delete self;
      hytask::detail::release_external(t, std::move(err), high);
    };
    op->done.add_waiter(node);
  }
}

}  // namespace detail

}  // namespace hytask::mpi
