// fulfill_when: one completion record per detached task, with a waiter on each request's
// completion event; the last waiter to fire fulfils the OpenMP event. The waiters run on
// the thread that polled (comm/engine.hpp): an OpenMP thread in an OMPT callback, or the
// session's progress thread, which OpenMP does not know — libgomp completes the detached
// task under its team's lock from there, libomp through its out-of-team proxy path.
#include <omp.h>

#include <atomic>
#include <memory>
#include <vector>

#include "comm/operation.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/omp/fulfill.hpp"
#include "omp/layer.hpp"

namespace hytask::omp {

namespace {

using mpi::detail::operation;

struct completion;

struct waiter : hytask::detail::event_waiter {
  completion* owner = nullptr;
  operation* op = nullptr;
};

struct completion {
  omp_event_handle_t event;
  std::atomic<std::size_t> remaining;  // one per request, plus one held while waiters are added
  std::vector<waiter> waiters;

  void count_down() {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    const omp_event_handle_t ev = event;
    for (waiter& w : waiters) mpi::detail::release(w.op);
    delete this;
    omp_fulfill_event(ev);
    detail::the_layer().fulfilled.fetch_add(1, std::memory_order_relaxed);
  }
};

void fire(hytask::detail::event_waiter* w) {
  auto* me = static_cast<waiter*>(w);
  if (me->op->error != MPI_SUCCESS)
    detail::fatal(std::string(mpi::make_error(me->op).what()) +
                  " (hytask::omp::fulfill_when: the detached task's successors would read what "
                  "never arrived; ending the job)");
  me->owner->count_down();
}

// Takes a reference on each operation.
void watch(omp_event_handle_t event, const std::vector<operation*>& ops) {
  auto* c = new completion{event, {ops.size() + 1}, std::vector<waiter>(ops.size())};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    waiter& w = c->waiters[i];
    w.owner = c;
    w.op = ops[i];
    w.fire = &fire;
    mpi::detail::acquire(ops[i]);
  }
  // Added after the vector is complete: a waiter may fire (and the last one delete c) at once.
  for (operation* op : ops) detail::hand_over(op);
  for (std::size_t i = 0; i < ops.size(); ++i) ops[i]->done.add_waiter(&c->waiters[i]);
  c->count_down();
}

}  // namespace

void fulfill_when(omp_event_handle_t event, std::span<const MPI_Request> requests) {
  detail::need_session("fulfill_when");
  std::vector<mpi::request> held;
  std::vector<operation*> ops;
  held.reserve(requests.size());
  for (MPI_Request r : requests) {
    held.push_back(mpi::adopt(r, "MPI request (hytask::omp::fulfill_when)"));
    ops.push_back(held.back().get());
  }
  watch(event, ops);
}

void fulfill_when(omp_event_handle_t event, MPI_Request request) {
  fulfill_when(event, std::span<const MPI_Request>(&request, 1));
}

void fulfill_when(omp_event_handle_t event, mpi::request&& request) {
  detail::need_session("fulfill_when");
  mpi::request held(std::move(request));
  std::vector<operation*> ops;
  if (held.valid()) ops.push_back(held.get());
  watch(event, ops);
}

}  // namespace hytask::omp
