#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "global/am.hpp"
#include "global/messages.hpp"
#include "global/mpi_call.hpp"
#include "hytask/comm/error.hpp"
#include "platform/messages.hpp"

namespace hytask::global::detail {

using mpi::detail::kind;
using mpi::detail::operation;

namespace {

constexpr int am_tag = 1;

std::exception_ptr failure_of(const operation* op) {
  return std::make_exception_ptr(mpi::make_error(op));
}

struct send_node : hytask::detail::event_waiter {
  std::vector<std::byte> buf;
  operation* op = nullptr;
  am_transport::failure* on_failure = nullptr;
};

}  // namespace

// A started round; its collective's buffers: (label, ~label) in, their minima out, so that
// out[0] is the smallest label and ~out[1] the largest.
struct am_two_sided::round_node : hytask::detail::event_waiter {
  am_two_sided* self = nullptr;
  std::uint64_t key = 0, label = 0;
  std::uint64_t in[2] = {0, 0}, out[2] = {0, 0};
  std::vector<std::uint64_t> labels;  // the error path's gather
  am_transport::round_done done;
  am_transport::round_mismatch mismatch;
  operation* op = nullptr;
};

struct am_two_sided::receive : hytask::detail::event_waiter {
  am_two_sided* self = nullptr;
  std::vector<std::byte> buf;
  operation* op = nullptr;
};

am_two_sided::am_two_sided(MPI_Comm parent, receiver on_receive, failure on_failure,
                           std::size_t max_bytes, int preposted)
    : sys_(comm_or_throw("global dependencies")),
      on_receive_(std::move(on_receive)),
      on_failure_(std::move(on_failure)),
      max_bytes_(max_bytes),
      preposted_(preposted < 1 ? 1 : preposted) {
  blocking_mpi("MPI_Comm_dup", -1, [&] {
    int rc = MPI_Comm_dup(parent, &comm_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(comm_, &rank_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm_, &size_);
    return rc;
  });
}

am_two_sided::~am_two_sided() {
  try {
    if (open_) close();
    blocking_mpi("MPI_Comm_free", -1, [&] { return MPI_Comm_free(&comm_); });
  } catch (const std::exception& e) {
    core::messagef(core::verbosity::warning, "closing the global layer's messages: %s", e.what());
  }
}

void am_two_sided::post(receive* r) {
  operation* op = layer_op(kind::recv, comm_);
  op->task_name = activity_.load(std::memory_order_relaxed);
  op->rbuf = r->buf.data();
  op->rcount = static_cast<MPI_Count>(max_bytes_);
  op->rtype = MPI_BYTE;
  op->peer = MPI_ANY_SOURCE;
  op->tag = am_tag;
  op->bytes = max_bytes_;
  r->op = op;
  r->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<receive*>(e);
    self->self->received(self);
  };
  op->done.add_waiter(r);
  sys_.submit(op, true);
}

// A receive posted again may complete at once, inside the post (its message was waiting),
// and its callback would post it again from there: with many messages queued, the stack
// grew by a frame per message until it overflowed. A thread that is already handling a
// receive queues further ones and handles them in its loop, one frame deep.
void am_two_sided::received(receive* r) {
  thread_local std::vector<receive*>* t_queue = nullptr;
  if (t_queue != nullptr) {
    t_queue->push_back(r);
    return;
  }
  std::vector<receive*> queue{r};
  t_queue = &queue;
  struct reset {
    ~reset() { t_queue = nullptr; }
  } at_exit;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    receive* next = queue[i];
    next->self->handle(next);
  }
}

void am_two_sided::handle(receive* r) {
  operation* op = r->op;
  r->op = nullptr;
  if (op->error != MPI_SUCCESS) {
    on_failure_(failure_of(op));
    mpi::detail::release(op);
    delete r;
    return;
  }
  int bytes = 0;
  MPI_Get_count(&op->status, MPI_BYTE, &bytes);
  const int source = op->status.MPI_SOURCE;
  mpi::detail::release(op);
  const std::span<const std::byte> buf(r->buf.data(), static_cast<std::size_t>(bytes));
  buffer_header h{};
  const bool headed = read_header(buf, h);
  if (bytes == 0 && source == rank_) {  // a close token
    if (closing_.load(std::memory_order_acquire)) {
      delete r;
      if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) retired_->set();
      return;
    }
  } else if (headed && h.records == 0 && buf.size() == sizeof h) {  // an acknowledgement
    acknowledged(round_key(h.round, h.epoch), h.handled);
  } else {
    bool ok = true;
    try {
      on_receive_(source, buf);
    } catch (...) {
      ok = false;
      on_failure_(std::current_exception());
    }
    // Handled: count it, and tell the sender (after the handler, not before: the round
    // must not end on any rank while a buffer of it is still being taken).
    if (ok && headed && in_a_round(h.round)) {
      const std::uint64_t key = round_key(h.round, h.epoch);
      {
        std::lock_guard lk(rounds_mu_);
        ++counts_[key].handled;
      }
      const buffer_header ack{h.round, 0, h.epoch, 1};
      std::vector<std::byte> a(sizeof ack);
      std::memcpy(a.data(), &ack, sizeof ack);
      acks_sent_.fetch_add(1, std::memory_order_relaxed);
      post_send(source, std::move(a));
    }
  }
  post(r);
}

