// Idle ranks sleep: many ranks of one machine (oversubscribed, one worker each) wait in a
// task for a message rank 0 sends a second late, main in wait_all. Each rank measures the
// CPU time its process used during the wait; every rank must stay under 5 % of the wait
// (ranks that polled without sleeping would share the cores: 2/16 = 12 % each on 2 cores),
// and the message must arrive. Prints "idle_ranks: ok (...)" on rank 0 when every rank
// passed; a rank over the bound prints its share.
//
// `lone`: only the last rank waits in the runtime; the others between it and rank 0 sleep
// in a plain sleep. Its core is then never crowded while it waits, yet the node runs more
// threads than it has CPUs: run with more ranks than cores, it must sleep all the same
// (a rank that only judged its core by its own waits for it polled at a full core here).
//   idle_ranks [delay ms] [lone]
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// "name 0.41 s, name 0.02 s": this process's threads by the CPU they used, for a failure.
std::string threads_cpu() {
  std::string out;
  const long hz = sysconf(_SC_CLK_TCK);
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(e.path() / "comm"), stat(e.path() / "stat");
    std::string name, line;
    std::getline(comm, name);
    std::getline(stat, line);
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    long ticks = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i)
      if (i == 14 || i == 15) ticks += std::atol(field.c_str());  // utime, stime
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s%s %.2f s", out.empty() ? "" : ", ", name.c_str(),
                  static_cast<double>(ticks) / static_cast<double>(hz));
    out += buf;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int delay_ms = argc > 1 ? std::atoi(argv[1]) : 1000;
  const bool lone = argc > 2 && std::string(argv[2]) == "lone";
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  hytask::mpi::barrier();  // every rank started: the wait below is the same for all
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_seconds();
  const std::uint64_t polls0 = hytask::mpi::progress_stats().polls;
  int got = -1;
  if (rank == 0) {
    hytask::spawn([size, delay_ms, lone] {
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // not computing
      const int word = 42;
      for (int r = lone ? size - 1 : 1; r < size; ++r) hytask::mpi::send(&word, 1, MPI_INT, r, 5);
    });
    got = 42;
  } else if (lone && rank != size - 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));  // outside the runtime
    got = 42;
  } else {
    // Alone, it starts waiting once every other rank sleeps: its first looks at its core
    // then find it free.
    if (lone) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms / 10));
    hytask::spawn([&got] { hytask::mpi::recv(&got, 1, MPI_INT, 0, 5); });
  }
  hytask::wait_all();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double share = (cpu_seconds() - c0) / wall;
  const std::uint64_t polls = hytask::mpi::progress_stats().polls - polls0;
  int bad = 0;
  if (got != 42) {
    std::fprintf(stderr, "idle_ranks: rank %d: FAILED: received %d, not 42\n", rank, got);
    bad = 1;
  } else if (share > 0.05) {
    std::fprintf(stderr, "idle_ranks: rank %d: FAILED: used %.1f %% of a core while it waited %.2f s "
                 "(at most 5 %%: an idle rank must sleep), polling MPI %llu times; its threads since they "
                 "started: %s\n",
                 rank, 100 * share, wall, static_cast<unsigned long long>(polls), threads_cpu().c_str());
    bad = 1;
  }
  double shares[2] = {share, share};
  double max_share = 0, sum_share = 0;
  MPI_Allreduce(&shares[0], &max_share, 1, MPI_DOUBLE, MPI_MAX, hytask::mpi::comm_world());
  MPI_Allreduce(&shares[1], &sum_share, 1, MPI_DOUBLE, MPI_SUM, hytask::mpi::comm_world());
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, hytask::mpi::comm_world());
  if (rank == 0 && bad == 0)
    std::printf("idle_ranks: ok (%d ranks waited %.2f s: at most %.1f %% of a core each, %.2f cores in all)\n",
                size, wall, 100 * max_share, sum_share);
  return bad == 0 ? 0 : 1;
}
