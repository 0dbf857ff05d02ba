// Cancellation across ranks (comm/job_cancel.hpp).
#include "comm/job_cancel.hpp"

#include <chrono>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/operation.hpp"
#include "core/face.hpp"
#include "hytask/comm/cancel.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi::detail {

namespace {

constexpr int notice_tag = 1;
const char* const layer_name = "hytask job cancellation";

operation* make_op(kind k, MPI_Comm comm) {
  auto* op = new operation;
  op->what = k;
  op->comm = comm;
  op->task_name = layer_name;
  return op;
}

// Posts one of the layer's operations and waits for it (main runs tasks meanwhile).
void run(comm_system& c, operation* op) {
  struct hold {
    operation* op;
    ~hold() { release(op); }
  } h{op};
  c.submit(op, true);
  c.wait(op);
  if (op->error != MPI_SUCCESS) throw mpi::make_error(op);
}

// A notice's receive, passive: see the header.
struct notice_node : hytask::detail::event_waiter {
  job_cancel* self;
  operation* op;
};

}  // namespace

void job_cancel::initialise(MPI_Comm world) {
  for (auto& slot : comms_) slot.store(MPI_COMM_NULL, std::memory_order_relaxed);
  world_ = world;
  if (MPI_Comm_dup(world, &comm_) != MPI_SUCCESS)
    throw usage_error("hytask: MPI_Comm_dup for job cancellation failed");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

void job_cancel::finalise() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void job_cancel::start() {
  if (c_.size() > 1) post_notice();
}

operation* job_cancel::notice_recv() {
  operation* op = make_op(kind::recv, comm_);
  op->rbuf = &notice_buf_;
  op->rcount = 1;
  op->rtype = MPI_INT;
  op->peer = MPI_ANY_SOURCE;
  op->tag = notice_tag;
  op->bytes = sizeof(int);
  return op;
}

void job_cancel::post_notice() {
  operation* op = notice_recv();
  op->passive = true;
  {
    std::lock_guard lk(mu_);
    if (retiring_) {
      release(op);
      return;
    }
    notice_ = op;
    acquire(op);  // notice_'s reference, dropped when it completes
  }
  auto* n = new notice_node;
  n->self = this;
  n->op = op;
  n->fire = [](hytask::detail::event_waiter* e) {
    auto* node = static_cast<notice_node*>(e);
    job_cancel* self = node->self;
    operation* o = node->op;
    delete node;
    self->notice_arrived(o);
  };
  op->done.add_waiter(n);
  struct hold {
    operation* op;
    ~hold() { release(op); }
  } h{op};
  c_.submit(op, true);
}

// On the thread that completed it (a poller).
void job_cancel::notice_arrived(operation* op) {
  const bool got = op->error == MPI_SUCCESS && !op->cancelled;
  bool again = false;
  {
    std::lock_guard lk(mu_);
    if (notice_ == op) notice_ = nullptr;
    again = !retiring_;
  }
  release(op);
  if (got) {
    notices_.fetch_add(1, std::memory_order_acq_rel);
    core::cancel_job();  // every task of this rank; the core tells the MPI layer
  }
  if (again) post_notice();
}

void job_cancel::retire_notice() {
  operation* op = nullptr;
  {
    std::lock_guard lk(mu_);
    retiring_ = true;
    op = notice_;
    if (op) acquire(op);
  }
  if (op == nullptr) return;
  // A passive receive is polled rarely: make the polls happen while it goes.
  c_.eng().force_polls(1);
  c_.cancel(op);
  c_.wait(op);
  c_.eng().force_polls(-1);
  release(op);
}

int job_cancel::agree(int* values, int n) {
  operation* op = make_op(kind::allreduce, comm_);
  op->sbuf = MPI_IN_PLACE;
  op->rbuf = values;
  op->scount = op->rcount = n;
  op->stype = op->rtype = MPI_INT;
  op->op = MPI_SUM;
  op->bytes = sizeof(int) * static_cast<std::size_t>(n);
  run(c_, op);
  return values[0];
}

std::uint64_t job_cancel::drain_once() {
  struct state {
    job_cancel* self;
    std::uint64_t drained = 0;
    std::vector<char> scratch;
  } st{this, 0, {}};
  operation* op = make_op(kind::call, world_);
  op->call_name = "MPI_Improbe/MPI_Mrecv (draining after a job cancellation)";
  // int, stated: MPI_SUCCESS is an enumerator in some MPIs (SimGrid's SMPI), not an int.
  op->call = [](void* arg) -> int {
    auto* s = static_cast<state*>(arg);
    std::vector<MPI_Comm> comms{s->self->world_};
    for (auto& slot : s->self->comms_)
      if (MPI_Comm c = slot.load(std::memory_order_acquire); c != MPI_COMM_NULL) comms.push_back(c);
    for (MPI_Comm c : comms)
      for (;;) {
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st{};
        int rc = MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &msg, &st);
        if (rc != MPI_SUCCESS) return rc;
        if (!flag) break;
        int bytes = 0;
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        s->scratch.resize(static_cast<std::size_t>(bytes > 0 ? bytes : 1));
        rc = MPI_Mrecv(s->scratch.data(), bytes, MPI_BYTE, &msg, &st);
        if (rc != MPI_SUCCESS) return rc;
        ++s->drained;
      }
    return MPI_SUCCESS;
  };
  op->call_arg = &st;
  run(c_, op);
  return st.drained;
}

