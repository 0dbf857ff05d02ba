// The cost of moving one cache line between two cores and back: one thread on each of two
// CPUs hands a counter back and forth. On a virtual machine it depends on where the host
// placed the vCPUs (70-500 ns have been seen on one guest), and it bounds what a dependency
// edge between tasks on two workers costs, so docs/benchmarks.md records it beside the task
// figures.
//   bench_core_to_core [--cpus A,B] [--n N]      (default CPUs 0,1; N = 1000000)

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "pin.hpp"

namespace {

alignas(64) std::atomic<long> line{0};

int run(int argc, char** argv) {
  int a = 0, b = 1;
  long n = 1000000;
  hytask_cli::command_line cli("bench_core_to_core", "[--cpus A,B] [--n N]",
                               "The round trip of one cache line between two cores: one thread on each of two CPUs\n"
                               "hands a counter back and forth. Prints core_to_core cpus=A,B round_trip_ns=...");
  cli.custom("--cpus", "A,B", [&](const std::string& v) {
    const std::vector<std::string> cpus = hytask_cli::split(v, ',');
    const std::string wants = "--cpus: '" + v + "' is not two different CPU numbers, e.g. 0,1";
    if (cpus.size() != 2) throw hytask_cli::usage_error(wants);
    try {
      a = static_cast<int>(hytask_cli::parse_integer("--cpus", cpus[0], 0, 1 << 20));
      b = static_cast<int>(hytask_cli::parse_integer("--cpus", cpus[1], 0, 1 << 20));
    } catch (const hytask_cli::usage_error&) {
      throw hytask_cli::usage_error(wants);
    }
    if (a == b) throw hytask_cli::usage_error(wants);
  }, "the two CPUs (default 0,1)");
  cli.integer("--n", n, 1, 1000000000000L, "round trips (default 1000000)");
  if (!cli.parse(argc, argv)) return 0;
  const std::string cannot = "--cpus " + std::to_string(a) + "," + std::to_string(b) +
                             ": cannot run on these CPUs (see nproc / taskset)";
  // Both CPUs tried from this thread before the peer starts, so that a CPU this process may
  // not use is refused at once (not after N round trips with an unpinned peer).
  if (!bench::pin_this_thread(b) || !bench::pin_this_thread(a)) throw hytask_cli::usage_error(cannot);
  bool pinned = true;
  std::thread peer([&] {
    pinned = bench::pin_this_thread(b) && pinned;
    for (long i = 0; i < n; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  peer.join();
  if (!pinned) throw hytask_cli::usage_error(cannot);
  std::printf("core_to_core cpus=%d,%d round_trip_ns=%.1f\n", a, b, s / static_cast<double>(n) * 1e9);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_cli::main_frame("bench_core_to_core", [&] { return run(argc, argv); });
}
