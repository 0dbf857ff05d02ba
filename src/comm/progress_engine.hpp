// The progress engine: the requests that are pending, tested in batches with MPI_Testsome
// by one poller at a time; probes and polled operations, which have no request, are tested
// one by one each round. Completing an operation sets its event, which resumes the task
// that waits for it, releases tasks that depend on it, or ends a task's hold.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "comm/operation.hpp"
#include "core/face.hpp"

namespace hytask::mpi::detail {

class engine {
 public:
  // Takes a reference on an operation that was posted and is not complete yet. A passive one
  // (operation::passive) is tested with the others but not counted as pending, and while
  // nothing else is pending, once every 256 polls a thread makes (busy workers poll every
  // HYTASK_POLL_EVERY task switches): nobody stays awake for it.
  void add(operation* op);
  // Tests the pending operations; only a thread allowed to call MPI may poll. Returns
  // progressed when something completed, pending when a poll found nothing (or another
  // thread is polling), nothing_pending when nothing is outstanding.
  core::poll_result poll();
  std::size_t pending() const noexcept { return pending_.load(std::memory_order_seq_cst); }
  std::uint64_t completions() const noexcept { return completions_.load(std::memory_order_relaxed); }
  // Polls made so far (by anyone): the backstop thread polls only when this has not moved.
  std::uint64_t polls() const noexcept { return polls_.load(std::memory_order_relaxed); }
  // Counters this engine keeps up to date elsewhere (the node table's row, seed 002): the
  // number of pending operations, and whether a poll is inside MPI. Set before any add().
  void mirror(std::atomic<std::uint32_t>* pending, std::atomic<std::uint32_t>* in_mpi,
              std::atomic<std::uint64_t>* polls) noexcept {
    pending_mirror_ = pending;
    in_mpi_mirror_ = in_mpi;
    polls_mirror_ = polls;
  }
  // Calls f(op) for every pending operation (the watchdog); takes the poller's turn.
  template <class F>
  void for_each_pending(F&& f);
  // Asks that op, a pending cancellable operation, be cancelled at the next poll (from any
  // thread); the poller calls MPI_Cancel. Wakes nobody: the caller asks for a poll.
  void request_cancel(operation* op) noexcept {
    op->cancel_requested.store(true, std::memory_order_seq_cst);
    cancels_.fetch_add(1, std::memory_order_seq_cst);
  }
  // While a caller waits for a passive operation (retiring it), polls are not skipped.
  void force_polls(int d) noexcept { forced_.fetch_add(d, std::memory_order_seq_cst); }
  bool forced() const noexcept { return forced_.load(std::memory_order_seq_cst) != 0; }
  // A task was cancelled (from any thread): the next poll cancels the pending operations a
  // cancelled task waits for or holds. The poller looks, as it alone completes operations:
  // their waiting tasks are alive while it does.
  void request_scan() noexcept {
    scan_.store(true, std::memory_order_seq_cst);
    cancels_.fetch_add(1, std::memory_order_seq_cst);
  }

 private:
  void merge_incoming();
  std::size_t issue_cancels();  // the poller: MPI_Cancel the operations asked to cancel

  mutable std::mutex mutex_;            // guards incoming_
  std::vector<operation*> incoming_;    // added since the last poll
  std::atomic<std::size_t> pending_{0};
  std::atomic<std::uint64_t> completions_{0};
  std::atomic<std::uint64_t> polls_{0};  // written by the poller only
  std::atomic<bool> polling_{false};
  std::atomic<std::uint32_t> cancels_{0};  // requests since the poller last looked
  std::atomic<bool> scan_{false};
  std::atomic<int> passive_{0};  // passive operations added and not completed
  std::atomic<int> forced_{0};
  std::atomic<std::uint32_t>* pending_mirror_ = nullptr;
  std::atomic<std::uint32_t>* in_mpi_mirror_ = nullptr;
  std::atomic<std::uint64_t>* polls_mirror_ = nullptr;

  // Owned by the poller.
  std::vector<MPI_Request> requests_;
  std::vector<operation*> ops_;
  std::vector<operation*> probes_;      // no request: probes (MPI_Iprobe) and polled
                                        // operations (their test function), each round
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

template <class F>
void engine::for_each_pending(F&& f) {
  while (polling_.exchange(true, std::memory_order_acquire)) {
  }
  merge_incoming();
  for (operation* op : ops_) f(op);
  for (operation* op : probes_) f(op);
  polling_.store(false, std::memory_order_release);
}

}  // namespace hytask::mpi::detail
