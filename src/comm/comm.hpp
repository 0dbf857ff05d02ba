// The task-aware MPI layer's state: MPI's initialisation, the access mode (who may call MPI,
// HYTASK_MPI_MODE: comm/access.hpp), the progress policy (who polls while the workers are
// busy, HYTASK_PROGRESS: comm/progress_policy.hpp), the thread they may need and the
// watchdog. Channels (ordering and checking posts by tasks) are in comm/channels.hpp.
//
// One class, its members defined by concept: comm_init.cpp (initialise or adopt MPI, start,
// stop, finalise), post.cpp (submit, the command queue), wait.cpp (wait, test),
// progress_loop.cpp (the workers' hooks, the progress or MPI thread's loop), drain.cpp,
// watchdog.cpp, counters.cpp, cancel.cpp (cancel, scan_cancelled).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "comm/access.hpp"
#include "comm/command_queue.hpp"
#include "comm/comm_settings.hpp"
#include "comm/progress_engine.hpp"
#include "comm/job_cancel.hpp"
#include "comm/node_census.hpp"
#include "comm/operation.hpp"
#include "comm/progress_policy.hpp"
#include "comm/thread_word.hpp"
#include "core/face.hpp"
#include "hytask/config.hpp"
#include "trace/clock_sync.hpp"

namespace hytask::mpi::detail {

bool launched_by_mpi();  // an MPI launcher's environment variables are present
// The interception library is linked into the program (its gate says so as it loads): the
// program calls MPI itself, so HYTASK_MPI=auto initialises MPI without a launcher too (a
// singleton), as it must before the program's first MPI call.
void note_program_calls_mpi() noexcept;

class comm_system {
 public:
  // Phase 1, before the scheduler starts: initialise MPI, or adopt it.
  comm_system(const comm_settings& s, int* argc, char*** argv);
  // The hooks through which the scheduler's workers drive progress; given to the scheduler
  // when it is created.
  core::progress_hooks progress_hooks();
  // Phase 2, once the scheduler runs: the progress thread and the watchdog.
  void start();
  // After the last task: wait for every outstanding operation (MPI_Finalize needs it).
  void drain();
  ~comm_system();  // stops the threads, frees the communicator, finalises MPI if we started it
  comm_system(const comm_system&) = delete;
  comm_system& operator=(const comm_system&) = delete;

  static comm_system* instance() noexcept { return instance_; }
  // Whether the runtime should initialise (or adopt) MPI under these settings: HYTASK_MPI=on,
  // or auto and MPI is initialised already or the program was started by an MPI launcher.
  static bool wanted(const comm_settings& s);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm world() const noexcept { return world_; }
  bool comm_priority() const noexcept { return settings_.comm_priority; }
  const comm_settings& config() const noexcept { return settings_; }
  // When tracing: this rank's clock aligned on rank 0's, measured as MPI started
  // (comm/clock_exchange.hpp); at finalisation the ranks' timelines are merged
  // (comm/trace_gather.hpp).
  const trace::clock_alignment& trace_clock() const noexcept { return trace_clock_; }
  // The ranks, worker threads and CPUs of this rank's node, counted as MPI started.
  const node_census& census() const noexcept { return census_; }

  // Posts op: now, on this thread, when it may call MPI; else on the thread that may.
  // internal: the runtime's own operation (the global layer's messages), not the running
  // task's: no order check, no learning that the task communicates.
  void submit(operation* op, bool internal = false);
  // Returns once op has completed: a task suspends, main runs tasks, other threads poll.
  void wait(operation* op);
  // Polls once if this thread may, then reports whether op has completed.
  bool test(operation* op);

  // For the access mode and the progress policy.
  engine& eng() noexcept { return engine_; }
  hytask::mpi_mode mode() const noexcept { return settings_.mpi_mode; }
  bool has_commands() const noexcept { return commands_.any(); }
  // Operations pending or queued (or polls asked for, engine::force_polls).
  bool has_work() const noexcept {
    return engine_.pending() != 0 || has_commands() || engine_.forced();
  }
  // Calls f(op) for every operation queued for the thread that may call MPI.
  template <class F>
  void for_each_queued(F&& f) {
    commands_.for_each(f);
  }
  // Cancellation across ranks (comm/job_cancel.hpp).
  job_cancel& jobs() noexcept { return jobs_; }
  // Posts the operations queued for this thread (it must be the one that may call MPI).
  void run_commands();
  // Wakes the progress (or MPI) thread.
  void wake_thread() noexcept { word_.wake(); }
  // Whether the progress thread is parked with nothing pending.
  bool thread_parked() const noexcept { return thread_parked_.load(std::memory_order_seq_cst); }
  // This rank's progress counters (hytask::mpi::progress_stats()).
  progress_counters counters() const;
  // Asks the MPI thread for a poll; false when one was asked for and not served yet.
  bool request_poll() noexcept { return word_.ask_poll(); }

  // Cancellation (comm/cancel.cpp): cancel op, pending or queued; have the pending operations
  // of cancelled tasks cancelled. From any thread.
  void cancel(operation* op);
  void scan_cancelled();

 private:
  bool may_call_mpi() const { return access_->may_call_mpi(); }
  void post_here(operation* op);
  void nudge() { access_->nudge(); }  // ask the MPI-owning thread to poll
  void ask_for_poll();               // someone polls soon, whoever may
  static core::poll_result hook_entry(void* self, unsigned worker, bool idle);
  static bool has_pending_entry(void* self, unsigned worker);
  static void run_commands_entry(void* self);
  void thread_main(bool is_mpi_thread);
  void watchdog_main();
  void stop_watchdog();  // idempotent
  void initialise(int* argc, char*** argv);  // on the thread that owns MPI
  void finalise();

  static comm_system* instance_;

  comm_settings settings_;
  bool owns_mpi_ = false;  // we called MPI_Init_thread, so we call MPI_Finalize
  int rank_ = 0, size_ = 1;
  MPI_Comm world_ = MPI_COMM_NULL;
  trace::clock_alignment trace_clock_{};
  node_census census_{};

  engine engine_;
  job_cancel jobs_{*this};
  std::unique_ptr<mpi_access> access_;
  std::unique_ptr<progress_policy_impl> policy_;

  // Operations waiting for the MPI-owning thread.
  command_queue commands_;

  // The progress / MPI thread sleeps on this word (or the policy's, in shared memory);
  // submit and nudge bump it.
  thread_word word_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::thread thread_;     // progress thread (multiple mode) or MPI thread (funneled)
  std::thread watchdog_;
  std::atomic<std::uint32_t> watchdog_word_{0};
  std::atomic<bool> watchdog_stop_{false};
  std::atomic<bool> thread_parked_{false};  // the progress thread sleeps with nothing pending

  std::atomic<std::uint64_t> posts_{0};
};

}  // namespace hytask::mpi::detail
