// Task Bench graphs (graph.hpp) on OpenMP tasks, written the way an OpenMP user would: one
// thread of a parallel region creates every task step by step, point by point, with
// depend(in:) on each record the task reads and depend(out:) on the one it writes. The
// number of inputs is known only at run time: OpenMP 5's depend iterator, which GCC 12 and
// Clang 14 both accept. The same source is built by GCC (libgomp, taskbench_omp_gcc) and by
// Clang (libomp, taskbench_omp_clang), both linking the GCC-built kernel.
#include <omp.h>

#include "graph.hpp"

#if defined(__clang__)
static const char* const system_name = "omp_clang";
#else
static const char* const system_name = "omp_gcc";
#endif

int main(int argc, char** argv) {
  taskbench::options o;
  if (const auto status =
          taskbench::take_options(argc, argv, std::string("taskbench_") + system_name, taskbench::with_threads | taskbench::with_latency, o))
    return *status;
  omp_set_num_threads(o.threads);

  const taskbench::graph& g = o.g;
  taskbench::state s(g, o.threads);
  const std::unique_ptr<taskbench::latency_log> latency =
      taskbench::configure(o, s, [] { return omp_get_thread_num(); });
  taskbench::checker checker(g);

  taskbench::bench_system sys{
      .name = system_name, .cores = o.threads, .prints = true, .run = nullptr};
  sys.run = [&](long iterations) {
    s.reset(iterations);
    taskbench::state* sp = &s;
    const taskbench::timing timing = taskbench::time_graph([&] {
#pragma omp parallel
#pragma omp single
      {
        for (long t = 0; t < g.steps; ++t) {
          for (long i = 0; i < g.active_width(t); ++i) {
            if (!g.has_records()) {
#pragma omp task firstprivate(sp, t, i)
              taskbench::run_task(*sp, t, i);
              continue;
            }
            long deps[taskbench::max_radix];
            const int n = sp->g.deps(t, i, deps);
            // Step 0 reads nothing (n = 0); its "previous" slots are never dereferenced.
            // [[maybe_unused]]: GCC 12 warns that variables used only in depend clauses
            // are unused (they are used: the checks in run_task would fail otherwise).
            [[maybe_unused]] taskbench::record_slot* prev = sp->slots(t == 0 ? 0 : t - 1);
            [[maybe_unused]] taskbench::record* mine = sp->at(t, i);
#pragma omp task firstprivate(sp, t, i) depend(iterator(k = 0                \
                                                        : n),                \
                                               in                            \
                                               : prev[deps[k]].r) depend(out \
                                                                         : mine[0])
            taskbench::run_task(*sp, t, i);
          }
        }
      }
    });
    checker.check(s, 0, g.width);
    return timing;
  };
  taskbench::sweep(o, sys, latency.get());
}
