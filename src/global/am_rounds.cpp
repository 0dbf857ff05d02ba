#include "global/am_rounds.hpp"

#include <cstring>
#include <exception>
#include <utility>
#include <vector>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "global/messages.hpp"
#include "global/mpi_call.hpp"
#include "hytask/comm/error.hpp"

namespace hytask::global::detail {

using mpi::detail::kind;
using mpi::detail::operation;

// A started round; its collective's buffers: (label, ~label) in, their minima out, so that
// out[0] is the smallest label and ~out[1] the largest.
struct am_rounds::round_node : hytask::detail::event_waiter {
  am_rounds* self = nullptr;
  std::uint64_t key = 0, label = 0;
  std::uint64_t in[2] = {0, 0}, out[2] = {0, 0};
  std::vector<std::uint64_t> labels;  // the error path's gather
  am_transport::round_done done;
  am_transport::round_mismatch mismatch;
  operation* op = nullptr;
};

void am_rounds::sent(std::uint64_t key) {
  std::lock_guard lk(mu_);
  ++counts_[key].sent;
}

std::optional<std::vector<std::byte>> am_rounds::take(int source, std::span<const std::byte> buf,
                                                      const am_transport::receiver& receive) {
  buffer_header h{};
  const bool headed = read_header(buf, h);
  if (headed && h.records == 0 && buf.size() == sizeof h) {  // an acknowledgement
    acknowledged(round_key(h.round, h.epoch), h.handled);
    return std::nullopt;
  }
  try {
    receive(source, buf);
  } catch (...) {
    on_failure_(std::current_exception());
    return std::nullopt;
  }
  if (!headed || !in_a_round(h.round)) return std::nullopt;
  handled(round_key(h.round, h.epoch));
  const buffer_header ack{h.round, 0, h.epoch, 1};
  std::vector<std::byte> a(sizeof ack);
  std::memcpy(a.data(), &ack, sizeof ack);
  return a;
}

void am_rounds::handled(std::uint64_t key) {
  std::lock_guard lk(mu_);
  ++counts_[key].handled;
}

void am_rounds::acknowledged(std::uint64_t key, std::uint64_t n) {
  {
    std::lock_guard lk(mu_);
    counts_[key].acked += n;
  }
  try_join();
}

void am_rounds::start(std::uint64_t key, std::uint64_t label, am_transport::round_done done,
                      am_transport::round_mismatch mismatch) {
  auto* n = new round_node;
  n->self = this;
  n->key = key;
  n->label = label;
  n->done = std::move(done);
  n->mismatch = std::move(mismatch);
  {
    std::lock_guard lk(mu_);
    started_.push_back(n);
  }
  try_join();
}

// The oldest started round joins its collective once every buffer of it this rank sent is
// acknowledged, and the previous round's collective has completed. Posted outside the
// lock: the operation may complete inside submit and run ended from there.
void am_rounds::try_join() {
  round_node* n = nullptr;
  {
    std::lock_guard lk(mu_);
    if (joined_ || stopped_ || started_.empty()) return;
    n = started_.front();
    auto it = counts_.find(n->key);
    if (it != counts_.end() && it->second.acked != it->second.sent) return;
    joined_ = true;
  }
  n->in[0] = n->label;
  n->in[1] = ~n->label;
  operation* op = layer_op(kind::allreduce, comm_);
  op->task_name = activity_.load(std::memory_order_relaxed);
  op->sbuf = n->in;
  op->rbuf = n->out;
  op->scount = op->rcount = 2;
  op->stype = op->rtype = MPI_UINT64_T;
  op->op = MPI_MIN;
  op->bytes = sizeof n->in;
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<round_node*>(e);
    self->self->ended(self);
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}

void am_rounds::ended(round_node* n) {
  operation* op = n->op;
  n->op = nullptr;
  const bool ok = op->error == MPI_SUCCESS;
  if (!ok) on_failure_(std::make_exception_ptr(mpi::make_error(op)));
  mpi::detail::release(op);
  const bool same = ok && n->out[0] == n->label && ~n->out[1] == n->label;
  std::uint64_t handled = 0;
  {
    std::lock_guard lk(mu_);
    started_.pop_front();  // n: rounds end in order
    auto it = counts_.find(n->key);
    if (it != counts_.end()) {
      handled = it->second.handled;
      counts_.erase(it);
    }
    if (!same) stopped_ = true;  // and joined_ stays: no more collectives but the gather
  }
  if (!ok) {
    delete n;
    return;
  }
  if (!same) {
    gather_labels(n);
    return;
  }
  // done before the next round may join (joined_ holds it off until then): rounds end in
  // order, and the next round's collective might complete inside its post.
  try {
    n->done(handled);
  } catch (...) {
    on_failure_(std::current_exception());
  }
  delete n;
  {
    std::lock_guard lk(mu_);
    joined_ = false;
  }
  try_join();
}

// The labels differ (every rank saw the same minimum and maximum, so every rank is here,
// and no rank posts another collective on comm_ before this one): every rank's label, to
// every rank, for the message.
void am_rounds::gather_labels(round_node* n) {
  n->labels.assign(static_cast<std::size_t>(size_), 0);
  operation* op = layer_op(kind::allgather, comm_);
  op->task_name = activity_.load(std::memory_order_relaxed);
  op->sbuf = &n->label;
  op->scount = op->rcount = 1;
  op->stype = op->rtype = MPI_UINT64_T;
  op->rbuf = n->labels.data();
  op->bytes = sizeof n->label;
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<round_node*>(e);
    am_rounds* r = self->self;
    operation* o = self->op;
    if (o->error != MPI_SUCCESS) {
      r->on_failure_(std::make_exception_ptr(mpi::make_error(o)));
    } else {
      try {
        self->mismatch(self->labels);
      } catch (...) {
        r->on_failure_(std::current_exception());
      }
    }
    mpi::detail::release(o);
    delete self;
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}

}  // namespace hytask::global::detail