std::uint64_t job_cancel::program_sends_pending() {
  auto program_send = [](const operation* op) {
    return !op->internal && !op->passive && (op->what == kind::send || op->what == kind::ssend ||
                                               op->what == kind::start_send);
  };
  std::uint64_t n = 0;
  c_.eng().for_each_pending([&](operation* op) { n += program_send(op) ? 1 : 0; });
  c_.for_each_queued([&](operation* op) { n += program_send(op) ? 1 : 0; });
  return n;
}

bool job_cancel::settle(bool shutdown, bool* cancelled) {
  // 1. Agree: who broadcast, whether any rank's job is cancelled, and how many ranks are at
  // the runtime's end (the others settle explicitly, and will come again at theirs).
  int v[3] = {sent_.load() ? 1 : 0, core::job_cancelled() ? 1 : 0, shutdown ? 1 : 0};
  agree(v, 3);
  const bool everyone_ending = v[2] == c_.size();
  if (cancelled) *cancelled = v[0] != 0 || v[1] != 0;
  if (v[0] == 0 && v[1] == 0) {  // nobody cancelled (the runtime's end of most jobs)
    if (shutdown && everyone_ending) retire_notice();
    return everyone_ending;
  }
  core::cancel_job();  // also where it was not noticed yet
  // The notices on their way: one from each broadcaster to each other rank.
  const int expected = v[0] - (sent_.load() ? 1 : 0);
  retire_notice();
  for (int k = notices_.load(); k < expected; ++k) run(c_, notice_recv());
  // 2. Drain the sends that the cancelled receives left unmatched.
  for (int round = 0;; ++round) {
    drain_once();
    int left = static_cast<int>(program_sends_pending());
    agree(&left, 1);
    if (left == 0) break;
    // Their tasks need a moment; main runs tasks meanwhile.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(round < 10 ? 1 : 10);
    while (std::chrono::steady_clock::now() < until) hytask::this_task::yield();
  }
  // 3. Every task done (collective with global dependencies), then a barrier.
  std::exception_ptr error;
  try {
    hytask::wait_all();
  } catch (...) {
    error = std::current_exception();
  }
  drain_once();  // what arrived meanwhile; after the barrier, messages are the next ones'
  run(c_, make_op(kind::barrier, comm_));
  core::end_job_cancel();
  sent_.store(false);
  notices_.store(0);
  if (!shutdown) {
    {
      std::lock_guard lk(mu_);
      retiring_ = false;
    }
    if (c_.size() > 1) post_notice();
  }
  if (error) std::rethrow_exception(error);
  return everyone_ending;
}

void job_cancel::broadcast() {
  core::cancel_job();
  if (sent_.exchange(true)) return;  // once until the job is settled
  static int from = 0;
  from = c_.rank();
  for (int r = 0; r < c_.size(); ++r) {
    if (r == c_.rank()) continue;
    operation* op = make_op(kind::send, comm_);
    op->sbuf = &from;
    op->scount = 1;
    op->stype = MPI_INT;
    op->peer = r;
    op->tag = notice_tag;
    op->bytes = sizeof(int);
    c_.submit(op, true);  // eager: it completes on its own; drain() waits for it at the end
    release(op);
  }
}

void job_cancel::collective() {
  if (!core::on_main_outside_tasks())
    throw usage_error(
        "hytask::mpi::cancel_collective: call it from main, on every rank (it waits for the "
        "job's tasks); from a task, or on one rank, use hytask::mpi::cancel_broadcast()");
  core::cancel_job();
  settle(false, nullptr);
}

bool job_cancel::settle_if_cancelled() {
  if (!core::on_main_outside_tasks())
    throw usage_error(
        "hytask::mpi::settle_cancellation: call it from main, on every rank (it agrees with "
        "the other ranks and waits for the job's tasks)");
  bool cancelled = false;
  settle(false, &cancelled);
  return cancelled;
}

void job_cancel::at_shutdown() {
  started_.store(true);  // no first notice receive now, only to retire it
  if (std::uncaught_exceptions() != 0) {  // unwinding: the other ranks may not come
    retire_notice();
    return;
  }
  // A rank that settled explicitly while this one ended (it saw a cancellation this rank's
  // finished tasks never did) comes to its own end later: settle again until every rank is
  // at its end in the same round.
  while (!settle(true, nullptr)) {
  }
}

}  // namespace hytask::mpi::detail

namespace hytask::mpi {

namespace {
detail::comm_system& comm(const char* what) {
  if (auto* c = detail::comm_system::instance()) return *c;
  throw usage_error(std::string("hytask::mpi::") + what +
                    ": no runtime with MPI: construct hytask::runtime in main under mpiexec "
                    "(or with HYTASK_MPI=on)");
}
}  // namespace

void cancel_broadcast() { comm("cancel_broadcast").jobs().broadcast(); }
void cancel_collective() { comm("cancel_collective").jobs().collective(); }
bool settle_cancellation() { return comm("settle_cancellation").jobs().settle_if_cancelled(); }
bool job_cancelled() noexcept { return core::job_cancelled(); }

}  // namespace hytask::mpi
