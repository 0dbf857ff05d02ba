// What the interception library (hytask::mpi_intercept) costs a plain MPI call made outside
// any task — main's own MPI code, other threads — beside the same call without it (its
// PMPI_ entry point), in the same run. Issue 19's target: 50 ns over plain MPI.
//
//   build/bench/bench_intercept [--calls N] [--reps R] [--only pmpi|mpi]
//
// The calls are ones MPI answers at once, so that the wrapper's own cost is what the clock
// sees: MPI_Recv from and MPI_Send to MPI_PROC_NULL, MPI_Wait on MPI_REQUEST_NULL. Each is
// timed --reps times (9) over --calls calls (1,000,000), the plain and the intercepted one
// alternating; medians are reported, with a hytask::runtime alive (the gate then finds the
// workers and asks whether main runs a task). Prints one line per call:
//   bench_intercept call=MPI_Recv pmpi_ns=... intercepted_ns=... over_ns=...
// It runs as a singleton (no mpiexec needed) or under a launcher. --only runs one variant of
// each call and prints nothing timed, for instruction counts that do not depend on the
// machine's load:
//   valgrind --tool=callgrind --callgrind-out-file=pmpi.out build/bench/bench_intercept --only pmpi --calls 100000
//   valgrind --tool=callgrind --callgrind-out-file=mpi.out  build/bench/bench_intercept --only mpi  --calls 100000
// (the difference of the two totals, divided by 3 x 100,000, is the instructions per call).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "hytask/hytask.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  long calls = 1000000;
  int reps = 9;
  std::string only;  // "", "pmpi" or "mpi"
};

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "bench_intercept", "[--calls N] [--reps R] [--only pmpi|mpi]   (alone or under mpiexec)",
      "What the interception library costs a plain MPI call made outside any task, beside the same\n"
      "call without it (its PMPI_ entry point): MPI_Recv, MPI_Send and MPI_Wait that MPI answers at\n"
      "once. Prints one line per call: bench_intercept call=... pmpi_ns=... intercepted_ns=... over_ns=...");
  cli.integer("--calls", o.calls, 1, 1000000000000L, "calls per timing (default 1000000)");
  cli.integer("--reps", o.reps, 1, 1000000, "timings of each variant, alternating; medians reported (default 9)");
  cli.custom("--only", "pmpi|mpi", [&o](const std::string& v) {
    if (v != "pmpi" && v != "mpi") throw hytask_cli::usage_error("--only: '" + v + "' is not pmpi or mpi");
    o.only = v;
  }, "run only the plain (pmpi) or the intercepted (mpi) variant, untimed: for\n"
     "instruction counts under callgrind (default: both, timed)");
  return cli.parse(argc, argv, print_help);
}

// One loop per call and variant; noinline so that every variant runs the same loop code.
template <bool Intercepted>
[[gnu::noinline]] void recv_loop(long n) {
  int v = 0;
  MPI_Status st;
  for (long i = 0; i < n; ++i) {
    if constexpr (Intercepted) MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    else PMPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  }
}

template <bool Intercepted>
[[gnu::noinline]] void send_loop(long n) {
  int v = 0;
  for (long i = 0; i < n; ++i) {
    if constexpr (Intercepted) MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    else PMPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  }
}

template <bool Intercepted>
[[gnu::noinline]] void wait_loop(long n) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Status st;
  for (long i = 0; i < n; ++i) {
    if constexpr (Intercepted) MPI_Wait(&r, &st);
    else PMPI_Wait(&r, &st);
  }
}

double ns_per_call(void (*loop)(long), long n) {
  const auto t0 = clock_type::now();
  loop(n);
  return std::chrono::duration<double, std::nano>(clock_type::now() - t0).count() / static_cast<double>(n);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct call_case {
  const char* name;
  void (*plain)(long);
  void (*intercepted)(long);
};

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status =
          hytask_cli::parse_before_mpi("bench_intercept", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  {
    hytask::runtime rt;  // adopts MPI; main is worker 0, outside any task
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const call_case cases[] = {
        {"MPI_Recv", recv_loop<false>, recv_loop<true>},
        {"MPI_Send", send_loop<false>, send_loop<true>},
        {"MPI_Wait", wait_loop<false>, wait_loop<true>},
    };
    for (const call_case& c : cases) {
      if (!o.only.empty()) {
        (o.only == "pmpi" ? c.plain : c.intercepted)(o.calls);
        continue;
      }
      c.plain(o.calls / 10 + 1);  // warm up
      c.intercepted(o.calls / 10 + 1);
      std::vector<double> plain, wrapped;
      for (int r = 0; r < o.reps; ++r) {
        plain.push_back(ns_per_call(c.plain, o.calls));
        wrapped.push_back(ns_per_call(c.intercepted, o.calls));
      }
      const double p = median(plain), w = median(wrapped);
      if (rank == 0)
        std::printf("bench_intercept call=%s pmpi_ns=%.2f intercepted_ns=%.2f over_ns=%.2f calls=%ld reps=%d\n",
                    c.name, p, w, w - p, o.calls, o.reps);
    }
  }
  MPI_Finalize();
  return 0;
}
