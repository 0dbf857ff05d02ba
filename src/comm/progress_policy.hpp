// Who polls pending MPI operations while every worker is busy (HYTASK_PROGRESS). One
// implementation per file (progress_<policy>.cpp; node's in src/node/), each registered by
// name (comm/progress_registry.hpp), and make_progress_policy makes the one asked for. Under
// every policy an idle worker polls, or asks the thread that may call MPI to (the access
// mode, comm/access.hpp, decides which).
//
// A policy may need a thread: in multiple mode comm_system starts a progress thread for it;
// in funneled mode the MPI thread runs its rounds; in masteronly mode nothing does (only
// main calls MPI). The thread's loop (comm_system::thread_main) is the same for all: run
// queued commands (MPI thread), call round(), sleep as long as it says on the thread word,
// which posts, nudges and stop bump.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "platform/futex.hpp"
#include "hytask/comm/progress_stats.hpp"

namespace hytask::mpi::detail {

class comm_system;

class progress_policy_impl {
 public:
  explicit progress_policy_impl(comm_system& c) : c_(c) {}
  virtual ~progress_policy_impl() = default;
  progress_policy_impl(const progress_policy_impl&) = delete;
  progress_policy_impl& operator=(const progress_policy_impl&) = delete;

  // MPI is initialised (on the thread that owns it; world: the runtime's communicator).
  virtual void mpi_ready(MPI_Comm /*world*/) {}
  // The word the thread sleeps on, if not comm_system's own; it may be in memory shared
  // between processes (waited on and woken with the process-shared futex calls).
  virtual std::atomic<std::uint32_t>* shared_word() { return nullptr; }
  // Busy workers poll every this many task switches (0: never), and at a switch once this
  // long has passed since their last poll while operations are pending (0: never).
  virtual unsigned busy_every() const { return 0; }
  virtual std::int64_t busy_every_ns() const { return 0; }
  // Whether the policy needs a thread of its own in multiple mode.
  virtual bool wants_thread() const { return false; }
  // The thread's timer slack (its sleeps are polling periods).
  virtual unsigned long timer_slack_ns() const { return core::poll_timer_slack_ns; }
  // One round of the thread: poll as the policy decides (`asked`: a worker asked the MPI
  // thread for a poll, which is always made). Returns how long to sleep, in ns; -1 parks
  // the thread until a post, a nudge or stop bumps its word.
  virtual long round(bool asked) = 0;
  // The thread is parking (round returned -1) and finds operations pending after it
  // announced so: how long it sleeps instead (-1: park anyway, the workers will poll).
  virtual long park_timeout() { return -1; }
  // The thread woke from its sleep.
  virtual void woke() {}
  // The comm system is stopping: MPI will be finalised once the thread has drained. A policy
  // whose own threads call MPI stops them here.
  virtual void stopping() {}
  // An operation was registered (posted, not complete at once), on the posting thread.
  virtual void registered() {}
  // Adds the policy's own counters (hytask::mpi::progress_stats()).
  virtual void counters(progress_counters& /*out*/) const {}

 protected:
  comm_system& c_;
};

}  // namespace hytask::mpi::detail
