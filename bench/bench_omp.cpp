// OpenMP side of the task benchmark: the same cases as bench_tasks.cpp, written the way an
// OpenMP user would. Built by GCC (libgomp) and by Clang (libomp).
#include <omp.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace {

long fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
#pragma omp task shared(b) firstprivate(n)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

long fib_calls(int n) { return n < 2 ? 1 : 1 + fib_calls(n - 1) + fib_calls(n - 2); }

}  // namespace

#if defined(__clang__)
static const char* const impl = "openmp-libomp";
static const char* const program = "bench_omp_clang";
#else
static const char* const impl = "openmp-libgomp";
static const char* const program = "bench_omp_gcc";
#endif

namespace {

int run(int argc, char** argv) {
  const std::optional<bench::options> parsed = bench::parse(argc, argv, program, impl);
  if (!parsed) return 0;  // --help
  const bench::options& o = *parsed;
  omp_set_num_threads(o.threads);
  if (o.case_name == "empty") {
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
#pragma omp single
      {
        for (long i = 0; i < o.n; ++i) {
#pragma omp task
          { BENCH_EMPTY_BODY; }
        }
#pragma omp taskwait
      }
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "deps") {
    std::vector<std::uint64_t> slots(64, 1);
    std::uint64_t* s = slots.data();
    bench::report(o, impl, o.n, [&] {
      std::uint64_t rng = 88172645463325252ull;
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
#pragma omp single
      {
        for (long i = 0; i < o.n; ++i) {
          rng ^= rng << 13;
          rng ^= rng >> 7;
          rng ^= rng << 17;
          std::uint64_t* a = &s[rng % 64];
          std::uint64_t* b = &s[(rng >> 8) % 64];
          if (a == b) b = &s[(rng % 64 + 1) % 64];
#pragma omp task depend(inout : a[0]) depend(in : b[0]) firstprivate(a, b)
          { *a += *b; }
        }
#pragma omp taskwait
      }
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "yield") {
    bench::report(o, impl, 2 * o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel
      {
        for (int k = 0; k < 2; ++k) {
#pragma omp task untied
          {
            for (long i = 0; i < o.n; ++i) {
#pragma omp taskyield
            }
          }
        }
#pragma omp taskwait
      }
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "loop") {
    std::atomic<long> sink{0};
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(dynamic, 1)
      for (long i = 0; i < o.n; ++i)
        if (i < 0) sink++;
      return bench::seconds_since(t0);
    });
  } else if (o.case_name == "forkjoin") {
    std::atomic<long> sink{0};
    bench::report(o, impl, o.n, [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (long r = 0; r < o.n; ++r) {
#pragma omp parallel for
        for (int i = 0; i < 2 * o.threads; ++i)
          if (i < 0) sink++;
      }
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
#pragma omp parallel
#pragma omp single
      r = fib(n);
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
  return hytask_cli::main_frame(program, [&] { return run(argc, argv); });
}
