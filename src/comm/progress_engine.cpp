// The progress engine (comm/progress_engine.hpp): registering operations, polling them in
// batches with MPI_Testsome (probes and polled operations one by one), cancelling on request.
#include "comm/progress_engine.hpp"

#include "comm/cancel.hpp"
#include "comm/error_handler.hpp"
#include "core/face.hpp"

#include "trace/trace.hpp"

namespace hytask::mpi::detail {

namespace {
constexpr std::uint64_t trace_long_poll_ns = 2000;
}  // namespace

void engine::add(operation* op) {
  op->refs.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(op);
  }
  if (op->passive) {
    passive_.fetch_add(1, std::memory_order_seq_cst);
    return;
  }
  pending_.fetch_add(1, std::memory_order_seq_cst);  // then posters look for parked pollers
  if (pending_mirror_) pending_mirror_->fetch_add(1, std::memory_order_seq_cst);
}

void engine::merge_incoming() {
  std::vector<operation*> fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fresh.swap(incoming_);
  }
  for (operation* op : fresh) {
    if (op->what == kind::probe || op->what == kind::mprobe || op->what == kind::polled) {
      probes_.push_back(op);
    } else {
      requests_.push_back(op->req);
      ops_.push_back(op);
    }
  }
}

std::size_t engine::issue_cancels() {
  const bool scan = scan_.exchange(false, std::memory_order_seq_cst);
  // A cancelled job cancels every receive of the program (main's too), not only its tasks'.
  const bool job = scan && core::job_cancelled();
  auto wanted = [scan, job](operation* op) {
    if (op->cancel_requested.load(std::memory_order_acquire)) return true;
    if (!scan || !cancellable(op) || op->internal) return false;
    hytask::detail::task* t = op->waiter.load(std::memory_order_seq_cst);
    if (!job && (t == nullptr || !task_is_cancelled(t))) return false;
    op->cancel_requested.store(true, std::memory_order_release);
    return true;
  };
  std::size_t done = 0;
  for (operation* op : ops_)
    if (op != nullptr && !op->cancel_issued && wanted(op)) {
      op->cancel_issued = true;
      MPI_Cancel(&op->req);  // completes (cancelled) at a test, unless already matched
    }
  std::size_t j = 0;
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    operation* op = probes_[i];
    if (!wanted(op)) {
      probes_[j++] = op;
    } else if (op->what == kind::polled) {
      // A wait on the program's requests: its hook cancels what MPI can, and the operation
      // stays, tested until they have all completed (they are the program's).
      interrupt_polled(op);
      probes_[j++] = op;
    } else {
      complete_cancelled(op);
      release(op);
      ++done;
    }
  }
  probes_.resize(j);
  return done;
}

namespace {
thread_local unsigned t_passive_tick = 0;  // per thread: no shared counter on the hot path
}

