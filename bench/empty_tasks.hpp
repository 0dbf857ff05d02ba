// `n` empty OpenMP tasks, created by one thread of a team of 2 and run by both: what the
// benchmarks of hytask_omp's per-task cost time or count (omp_tool_cost.cpp,
// omp_task_hook_cost.cpp).
#pragma once

namespace bench {

inline void run_empty_tasks(int n) {
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int i = 0; i < n; ++i) {
#pragma omp task firstprivate(i)
      {
        volatile int x = i;
        (void)x;
      }
    }
#pragma omp taskwait
  }
}

}  // namespace bench
