// hytask::mpi's completion calls on sets of requests (hytask/comm/request.hpp): test,
// wait_any, wait_some, test_any, test_some. A task waits for the first completion of
// several operations on one event of its own, which each operation's completion sets.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "comm/api_common.hpp"

namespace hytask::mpi {

using detail::operation;
using detail::sys;
using detail::throw_if_failed;

namespace {

bool complete(const request& r) {
  return r.get()->state.load(std::memory_order_acquire) == detail::op_complete;
}

// What the waiting thread and one watch per pending operation share: the first completion
// sets `any`. A watch stays in its operation after the wait returned, until the operation
// completes, a later wait replaces it, or the operation ends (operation::any), so the state
// lives until the last reference (the waiter's, and one per watch) is gone.
struct any_state {
  struct node : operation::any_watch {
    any_state* s;
  };
  explicit any_state(std::size_t n) : refs(static_cast<int>(n) + 1), nodes(n) {}
  std::atomic<int> refs;
  std::atomic<bool> fired{false};
  hytask::event any;
  std::vector<node> nodes;  // never resized once operations point into it

  static void unref(any_state* s) {
    if (s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete s;
  }
  // The operation completed, or (discard) a later wait replaced the watch: a wait still in
  // progress on the same request (two tasks waiting on one request at once) is woken too,
  // and looks again and watches anew.
  static void fire(operation::any_watch* w) {
    any_state* s = static_cast<node*>(w)->s;
    if (!s->fired.exchange(true, std::memory_order_acq_rel)) s->any.set();
    unref(s);
  }
};

// Returns once one of the pending operations has completed, or (rarely) when another wait
// on one of them took over its watch: callers look and wait again. A task suspends (a
// cancellation of it cancels the receives among them), main runs other tasks, another
// thread polls.
void wait_for_one(const char* what, const std::vector<operation*>& pending) {
  detail::comm_system& c = sys(what);
  const core::thread_place here = core::this_thread_place();
  if (!here.on_worker) {
    std::int64_t backoff_ns = 1000;
    for (;;) {
      for (operation* op : pending)
        if (op->state.load(std::memory_order_acquire) == detail::op_complete) return;
      if (c.test(pending.front())) return;
      std::this_thread::sleep_for(std::chrono::nanoseconds(backoff_ns));
      backoff_ns = std::min<std::int64_t>(2 * backoff_ns, 1000000);
    }
  }
  if (here.current != nullptr)
    for (operation* op : pending) detail::watch_cancellation(op, here.current);
  auto* s = new any_state(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    any_state::node* n = &s->nodes[i];
    n->s = s;
    n->fire = &any_state::fire;
    n->discard = &any_state::fire;
    operation* op = pending[i];
    if (operation::any_watch* old = op->any.exchange(n, std::memory_order_acq_rel)) old->discard(old);
    // Completed before the watch was in place: fire it here, unless the completion took it.
    if (op->state.load(std::memory_order_acquire) == detail::op_complete) {
      operation::any_watch* expected = n;
      if (op->any.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) n->fire(n);
    }
  }
  s->any.wait();
  any_state::unref(s);
}

// The indices of the valid requests, and whether one of them has completed.
std::vector<operation*> pending_of(std::span<request> rs, bool& valid, bool& any_done) {
  std::vector<operation*> pending;
  valid = any_done = false;
  for (request& r : rs) {
    if (!r.valid()) continue;
    valid = true;
    if (complete(r)) any_done = true;
    else pending.push_back(r.get());
  }
  return pending;
}

// Releases request i and returns its completion; throws its failure, if any.
completion take(std::span<request> rs, std::size_t i) {
  request done = std::move(rs[i]);
  throw_if_failed(done.get());
  return completion{i, done.status()};
}

std::optional<completion> first_complete(std::span<request> rs) {
  for (std::size_t i = 0; i < rs.size(); ++i)
    if (rs[i].valid() && complete(rs[i])) return take(rs, i);
  return std::nullopt;
}

std::vector<completion> all_complete(std::span<request> rs) {
  std::vector<completion> out;
  std::exception_ptr first;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    if (!rs[i].valid() || !complete(rs[i])) continue;
    try {
      out.push_back(take(rs, i));
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  return out;
}

// One poll of the engine, through one pending operation (if any).
void poll_once(const char* what, std::span<request> rs) {
  for (request& r : rs)
    if (r.valid() && !complete(r)) {
      sys(what).test(r.get());
      return;
    }
}

}  // namespace

bool test(request& r) { return r.test(); }

std::optional<completion> wait_any(std::span<request> requests) {
  for (;;) {
    bool valid = false, done = false;
    std::vector<operation*> pending = pending_of(requests, valid, done);
    if (!valid) return std::nullopt;
    if (!done) wait_for_one("wait_any", pending);
    if (std::optional<completion> c = first_complete(requests)) return c;
  }
}

std::vector<completion> wait_some(std::span<request> requests) {
  for (;;) {
    bool valid = false, done = false;
    std::vector<operation*> pending = pending_of(requests, valid, done);
    if (!valid) return {};
    if (!done) wait_for_one("wait_some", pending);
    std::vector<completion> out = all_complete(requests);
    if (!out.empty()) return out;
  }
}

std::optional<completion> test_any(std::span<request> requests) {
  poll_once("test_any", requests);
  return first_complete(requests);
}

std::vector<completion> test_some(std::span<request> requests) {
  poll_once("test_some", requests);
  return all_complete(requests);
}

}  // namespace hytask::mpi
