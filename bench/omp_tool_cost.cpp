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

#include "command_line.hpp"
#include "empty_tasks.hpp"
#include "hytask/omp.hpp"

int main(int argc, char** argv) {
  return hytask_cli::main_frame("omp_tool_cost_clang", [&] {
    int n = 20000;
    hytask_cli::command_line cli("omp_tool_cost_clang", "[TASKS]",
                                 "Runs TASKS empty tasks on 2 threads, for callgrind's instruction counts with hytask's\n"
                                 "OMPT tool active (HYTASK_OMPT unset) and declined (HYTASK_OMPT=off).");
    cli.integer("TASKS", n, 1, 100000000, "how many tasks (default 20000)");
    if (!cli.parse(argc, argv)) return 0;
    bench::run_empty_tasks(n);
    if (argc > 5) hytask::omp::session s;  // links hytask's tool in; never runs (more than one argument is refused)
    std::printf("%d tasks, %s\n", n, hytask::omp::openmp_runtime());
    return 0;
  });
}
