// What hytask's GOMP_task (src/omp/gomp_task_hook.cpp) costs a GCC-built OpenMP program per
// task: empty tasks created by one thread and run by a team of 2, timed in sessions with the
// hooks off (HYTASK_OMP_TASK_HOOKS=0's config) and on, alternating, in one process; and the
// same with a request outstanding, where each task's start and end also read the clock and
// may poll. One rank (docs/benchmarks.md#od-hooks):
//
//   mpiexec -n 1 build/bench/bench_omp_task_hook [--tasks N] [--reps R]
//
// Prints one line per case: the median over the repetitions of ns per task, off and on.
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "empty_tasks.hpp"
#include "hytask/omp.hpp"

namespace {

double tasks_ns(int n) {
  const auto t0 = std::chrono::steady_clock::now();
  bench::run_empty_tasks(n);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}

// One timing in a session with the hooks `on`; `outstanding`: with a request handed over
// (a receive from this rank that is matched at the end).
double measure(bool on, bool outstanding, int n) {
  hytask::config cfg;
  cfg.omp_task_hooks = on;
  hytask::omp::session s(cfg);
  if (on && !s.stats().task_hooks) {
    std::fprintf(stderr, "bench_omp_task_hook: the hooks are not active (%s): build with GCC\n",
                 hytask::omp::openmp_runtime());
    std::exit(2);
  }
  double buf = 0, one = 1;
  hytask::omp::commtask pending;
  if (outstanding) {
    MPI_Request r;
    MPI_Irecv(&buf, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD, &r);
    pending.add(r);
  }
  const double ns = tasks_ns(n);
  if (outstanding) {
    MPI_Send(&one, 1, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD);
    pending.finalize();
  }
  return ns;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The command line; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, int& n, int& reps, bool print_help) {
  hytask_cli::command_line cli(
      "bench_omp_task_hook", "[--tasks N] [--reps R]   (under mpiexec -n 1)",
      "What hytask's GOMP_task costs a GCC-built OpenMP program per task: empty tasks run by a team\n"
      "of 2, in sessions with the task hooks off and on, alternating, with no request outstanding\n"
      "(idle) and with one (outstanding). Prints one line per case: the median ns per task, off and on.");
  cli.integer("--tasks", n, 1, 100000000, "empty tasks per timing (default 20000)");
  cli.integer("--reps", reps, 1, 1000000, "timings of each setting; medians reported (default 11)");
  return cli.parse(argc, argv, print_help);
}

}  // namespace

int main(int argc, char** argv) {
  int n = 20000, reps = 11;
  if (const auto status =
          hytask_cli::parse_before_mpi("bench_omp_task_hook", [&](bool print) { return parse(argc, argv, n, reps, print); }))
    return *status;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  for (const bool outstanding : {false, true}) {
    std::vector<double> off, on;
    for (int r = 0; r < reps; ++r) {
      off.push_back(measure(false, outstanding, n));
      on.push_back(measure(true, outstanding, n));
    }
    std::printf("bench_omp_task_hook case=%s tasks=%d reps=%d off_ns=%.1f on_ns=%.1f\n",
                outstanding ? "outstanding" : "idle", n, reps, median(off), median(on));
  }
  MPI_Finalize();
  return 0;
}