void am_two_sided::open() {
  if (open_) return;
  open_ = true;
  live_.store(preposted_, std::memory_order_release);
  for (int i = 0; i < preposted_; ++i) {
    auto* r = new receive;
    r->self = this;
    r->buf.resize(max_bytes_);
    post(r);
  }
}

void am_two_sided::close() {
  if (!open_) return;
  hytask::event retired;
  retired_ = &retired;
  closing_.store(true, std::memory_order_release);
  for (int i = 0; i < preposted_; ++i) send(rank_, {});
  retired.wait();
  closing_.store(false, std::memory_order_release);
  retired_ = nullptr;
  open_ = false;
}

void am_two_sided::send(int dest, std::vector<std::byte> buf) {
  if (buf.size() > max_bytes_)
    throw std::logic_error("hytask: internal error: a global-dependency message of " +
                           std::to_string(buf.size()) + " bytes exceeds the receivers' " +
                           std::to_string(max_bytes_));
  buffer_header h{};
  if (read_header(buf, h)) {
    if (h.records == 0 && buf.size() == sizeof h)
      throw std::logic_error("hytask: internal error: a global-dependency buffer without records");
    // Counted before it can be acknowledged.
    if (in_a_round(h.round)) {
      std::lock_guard lk(rounds_mu_);
      ++counts_[round_key(h.round, h.epoch)].sent;
    }
  }
  post_send(dest, std::move(buf));
}

void am_two_sided::post_send(int dest, std::vector<std::byte> buf) {
  auto* n = new send_node;
  n->buf = std::move(buf);
  n->on_failure = &on_failure_;
  operation* op = layer_op(kind::send, comm_);
  static const std::byte none{};
  op->sbuf = n->buf.empty() ? &none : n->buf.data();
  op->scount = static_cast<MPI_Count>(n->buf.size());
  op->stype = MPI_BYTE;
  op->peer = dest;
  op->tag = am_tag;
  op->bytes = n->buf.size();
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* self = static_cast<send_node*>(e);
    if (self->op->error != MPI_SUCCESS) (*self->on_failure)(failure_of(self->op));
    mpi::detail::release(self->op);
    delete self;
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}

bool am_two_sided::poll() { return false; }  // hytask's pollers move these operations

void am_two_sided::complete_round(std::uint64_t key, std::uint64_t label, round_done done,
                                  round_mismatch mismatch) {
  auto* n = new round_node;
  n->self = this;
  n->key = key;
  n->label = label;
  n->done = std::move(done);
  n->mismatch = std::move(mismatch);
  {
    std::lock_guard lk(rounds_mu_);
    started_.push_back(n);
  }
  try_join();
}

void am_two_sided::acknowledged(std::uint64_t key, std::uint64_t n) {
  {
    std::lock_guard lk(rounds_mu_);
    counts_[key].acked += n;
  }
  try_join();
}

// The oldest started round joins its collective once every buffer of it this rank sent is
// acknowledged, and the previous round's collective has completed. Posted outside the
// lock: the operation may complete inside submit and run round_ended from there.
void am_two_sided::try_join() {
  round_node* n = nullptr;
  {
    std::lock_guard lk(rounds_mu_);
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
    self->self->round_ended(self);
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}

void am_two_sided::round_ended(round_node* n) {
  operation* op = n->op;
  n->op = nullptr;
  const bool ok = op->error == MPI_SUCCESS;
  if (!ok) on_failure_(failure_of(op));
  mpi::detail::release(op);
  const bool same = ok && n->out[0] == n->label && ~n->out[1] == n->label;
  std::uint64_t handled = 0;
  {
    std::lock_guard lk(rounds_mu_);
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
    std::lock_guard lk(rounds_mu_);
    joined_ = false;
  }
  try_join();
}

// The labels differ (every rank saw the same minimum and maximum, so every rank is here,
// and no rank posts another collective on comm_ before this one): every rank's label, to
// every rank, for the message.
void am_two_sided::gather_labels(round_node* n) {
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
    am_two_sided* am = self->self;
    operation* o = self->op;
    if (o->error != MPI_SUCCESS) {
      am->on_failure_(failure_of(o));
    } else {
      try {
        self->mismatch(self->labels);
      } catch (...) {
        am->on_failure_(std::current_exception());
      }
    }
    mpi::detail::release(o);
    delete self;
  };
  op->done.add_waiter(n);
  sys_.submit(op, true);
}


}  // namespace hytask::global::detail
