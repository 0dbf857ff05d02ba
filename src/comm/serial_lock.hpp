// The lock of HYTASK_MPI_MODE=serialized (hytask/comm/serialized.hpp): hytask's MPI thread
// holds it while it is inside MPI, the program's serialized_sections while they are open.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace hytask::mpi::detail {

class serial_lock {
 public:
  // The program's side (a serialized_section).
  void enter_section();
  void leave_section() { mutex_.unlock(); }

  // The MPI thread's side (BasicLockable, for std::lock_guard).
  void lock() { mutex_.lock(); }
  // Unlocks, and when a section is waiting lets it in before returning: the MPI thread
  // locks again at once, and std::mutex is not fair, so a waiting section could starve.
  void unlock();

 private:
  std::mutex mutex_;
  std::atomic<int> waiting_{0};            // sections waiting to enter
  std::atomic<std::uint64_t> entered_{0};  // sections entered so far
};

// The process's lock (one per process: MPI's thread level is per process).
serial_lock& process_serial_lock();

}  // namespace hytask::mpi::detail
