// The cost of hytask's OMPT tool on an OpenMP program's tasks while no request is
// outstanding: 20,000 empty tasks on 2 threads, run with the tool active (HYTASK_OMPT unset)
// and declined (HYTASK_OMPT=off), under callgrind, which counts instructions whatever the
// machine's load (docs/benchmarks.md#omp-detach):
//
//   for m in off auto; do HYTASK_OMPT=$m valgrind --tool=callgrind \
//     --callgrind-out-file=omp_tool.$m build/bench/omp_tool_cost_clang; done
#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include "empty_tasks.hpp"
#include "hytask/omp.hpp"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
  bench::run_empty_tasks(n);
  if (argc > 5) hytask::omp::session s;  // links hytask's tool in; never runs
  std::printf("%d tasks, %s\n", n, hytask::omp::openmp_runtime());
}
