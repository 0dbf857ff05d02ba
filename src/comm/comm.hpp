// The task-aware MPI layer's state: MPI's initialisation, who may call MPI (HYTASK_MPI_MODE),
// who polls and when (HYTASK_PROGRESS), the threads this needs and the watchdog. Channels
// (ordering and checking posts by tasks) are in comm/channels.hpp.
//
// Modes (seed 003's taxonomy):
//   multiple    any thread calls MPI; needs MPI_THREAD_MULTIPLE.
//   funneled    hytask starts an MPI thread, which initialises MPI (MPI_THREAD_FUNNELED), or
//               adopts the program's MPI (SERIALIZED or MULTIPLE), and
//               makes every MPI call: the others hand it operations and ask it to poll.
//   masteronly  only main calls MPI (MPI_THREAD_FUNNELED), and only when it waits inside
//               hytask with no task ready: operations of other threads wait for it.
// Progress policies decide when polls happen, whoever runs them:
//   none        when a worker has nothing else to do (someone is effectively waiting);
//   workers     also on busy workers at task switches (HYTASK_POLL_EVERY, HYTASK_POLL_US),
//               and by a backstop that polls when no worker has (HYTASK_BACKSTOP_US);
//   thread      on a timer that backs off while nothing completes (a progress thread in
//               multiple mode, the MPI thread in funneled mode; main's waits in masteronly).
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/engine.hpp"
#include "comm/operation.hpp"
#include "core/progress_hooks.hpp"
#include "hytask/config.hpp"

namespace hytask::mpi::detail {

bool launched_by_mpi();  // an MPI launcher's environment variables are present

class comm_system {
 public:
  // Phase 1, before the scheduler starts: initialise MPI, or adopt it.
  comm_system(const settings& s, int* argc, char*** argv);
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
  static bool wanted(const settings& s);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  MPI_Comm world() const noexcept { return world_; }
  bool comm_priority() const noexcept { return settings_.comm_priority; }
  const settings& config() const noexcept { return settings_; }

  // Posts op: now, on this thread, when it may call MPI; else on the thread that may.
  void submit(operation* op);
  // Returns once op has completed: a task suspends, main runs tasks, other threads poll.
  void wait(operation* op);
  // Polls once if this thread may, then reports whether op has completed.
  bool test(operation* op);

 private:
  bool may_call_mpi() const;
  bool backstop() const noexcept;  // a sleeping thread polls when the workers do not
  void post_here(operation* op);
  void run_commands();
  void nudge();  // ask the MPI-owning thread to poll (funneled, masteronly)
  core::poll_result hook(unsigned worker, bool idle);
  static core::poll_result hook_entry(void* self, unsigned worker, bool idle);
  static bool has_pending_entry(void* self, unsigned worker);
  void thread_main(bool is_mpi_thread);
  void watchdog_main();
  void stop_watchdog();  // idempotent
  void initialise(int* argc, char*** argv);  // on the thread that owns MPI
  void finalise();

  static comm_system* instance_;

  settings settings_;
  bool owns_mpi_ = false;  // we called MPI_Init_thread, so we call MPI_Finalize
  int rank_ = 0, size_ = 1;
  MPI_Comm world_ = MPI_COMM_NULL;
  std::thread::id mpi_thread_id_;  // the thread that may call MPI (funneled, masteronly)
  std::string init_error_;         // set by the MPI thread when initialising failed

  engine engine_;

  // Operations waiting for the MPI-owning thread.
  std::mutex commands_mutex_;
  std::vector<operation*> commands_;
  std::atomic<bool> has_commands_{false};

  // The progress / MPI thread sleeps on this word; submit and nudge bump it.
  std::atomic<std::uint32_t> thread_word_{0};
  std::atomic<bool> poll_requested_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::thread thread_;     // progress thread (multiple + thread) or MPI thread (funneled)
  std::thread watchdog_;
  std::atomic<std::uint32_t> watchdog_word_{0};
  std::atomic<bool> watchdog_stop_{false};
  std::atomic<bool> thread_parked_{false};  // the progress thread sleeps with nothing pending

  std::atomic<std::uint64_t> posts_{0};
  std::atomic<std::uint64_t> backstop_polls_{0};
  std::atomic<bool> backstop_reset_{false};  // a new operation: back to the shortest period
  std::atomic<bool> backstop_wakeable_{false};  // asleep long: the next post may wake it

};

}  // namespace hytask::mpi::detail
