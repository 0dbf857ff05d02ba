// A receive that no rank matches: with HYTASK_WATCHDOG_S set, the job must abort with a
// message naming the pending operation, instead of hanging. The other ranks wait outside
// MPI (nothing pending there, so their watchdogs stay quiet) until the abort ends the job.
#include <chrono>
#include <span>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  if (hytask::mpi::rank() == 0) {
    double x = 0;
    hytask::spawn({.name = "unmatched"}, [&x] { hytask::mpi::recv(std::span(&x, 1), 1, 99); });
    hytask::wait_all();
  } else {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  return 1;  // not reached: the watchdog aborts the job first
}
