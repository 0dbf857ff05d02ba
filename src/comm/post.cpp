// Posting: submit hands an operation to MPI on this thread when it may call MPI, or queues it
// for the thread that may (the command queue, run by run_commands there); post_here posts it
// and tests it once, and registers it with the engine when it is still in flight.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm/cancel.hpp"
#include "comm/channels.hpp"
#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/trace_messages.hpp"
#include "core/face.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {

namespace {

// Whether to test an operation right after posting it, learnt per thread from how often
// that test found it complete: an average of the outcomes (fixed point, 1024 = always),
// updated only when a test is made. Tests are made while at least a quarter succeed, and
// otherwise on one post in 16, to notice when they would pay again.
struct post_test_advice {
  std::uint32_t score = 1024;
  std::uint32_t tick = 0;
  bool advise() noexcept { return score >= 256 || (++tick & 15) == 0; }
  void learn(bool complete) noexcept { score = score - score / 16 + (complete ? 64 : 0); }
};
thread_local post_test_advice t_post_test;

}  // namespace

void comm_system::post_here(operation* op) {
  posts_.fetch_add(1, std::memory_order_relaxed);
  if (trace::enabled()) {
    op->posted_ns = trace::now();
    // The runtime's own operations (the job-cancel listener, the agreement at shutdown, the
    // global layer's messages) under a category of their own: tools that read the program's
    // communication from the trace (hytask-model) skip them.
    const char* cat = op->internal ? "mpi-runtime" : "mpi";
    trace::message m;
    if ((op->what == kind::send || op->what == kind::ssend) && trace_send(op, m)) {
      // The send's identity, for the flow to its receive in the merged trace.
      trace::send(op_name(op), cat, op->posted_ns, op->task_id, op->peer, m);
    } else {
      if (op->what == kind::recv) trace_receive_posted(op);
      trace::instant(op_name(op), cat, op->posted_ns, op->task_id, {"peer", op->peer},
                     {"bytes", static_cast<std::int64_t>(op->bytes)});
    }
  }
  // Post, then test once: eager sends, receives whose message is already in, and probes
  // that find one are complete at once, which spares them the registry and a suspension.
  // A test that finds an operation still in flight is not free, though: MPI runs its
  // progress engine, a system call over TCP (2.3-2.5 us added to each small exchange on the
  // cluster in a box, issue 16). So sends are always tested, other operations only while
  // the test has paid off recently (see post_test_advice).
  calling_mpi guard;
  if (cancellable(op)) {
    // Its task was cancelled before the operation could be posted (queued for this thread:
    // the waiter is alive, only this thread completes operations), or the job was; or it is
    // a cancelled task's wait, submitted interrupted (intercept/posted.cpp).
    hytask::detail::task* t = op->waiter.load(std::memory_order_seq_cst);
    if (op->cancel_requested.load(std::memory_order_acquire) ||
        (!op->internal && (core::job_cancelled() || (t != nullptr && task_is_cancelled(t))))) {
      if (op->what != kind::polled) {
        complete_cancelled(op);
        return;
      }
      // A wait on the program's requests, which must complete: its hook cancels what MPI
      // can, and it is tested (drained) as usual.
      op->cancel_requested.store(true, std::memory_order_release);
      interrupt_polled(op);
    }
  }
  if (op->comm != world_) forward_errors(op->comm);
  int flag = 0;
  MPI_Status st{};
  int rc = MPI_SUCCESS;
  if (op->what == kind::probe) {
    rc = MPI_Iprobe(op->peer, op->tag, op->comm, &flag, &st);
  } else if (op->what == kind::mprobe) {
    rc = MPI_Improbe(op->peer, op->tag, op->comm, &flag, &op->message, &st);
  } else if (op->what == kind::polled) {
    rc = op->test(op->call_arg, &flag, &st);
  } else if (op->what == kind::call) {
    rc = post_now(op);  // blocking: done as it returns
    flag = 1;
  } else {
    rc = post_now(op);
    if (rc == MPI_SUCCESS) {
      op->state.store(op_posted, std::memory_order_release);
      const bool send = op->what == kind::send || op->what == kind::start_send;
      if (send || t_post_test.advise()) {
        rc = MPI_Test(&op->req, &flag, &st);
        if (!send) t_post_test.learn(flag != 0);
      }
    }
  }
  if (rc != MPI_SUCCESS || flag) {
    complete(op, rc == MPI_SUCCESS ? &st : nullptr, rc);
    return;
  }
  op->state.store(op_posted, std::memory_order_release);
  engine_.add(op);
  // Asked to cancel while it was being posted (a scan found it neither queued nor pending).
  if (op->cancel_requested.load(std::memory_order_seq_cst)) engine_.request_cancel(op);
  // Someone must poll it: idle workers do (or ask the MPI thread to, funneled), and a worker
  // may have gone to sleep while the operation was neither queued nor registered yet, so
  // sleepers are woken even when the poster is not a worker. Then the progress policy.
  if (access_->workers_poll())
    core::wake_for_progress();
  policy_->registered();
}

void comm_system::submit(operation* op, bool internal) {
  jobs_.before_submit();  // comm/job_cancel.hpp
  op->internal = internal;
  const core::thread_place here = internal ? core::thread_place{} : core::this_thread_place();
  const bool worker = here.on_worker;
  core::task* me = here.current;
  if (!internal) jobs_.note_comm(op->comm);
  // While the job is cancelled main posts nothing either (comm/job_cancel.hpp).
  if (worker && me == nullptr && core::job_cancelled()) throw_cancelled(op);
  if (me != nullptr) {
    // A cancelled task starts nothing that may never complete (comm/cancel.hpp).
    if (task_is_cancelled(me)) throw_cancelled(op);
    op->task_name = me->name;
    op->task_id = core::id_of(me);
    check_post_order(op, settings_.order_check, rank_);
    // Tasks of this type communicate: later ones start in the communication class.
    if (!(me->flags & hytask::detail::flag_internal)) core::learn_comm(me);
  }
  if (may_call_mpi()) {
    post_here(op);
    return;
  }
  commands_.push(op);  // holds a reference
  nudge();
}

void comm_system::run_commands() {
  if (!commands_.any()) return;
  std::vector<operation*> batch;
  commands_.take(batch);
  for (operation* op : batch) {
    post_here(op);
    release(op);
  }
}

}  // namespace hytask::mpi::detail
