#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "comm/comm.hpp"
#include "comm/operation.hpp"
#include "global/am.hpp"
#include "global/am_rounds.hpp"
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
  rounds_ = std::make_unique<am_rounds>(sys_, comm_, size_, on_failure_, activity_);
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
  if (bytes == 0 && source == rank_) {  // a close token
    if (closing_.load(std::memory_order_acquire)) {
      delete r;
      if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) retired_->set();
      return;
    }
  } else if (auto ack = rounds_->take(source, buf, on_receive_)) {
    acks_sent_.fetch_add(1, std::memory_order_relaxed);
    post_send(source, std::move(*ack));
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
    if (in_a_round(h.round)) rounds_->sent(round_key(h.round, h.epoch));
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
  rounds_->start(key, label, std::move(done), std::move(mismatch));
}

}  // namespace hytask::global::detail