core::poll_result engine::poll() {
  if (pending_.load(std::memory_order_acquire) == 0 && forced_.load(std::memory_order_relaxed) == 0 &&
      cancels_.load(std::memory_order_relaxed) == 0) {
    if (passive_.load(std::memory_order_relaxed) == 0 || (++t_passive_tick & 255) != 0)
      return core::poll_result::nothing_pending;
  }
  if (polling_.exchange(true, std::memory_order_acquire)) return core::poll_result::pending;
  calling_mpi guard;  // errors come back as codes, whatever the communicators' handlers
  if (in_mpi_mirror_) {
    in_mpi_mirror_->store(1, std::memory_order_seq_cst);
    polls_mirror_->store(polls_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  polls_.store(polls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  merge_incoming();
  const std::uint64_t t0 = trace::enabled() ? trace::now() : 0;
  std::size_t done = 0, done_passive = 0;
  if (cancels_.load(std::memory_order_relaxed) != 0 && cancels_.exchange(0, std::memory_order_seq_cst) != 0)
    done += issue_cancels();

  if (!requests_.empty()) {
    const int n = static_cast<int>(requests_.size());
    indices_.resize(requests_.size());
    statuses_.resize(requests_.size());
    int outcount = 0;
    int rc = MPI_Testsome(n, requests_.data(), &outcount, indices_.data(), statuses_.data());
    if (outcount == MPI_UNDEFINED) outcount = 0;
    if (rc == MPI_SUCCESS && outcount == 0) {
      // Open MPI's Testsome checks the requests first and progresses only when none is
      // complete, without checking again: what that progress completed would wait for the
      // next poll, a whole polling period later (measured: 1.5x the period per message
      // while workers are busy). A second call reports it now.
      rc = MPI_Testsome(n, requests_.data(), &outcount, indices_.data(), statuses_.data());
      if (outcount == MPI_UNDEFINED) outcount = 0;
    }
    for (int k = 0; k < outcount; ++k) {
      const int i = indices_[static_cast<std::size_t>(k)];
      operation* op = ops_[static_cast<std::size_t>(i)];
      const MPI_Status& st = statuses_[static_cast<std::size_t>(k)];
      int err = MPI_SUCCESS;
      if (rc == MPI_ERR_IN_STATUS) err = st.MPI_ERROR;
      else if (rc != MPI_SUCCESS) err = rc;
      // What MPI left of the request: a persistent one stays, inactive, unless MPI freed it
      // (Open MPI 4.1 frees a persistent request whose start failed).
      op->req = requests_[static_cast<std::size_t>(i)];
      requests_[static_cast<std::size_t>(i)] = MPI_REQUEST_NULL;
      ops_[static_cast<std::size_t>(i)] = nullptr;
      ++(op->passive ? done_passive : done);
      complete(op, &st, err);
      release(op);
    }
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS && outcount == 0) {
      // The call itself failed (no per-request status): fail every operation it covered.
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        ++(ops_[i]->passive ? done_passive : done);
        complete(ops_[i], nullptr, rc);
        release(ops_[i]);
        ops_[i] = nullptr;
        requests_[i] = MPI_REQUEST_NULL;
      }
    }
    if (done + done_passive != 0) {  // compact
      std::size_t j = 0;
      for (std::size_t i = 0; i < ops_.size(); ++i)
        if (ops_[i] != nullptr) {
          ops_[j] = ops_[i];
          requests_[j] = requests_[i];
          ++j;
        }
      ops_.resize(j);
      requests_.resize(j);
    }
  }

  if (!probes_.empty()) {
    std::size_t j = 0;
    for (std::size_t i = 0; i < probes_.size(); ++i) {
      operation* op = probes_[i];
      int flag = 0;
      MPI_Status st{};
      int rc = op->what == kind::probe    ? MPI_Iprobe(op->peer, op->tag, op->comm, &flag, &st)
               : op->what == kind::mprobe ? MPI_Improbe(op->peer, op->tag, op->comm, &flag, &op->message, &st)
                                       : op->test(op->call_arg, &flag, &st);
      if (rc != MPI_SUCCESS || flag) {
        complete(op, rc == MPI_SUCCESS ? &st : nullptr, rc);
        release(op);
        ++done;
      } else {
        probes_[j++] = op;
      }
    }
    probes_.resize(j);
  }

  if (in_mpi_mirror_) in_mpi_mirror_->store(0, std::memory_order_release);
  if (done_passive != 0) passive_.fetch_sub(static_cast<int>(done_passive), std::memory_order_acq_rel);
  if (done != 0) {
    pending_.fetch_sub(done, std::memory_order_acq_rel);
    if (pending_mirror_)
      pending_mirror_->fetch_sub(static_cast<std::uint32_t>(done), std::memory_order_acq_rel);
    completions_.fetch_add(done, std::memory_order_relaxed);
  }
  // Polls that completed something, and those that took long enough to have moved data
  // (over TCP a poll copies what the socket holds): where progress spends its CPU. The
  // short empty polls of an idle worker would flood the trace.
  if (trace::enabled()) {
    const std::uint64_t t1 = trace::now();
    if (done != 0 || t1 - t0 >= trace_long_poll_ns)
      trace::slice("poll", "mpi", t0, t1, 0, nullptr, {"completed", static_cast<std::int64_t>(done)},
                   {"pending", static_cast<std::int64_t>(ops_.size() + probes_.size())});
  }
  polling_.store(false, std::memory_order_release);
  if (done + done_passive != 0) return core::poll_result::progressed;
  return pending_.load(std::memory_order_relaxed) != 0 ? core::poll_result::pending
                                                       : core::poll_result::nothing_pending;
}

}  // namespace hytask::mpi::detail
