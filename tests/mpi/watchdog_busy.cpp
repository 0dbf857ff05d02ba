// A healthy rank must not be taken for a stuck one: with HYTASK_WATCHDOG_S=2 and one worker,
// rank 0 has a receive pending (its task suspended) while its only worker computes in one
// task for 4 s; rank 1 sends only after that. Nothing completes and no task starts for 4 s,
// but a running task is progress: the job must finish, not be aborted by the watchdog.
#include <chrono>
#include <cstdio>
#include <span>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  if (rt.settings().threads != 1 || rt.settings().watchdog_s == 0 || rt.settings().watchdog_s > 2) {
    std::fprintf(stderr, "watchdog_busy: run with HYTASK_THREADS=1 HYTASK_WATCHDOG_S=2\n");
    return 2;
  }
  const auto busy_for = std::chrono::seconds(2 * rt.settings().watchdog_s);
  int v = 0;
  if (hytask::mpi::rank() == 0) {
    hytask::spawn({.name = "receive"}, [&v] { hytask::mpi::recv(std::span(&v, 1), 1, 5); });
    hytask::spawn({.name = "long compute"}, [busy_for] {
      const auto end = std::chrono::steady_clock::now() + busy_for;
      volatile unsigned long spin = 0;
      while (std::chrono::steady_clock::now() < end) spin = spin + 1;
    });
    hytask::wait_all();
    if (v != 42) {
      std::fprintf(stderr, "watchdog_busy: received %d, expected 42\n", v);
      return 1;
    }
  } else if (hytask::mpi::rank() == 1) {
    std::this_thread::sleep_for(busy_for + std::chrono::milliseconds(500));
    v = 42;
    hytask::spawn([&v] { hytask::mpi::send(std::span(&v, 1), 0, 5); });
    hytask::wait_all();
  }
  hytask::mpi::barrier();
  if (hytask::mpi::rank() == 0) std::printf("watchdog_busy: ok\n");
  return 0;
}
