// Who may call MPI (HYTASK_MPI_MODE, seed 003's taxonomy); one implementation each in
// access.cpp:
//   multiple    any thread calls MPI; needs MPI_THREAD_MULTIPLE.
//   funneled    hytask starts an MPI thread, which initialises MPI (MPI_THREAD_FUNNELED), or
//               adopts the program's MPI (SERIALIZED or MULTIPLE), and makes every MPI call:
//               the others queue operations and ask it to poll. While a worker idles with
//               operations pending, the MPI thread polls for it.
//   serialized  as funneled, but MPI is asked for MPI_THREAD_SERIALIZED and the MPI thread
//               holds the process's serial lock (serial_lock.hpp) while it is inside MPI, so
//               that the program may call MPI from any thread in a serialized_section.
//   masteronly  only main calls MPI (MPI_THREAD_FUNNELED), and only when it waits inside
//               hytask with no task ready: operations of other threads wait for it.
// A mode sees of the comm system only its access_port.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "comm/command_queue.hpp"
#include "comm/progress_engine.hpp"
#include "comm/serial_lock.hpp"
#include "comm/thread_word.hpp"
#include "core/face.hpp"
#include "hytask/config.hpp"

namespace hytask::mpi::detail {

// What an access mode works with: the engine it polls, the operations queued for the thread
// that may call MPI and how to post them, and the word of the thread that polls.
struct access_port {
  engine& eng;
  command_queue& queue;
  thread_word& word;
  // Posts the queued operations (comm_system::run_commands), on the thread that may call MPI.
  void (*run_queued)(void* ctx);
  void* ctx;
  std::int64_t spin_ns;  // HYTASK_SPIN_US

  // Operations pending or queued (or polls asked for, engine::force_polls).
  bool has_work() const noexcept {
    return eng.pending() != 0 || queue.any() || eng.forced();
  }
};

class mpi_access {
 public:
  explicit mpi_access(const access_port& p) : port_(p) {}
  virtual ~mpi_access() = default;
  mpi_access(const mpi_access&) = delete;
  mpi_access& operator=(const mpi_access&) = delete;

  static std::unique_ptr<mpi_access> make(hytask::mpi_mode mode, const access_port& p);

  // The thread level asked of MPI_Init_thread.
  virtual int level_needed() const = 0;
  // Runs init (MPI's initialisation: MPI_Init_thread or adoption, then accept) on the thread
  // that is to call MPI, and returns the thread started for it, if any. Funneled starts its
  // MPI thread, which runs init, then loop until it returns; the others run init here. A
  // failure of init is thrown here.
  virtual std::thread initialise_mpi(const std::function<void()>& init,
                                     std::function<void()> loop);
  // Called on the thread that initialised MPI (initialised = false) or found it initialised
  // by the program, with the level MPI gives: why this mode cannot work, or "".
  virtual std::string accept(bool initialised, int provided) = 0;
  // Whether the mode has a thread of its own that initialises MPI and makes every call.
  virtual bool has_mpi_thread() const { return false; }
  // Whether this thread may call MPI now.
  virtual bool may_call_mpi() const = 0;
  // Asks the thread that may call MPI to poll (and run queued operations).
  virtual void nudge() {}
  // A worker's scheduling-point hook (core/progress_hooks.hpp): idle when it found no task.
  virtual core::poll_result worker_poll(unsigned worker, bool idle) = 0;
  // Whether this worker should keep polling (or asking for polls).
  virtual bool worker_has_pending(unsigned worker) const;
  // Whether sleeping workers are woken when an operation is registered: they poll it.
  virtual bool workers_poll() const { return true; }
  // The MPI thread, each round of its loop after running the queued operations: whether it
  // polled in place of the progress policy's round (funneled, while a worker idles with
  // operations pending); the round ends there.
  virtual bool mpi_thread_serves() { return false; }
  // The lock the MPI thread holds while it is inside MPI (serialized mode), or none.
  virtual serial_lock* serial() { return nullptr; }

 protected:
  access_port port_;
};

}  // namespace hytask::mpi::detail
