// A rank that does not run is not a hung rank: with HYTASK_WATCHDOG_S=2, rank 0 waits in a
// task for a message while rank 1 stops rank 0's process (SIGSTOP) for 5 s, continues it,
// and sends 0.3 s later. When rank 0 runs again, nothing has progressed for more than the
// limit, but its watchdog's looks came 5 s late: the rank did not run, and the watchdog must
// watch again instead of aborting the job (the stand-in, on one machine, for a node so
// oversubscribed that the scheduler keeps a rank off its CPUs for seconds).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <span>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  if (rt.settings().watchdog_s != 2 || hytask::mpi::size() != 2) {
    std::fprintf(stderr, "watchdog_stopped: run on 2 ranks with HYTASK_WATCHDOG_S=2\n");
    return 2;
  }
  long v = 0;
  if (hytask::mpi::rank() == 0) {
    // Rank 1 stops this process once it knows whom to stop: after the receive is posted, so
    // that nothing progresses from the stop until the message comes.
    const auto start = std::chrono::steady_clock::now();
    hytask::spawn({.name = "receive"}, [&v] { hytask::mpi::recv(std::span(&v, 1), 1, 2); });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    long pid = static_cast<long>(::getpid());
    hytask::spawn([&pid] { hytask::mpi::send(std::span(&pid, 1), 1, 1); });
    hytask::wait_all();
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (v != 42 || waited < 5.0) {
      std::fprintf(stderr, "watchdog_stopped: received %ld after %.2f s, expected 42 after 5.3 s\n",
                   v, waited);
      return 1;
    }
  } else {
    long pid = 0;
    hytask::spawn([&pid] { hytask::mpi::recv(std::span(&pid, 1), 0, 1); });
    hytask::wait_all();
    // Rank 0's watchdog sees the pid's send complete before the stop, so that the stop falls
    // in a stretch without progress.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (::kill(static_cast<pid_t>(pid), SIGSTOP) != 0) {
      std::perror("watchdog_stopped: kill(SIGSTOP)");
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(5));
    ::kill(static_cast<pid_t>(pid), SIGCONT);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    v = 42;
    hytask::spawn([&v] { hytask::mpi::send(std::span(&v, 1), 0, 2); });
    hytask::wait_all();
  }
  hytask::mpi::barrier();
  if (hytask::mpi::rank() == 0) std::printf("watchdog_stopped: ok\n");
  return 0;
}
