// fulfill_when: one completion record per detached task, with a waiter on each request's
// completion event; the last waiter to fire fulfils the OpenMP event. The waiters run on
// the thread that polled (comm/engine.hpp): an OpenMP thread in an OMPT callback, or the
// session's progress thread, which OpenMP does not know — libgomp completes the detached
// task under its team's lock from there, libomp through its out-of-team proxy path.
//
// Except in a team of one thread under libomp: libomp runs such a region serialised, and
// aborts at its end when a detached task's event was fulfilled after the task's body had
// returned, whoever fulfils it (libomp 14, "Assertion failure at kmp_runtime.cpp(2375)";
// reproduced without hytask). Waiting in the body instead would deadlock a symmetric
// exchange (each rank's only thread in a receive task, the sends queued behind it), so
// fulfill_when refuses, naming the fix.
#include <omp.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "comm/operation.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/omp/fulfill.hpp"
#include "hytask/omp/session.hpp"
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

// A serialised team (see above): a team of one thread under libomp.
bool serialised_libomp_team() {
  static const bool libomp = std::strcmp(openmp_runtime(), "libomp") == 0;
  return libomp && omp_get_num_threads() == 1;
}

// Ends the job with the reason (an exception cannot leave an OpenMP task).
[[noreturn]] void refuse_serialised_team() {
  detail::fatal(
      "hytask::omp::fulfill_when in a parallel region of one thread under libomp: libomp runs "
      "it serialised and aborts at its end when a detached task is fulfilled after its body "
      "returned (libomp 14, kmp_runtime.cpp:2375, with or without hytask). Run the region with "
      "2 or more threads (OMP_NUM_THREADS, num_threads), or build with GCC (libgomp)");
}

}  // namespace

void fulfill_when(omp_event_handle_t event, std::span<const MPI_Request> requests) {
  detail::need_session("fulfill_when");
  if (serialised_libomp_team()) refuse_serialised_team();
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
  if (serialised_libomp_team()) refuse_serialised_team();
  mpi::request held(std::move(request));
  std::vector<operation*> ops;
  if (held.valid()) ops.push_back(held.get());
  watch(event, ops);
}

}  // namespace hytask::omp
