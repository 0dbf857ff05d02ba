// Shared by the task benchmarks: the command line, timing and the result line.
// Each run measures one case in a fresh process, so max RSS belongs to that case alone.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"

// The body of an "empty" task: a compiler barrier, so no compiler can drop the task.
#define BENCH_EMPTY_BODY asm volatile("" ::: "memory")

namespace bench {

struct options {
  std::string case_name = "empty";
  long n = 1000000;
  int threads = 2;
  int reps = 5;
};

// The cases every implementation runs (bench_tasks.cpp's header says what each measures).
inline constexpr const char* cases[] = {"empty", "deps", "yield", "loop", "forkjoin", "fib"};

// The command line of `program` (bench_tasks, bench_omp_gcc, bench_omp_clang), which measures
// `impl`. Nothing when --help was asked for (and printed); a usage_error when it is wrong.
inline std::optional<options> parse(int argc, char** argv, const char* program, const char* impl) {
  options o;
  hytask_cli::command_line cli(
      program, "--case empty|deps|yield|loop|forkjoin|fib [--n N] [--threads T] [--reps R]",
      std::string("Measures ") + impl +
          "; prints one line: case, impl, threads, n, median ns per unit, max RSS.\n"
          "Each run measures one case in a fresh process, so max RSS belongs to that case alone.");
  cli.custom("--case", "CASE", [&o](const std::string& v) {
    if (std::find_if(std::begin(cases), std::end(cases), [&v](const char* c) { return v == c; }) == std::end(cases))
      throw hytask_cli::usage_error("--case: '" + v + "' is not one of empty, deps, yield, loop, forkjoin, fib");
    o.case_name = v;
  }, "empty, deps, yield, loop, forkjoin or fib (default empty)");
  cli.integer("--n", o.n, 1, 1000000000000L, "the units the case times (tasks, yields, iterations, loops); for fib,\n"
              "fib's argument, at most 60 (units: its tasks) (default 1000000)");
  cli.integer("--threads", o.threads, 1, 4096, "threads (default 2)");
  cli.integer("--reps", o.reps, 1, 1000000, "timed repetitions after one warm-up; the median is reported (default 5)");
  if (!cli.parse(argc, argv)) return std::nullopt;
  if (o.case_name == "fib" && o.n > 60)
    throw hytask_cli::usage_error("--n: '" + std::to_string(o.n) + "' is too large for --case fib (fib's argument, at most 60)");
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
