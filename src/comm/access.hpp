// Who may call MPI (HYTASK_MPI_MODE, seed 003's taxonomy); one implementation each in
// access.cpp:
//   multiple    any thread calls MPI; needs MPI_THREAD_MULTIPLE.
//   funneled    hytask starts an MPI thread, which initialises MPI (MPI_THREAD_FUNNELED), or
//               adopts the program's MPI (SERIALIZED or MULTIPLE), and makes every MPI call:
//               the others queue operations and ask it to poll.
//   masteronly  only main calls MPI (MPI_THREAD_FUNNELED), and only when it waits inside
//               hytask with no task ready: operations of other threads wait for it.
#pragma once

#include <memory>
#include <string>

#include "core/layer.hpp"
#include "hytask/config.hpp"

namespace hytask::mpi::detail {

class comm_system;

class mpi_access {
 public:
  explicit mpi_access(comm_system& c) : c_(c) {}
  virtual ~mpi_access() = default;
  mpi_access(const mpi_access&) = delete;
  mpi_access& operator=(const mpi_access&) = delete;

  static std::unique_ptr<mpi_access> make(hytask::mpi_mode mode, comm_system& c);

  // The thread level asked of MPI_Init_thread.
  virtual int level_needed() const = 0;
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

 protected:
  comm_system& c_;
};

}  // namespace hytask::mpi::detail
