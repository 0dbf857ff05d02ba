// hytask side of the task benchmark (see bench/run_core_bench.sh and docs/benchmarks.md).
//   empty     N independent empty tasks spawned by main, then wait_all: ns per task
//   deps      N tasks, each inout on one of 64 slots and in on another: ns per task
//   yield     a pair of tasks per worker that yield to each other: ns per suspend/resume
//   loop      parallel_for over N iterations, dynamic schedule, chunk 1: ns per chunk
//   forkjoin  N parallel_for calls over 2 * threads iterations: ns per loop
//   fib       fib(N), every call a task that spawns two children and waits for them:
//             ns per task (a recursive program: depth-first order keeps it bounded)
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "hytask/hytask.hpp"

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  hytask::spawn([&a, n] { a = fib(n - 1); });
  hytask::spawn([&b, n] { b = fib(n - 2); });
  hytask::wait_all();
  return a + b;
}

// Calls of fib(n), each a task.
long fib_calls(int n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }

}  // namespace

namespace {

int run(int argc, char** argv) {
  const std::optional<bench::options> parsed = bench::parse(argc, argv, "bench_tasks", "hytask");
  if (!parsed) return 0;  // --help
  const bench::options& o = *parsed;
  hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(o.threads)});
  const char* impl = "hytask";
  if (o.case_name == "empty") {
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < o.n; ++i) hytask::spawn([] { BENCH_EMPTY_BODY; });
      hytask::wait_all();
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "deps") {
    std::vector<std::uint64_t> slots(64, 1);
    bench::report(o, impl, o.n, [&] {
      std::uint64_t rng = 88172645463325252ull;
      auto t0 = std::chrono::steady_clock::now();
      for (long i = 0; i < o.n; ++i) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        std::uint64_t* a = &slots[rng % 64];
        std::uint64_t* b = &slots[(rng >> 8) % 64];
        if (a == b) b = &slots[(rng % 64 + 1) % 64];
        hytask::spawn([a, b] { *a += *b; }, hytask::inout(*a), hytask::in(*b));
      }
      hytask::wait_all();
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "yield") {
    // Every worker runs its own pair of tasks that yield to each other n times each, so a
    // yield suspends one task and resumes the other: 2n round trips per worker.
    bench::report(o, impl, 2 * o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
      hytask::parallel_for(0, o.threads, [&o](int) {
        for (int k = 0; k < 2; ++k)
          hytask::spawn([&o] {
            for (long i = 0; i < o.n; ++i) hytask::this_task::yield();
          });
        hytask::wait_all();
      });
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "loop") {
    std::atomic<long> sink{0};
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
      hytask::parallel_for(0L, o.n, [&sink](long i) { if (i < 0) sink++; },
                           hytask::schedule::dynamic, 1);
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "forkjoin") {
    std::atomic<long> sink{0};
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (long r = 0; r < o.n; ++r)
        hytask::parallel_for(0, 2 * o.threads, [&sink](int i) { if (i < 0) sink++; });
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "fib") {
    const int n = static_cast<int>(o.n);
    const long expect = [n] {
      long a = 0, b = 1;
      for (int i = 0; i < n; ++i) b = std::exchange(a, b) + b;
      return a;
    }();
    bench::report(o, impl, fib_calls(n), [&] {
      auto t0 = std::chrono::steady_clock::now();
      long r = 0;
      hytask::spawn([&r, n] { r = fib(n); });
      hytask::wait_all();
      double s = bench::seconds_since(t0);
      if (r != expect) {
        std::fprintf(stderr, "fib(%d) = %ld, expected %ld\n", n, r, expect);
        std::exit(1);
      }
      return s;
    });
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_cli::main_frame("bench_tasks", [&] { return run(argc, argv); });
}
