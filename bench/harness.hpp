// Shared by the task benchmarks: argument parsing, timing and the result line.
// Each run measures one case in a fresh process, so max RSS belongs to that case alone.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// The body of an "empty" task: a compiler barrier, so no compiler can drop the task.
#define BENCH_EMPTY_BODY asm volatile("" ::: "memory")

namespace bench {

struct options {
  std::string case_name = "empty";
  long n = 1000000;
  int threads = 2;
  int reps = 5;
};

inline void usage(const char* prog, const char* impl) {
  std::fprintf(stderr,
               "usage: %s --case empty|deps|yield|loop|forkjoin|fib [--n N] [--threads T] [--reps R]\n"
               "(fib: --n is the argument of fib; units are tasks)\n"
               "Measures %s; prints one line: case, impl, threads, n, median ns per unit, max RSS.\n",
               prog, impl);
}

inline options parse(int argc, char** argv, const char* impl) {
  options o;
  for (int i = 1; i < argc; ++i) {
    auto need = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
        usage(argv[0], impl);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--case")) o.case_name = need("--case");
    else if (!std::strcmp(argv[i], "--n")) o.n = std::atol(need("--n"));
    else if (!std::strcmp(argv[i], "--threads")) o.threads = std::atoi(need("--threads"));
    else if (!std::strcmp(argv[i], "--reps")) o.reps = std::atoi(need("--reps"));
    else if (!std::strcmp(argv[i], "--help")) {
      usage(argv[0], impl);
      std::exit(0);
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[i]);
      usage(argv[0], impl);
      std::exit(2);
    }
  }
  if (o.n <= 0 || o.threads <= 0 || o.reps <= 0) {
    std::fprintf(stderr, "%s: --n, --threads and --reps must be positive\n", argv[0]);
    std::exit(2);
  }
  return o;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline long max_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Runs `once` (which returns seconds for `units` units) reps times after one warm-up and
// prints the median per-unit cost in nanoseconds.
template <class F>
void report(const options& o, const char* impl, long units, F once) {
  once();
  std::vector<double> t;
  for (int r = 0; r < o.reps; ++r) t.push_back(once());
  std::sort(t.begin(), t.end());
  double median = t[t.size() / 2];
  std::printf("case=%s impl=%s threads=%d n=%ld ns_per_unit=%.1f min_ns_per_unit=%.1f max_rss_kib=%ld\n",
              o.case_name.c_str(), impl, o.threads, units, median * 1e9 / static_cast<double>(units),
              t.front() * 1e9 / static_cast<double>(units), max_rss_kib());
  std::fflush(stdout);
}

}  // namespace bench
