// Cancellation across ranks (issue 20, seed 001 §5.2.8): the job's tasks on every rank.
//
// cancel_broadcast (any rank, any thread): cancels the job on this rank (core::cancel_job:
// every task, until the job is settled) and sends a notice to every other rank, on a
// communicator of its own. Each rank keeps one receive of notices posted (from its first
// operation through hytask on: a rank that never communicates receives its notices when the
// job is settled), *passive*: the
// engine tests it with the others but does not count it as pending, and tests it alone once
// every 256 polls (busy workers poll every HYTASK_POLL_EVERY task switches), so nobody stays
// awake for it and nothing is paid while nobody cancels. A notice cancels the job there too
// (from the poller: the core's cancellation is thread-safe) and the receive is posted again.
//
// cancel_collective (main, every rank) settles a cancelled job, or cancels it now:
//   1. agree (an allreduce on the communicator): who broadcast; the job is cancelled
//      everywhere; the notices still on their way are received (the passive receive is
//      retired, the rest received actively);
//   2. drain: the receives of the program were cancelled (comm/cancel.hpp), so a send still
//      pending is one nobody will match. Rounds: each rank receives and discards every
//      message waiting on the communicators the program used (MPI_Improbe / MPI_Mrecv), then
//      an allreduce sums the sends still pending; until the sum is zero. The tasks suspended
//      in those sends resume as they complete;
//   3. wait_all (collective with global dependencies: their protocol goes on for cancelled
//      tasks, which complete as no-ops), a barrier, and the job is no longer cancelled.
// settle_cancellation (main, every rank) does 1, and 2-3 only if some rank cancelled.
// The runtime's end does 1 for every job (one small allreduce) and 2-3 when some rank
// cancelled and nobody settled, then retires the notice receive: MPI_Finalize finds nothing
// pending. Step 1 also counts the ranks at their end: when some rank settles explicitly
// there while others end, those settle again with it at its own end.
#pragma once

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

namespace hytask::mpi::detail {

class comm_system;
struct operation;

class job_cancel {
 public:
  explicit job_cancel(comm_system& c) : c_(c) {}
  job_cancel(const job_cancel&) = delete;
  job_cancel& operator=(const job_cancel&) = delete;

  // On the thread that initialised MPI: its communicator (a duplicate of the runtime's).
  void initialise(MPI_Comm world);
  // Before an operation is submitted: the notice receive is posted with the first operation
  // of the job, not when the runtime starts — in funneled mode the program's main may call
  // MPI directly right after, and hytask's MPI thread must not be inside MPI then.
  void before_submit() {
    if (!started_.load(std::memory_order_relaxed) && !started_.exchange(true)) start();
  }
  // On the thread that finalises MPI.
  void finalise();

  void broadcast();
  void collective();
  // settle_cancellation: settles only if some rank cancelled; returns whether one had.
  bool settle_if_cancelled();
  // The runtime's end, from main before the scheduler stops (unwinding: local only).
  void at_shutdown();

  // A program operation on comm (submit): the communicators the drain receives on.
  void note_comm(MPI_Comm comm) noexcept {
    if (comm == world_ || comm == MPI_COMM_NULL) return;
    for (auto& slot : comms_) {
      MPI_Comm seen = slot.load(std::memory_order_relaxed);
      if (seen == comm) return;
      if (seen == MPI_COMM_NULL && slot.compare_exchange_strong(seen, comm)) return;
      if (seen == comm) return;
    }
  }

 private:
  void start();
  void post_notice();
  operation* notice_recv();  // a receive of one notice, from any rank, into notice_buf_
  void notice_arrived(operation* op);
  // Returns whether every rank was at its runtime's end (shutdown) in this settlement;
  // cancelled: whether any rank had cancelled the job.
  bool settle(bool shutdown, bool* cancelled);
  void retire_notice();
  int agree(int* values, int n);  // allreduce (sum) of n ints on comm_, from main
  std::uint64_t drain_once();     // receive and discard what waits on the program's communicators
  std::uint64_t program_sends_pending();

  comm_system& c_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm world_ = MPI_COMM_NULL;
  std::array<std::atomic<MPI_Comm>, 16> comms_{};

  std::mutex mu_;                     // notice_ and retiring_
  operation* notice_ = nullptr;       // the posted notice receive
  bool retiring_ = false;             // do not post it again
  int notice_buf_ = 0;
  std::atomic<int> notices_{0};       // notices received since the job was last settled
  std::atomic<bool> sent_{false};     // this rank broadcast since then
  std::atomic<bool> started_{false};  // the first notice receive was posted
};

}  // namespace hytask::mpi::detail
