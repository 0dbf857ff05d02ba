// Task Bench graphs (graph.hpp) on hytask, recorded once as a hytask::graph and run for
// every measurement: the way a user writes a task graph that a program runs many times.
// The same tasks and accesses as tb_hytask.cpp (main adds every task step by step, point by
// point, an `in` on each record it reads and an `out` on the one it writes); the bodies
// read the kernel's length from the benchmark's state, so one recording serves every
// iterations value. The recording (the adds and seal) is timed apart and printed on stderr;
// the first graph's line (first_seconds, first_faults) is the first run after it. Default configuration but
// the thread count, no priorities, no knobs.
#include <chrono>
#include <cstdio>
#include <hytask/hytask.hpp>

#include "graph.hpp"
#include "hytask_tasks.hpp"

int main(int argc, char** argv) {
  taskbench::options o;
  if (const auto status =
          taskbench::take_options(argc, argv, "taskbench_hytask_graph", taskbench::with_threads | taskbench::with_latency, o))
    return *status;
  hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(o.threads)});

  const taskbench::graph& g = o.g;
  taskbench::state s(g, o.threads);
  const std::unique_ptr<taskbench::latency_log> latency =
      taskbench::configure(o, s, [] { return hytask::worker_index(); });
  taskbench::checker checker(g);

  const auto r0 = std::chrono::steady_clock::now();
  hytask::graph recorded;
  taskbench::declare_tasks(g, s, [&](const auto& body, const hytask::region_list& accesses) {
    recorded.add(body, accesses);
  });
  recorded.seal();
  const double record_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count();
  std::fprintf(stderr, "taskbench_hytask_graph: recorded %zu tasks and %zu edges in %.6f s\n",
               recorded.size(), recorded.edges(), record_seconds);

  taskbench::bench_system sys{
      .name = "hytask_graph", .cores = o.threads, .prints = true, .run = nullptr};
  sys.run = [&](long iterations) {
    s.reset(iterations);
    const taskbench::timing timing = taskbench::time_graph([&] { recorded.run(); });
    checker.check(s, 0, g.width);
    return timing;
  };
  taskbench::sweep(o, sys, latency.get());
}
