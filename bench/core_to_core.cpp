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

#include "pin.hpp"

namespace {

alignas(64) std::atomic<long> line{0};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "bench_core_to_core: %s\nusage: bench_core_to_core [--cpus A,B] [--n N]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int a = 0, b = 1;
  long n = 1000000;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    if (arg == "--cpus") {
      if (std::sscanf(argv[++i], "%d,%d", &a, &b) != 2 || a < 0 || b < 0 || a == b)
        usage("--cpus wants two different CPU numbers, e.g. 0,1");
    } else if (arg == "--n") {
      n = std::atol(argv[++i]);
      if (n <= 0) usage("--n wants a positive count");
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  bool pinned = true;
  std::thread peer([&] {
    pinned = bench::pin_this_thread(b) && pinned;
    for (long i = 0; i < n; ++i) {
      while (line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (!bench::pin_this_thread(a)) usage("cannot run on the CPUs given (see nproc / taskset)");
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    line.store(2 * i + 1, std::memory_order_release);
    while (line.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  peer.join();
  if (!pinned) usage("cannot run on the CPUs given (see nproc / taskset)");
  std::printf("core_to_core cpus=%d,%d round_trip_ns=%.1f\n", a, b, s / static_cast<double>(n) * 1e9);
}
