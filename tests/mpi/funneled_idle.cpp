// Funneled mode: while operations are pending and the workers have no task, the MPI thread
// polls for them and the idle workers sleep (comm/access.cpp, comm_system::thread_main).
// Workers that spun to ask for polls took the cores the MPI thread needed: with more
// threads than cores (several jobs on a laptop, CI) a job stalled for seconds at a time.
// Rank 1 sends a message 400 ms late; rank 0 waits for it in a task, main in wait_all.
// Checked on rank 0: the message arrives, the MPI thread polled meanwhile, and the
// workers (main included) used less than a quarter of the wait's CPU time.
// Run with HYTASK_MPI_MODE=funneled and HYTASK_THREADS=2 on 2 ranks.
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "test_fail.hpp"

namespace mpi = hytask::mpi;

namespace {

int g_rank = 0;

using hytask_test::fail;

// CPU time, in ms, of this process's threads named `name` (utime + stime from /proc: 10 ms
// ticks on most kernels, plenty for a 400 ms wait).
double threads_cpu_ms(const std::string& name) {
  const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string n;
    std::getline(comm, n);
    if (n != name) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    unsigned long utime = 0, stime = 0;
    for (int i = 1; i <= 13 && rest >> field; ++i) {
      if (i == 12) utime = std::stoul(field);
      if (i == 13) stime = std::stoul(field);
    }
    total += static_cast<double>(utime + stime) * ms_per_tick;
  }
  return total;
}

double this_thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  g_rank = mpi::rank();
  if (rt.settings().mpi_mode != hytask::mpi_mode::funneled || rt.settings().threads != 2)
    fail("run with HYTASK_MPI_MODE=funneled and HYTASK_THREADS=2");
  if (mpi::size() != 2) fail("run on 2 ranks");
  mpi::barrier();
  constexpr auto late = std::chrono::milliseconds(400);
  if (g_rank == 1) {
    std::this_thread::sleep_for(late);
    const int v = 42;
    mpi::send(std::span(&v, 1), 0, 5);
  } else {
    int got = -1;
    const std::uint64_t polls0 = mpi::progress_stats().polls;
    const double main0 = this_thread_cpu_ms(), workers0 = threads_cpu_ms("hytask-worker");
    const auto t0 = std::chrono::steady_clock::now();
    hytask::spawn([&got] { mpi::recv(std::span(&got, 1), 1, 5); });
    hytask::wait_all();
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double main_ms = this_thread_cpu_ms() - main0;
    const double workers_ms = threads_cpu_ms("hytask-worker") - workers0;
    const std::uint64_t polls = mpi::progress_stats().polls - polls0;
    std::printf("funneled_idle: waited %.0f ms; main used %.1f ms of CPU, the other worker %.0f ms; "
                "%llu polls meanwhile\n",
                wall, main_ms, workers_ms, static_cast<unsigned long long>(polls));
    if (got != 42) fail("received " + std::to_string(got) + ", not 42");
    if (wall < 300) fail("the wait took " + std::to_string(wall) + " ms: the send was not late");
    if (polls < 10) fail("the MPI thread polled " + std::to_string(polls) + " times while the workers idled");
    if (main_ms + workers_ms > 0.25 * wall)
      fail("the idle workers used " + std::to_string(main_ms + workers_ms) + " ms of CPU in a " +
           std::to_string(wall) + " ms wait: they should sleep while the MPI thread polls");
  }
  mpi::barrier();
  if (g_rank == 0) std::printf("funneled_idle: ok\n");
  return 0;
}
