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
#include <vector>

#include "graph.hpp"

int main(int argc, char** argv) {
  const taskbench::options o =
      taskbench::parse(argc, argv, taskbench::with_threads | taskbench::with_latency);
  hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(o.threads)});

  const taskbench::graph& g = o.g;
  taskbench::state s(g, o.threads);
  const std::unique_ptr<taskbench::latency_log> latency =
      taskbench::configure(o, s, [] { return hytask::worker_index(); });
  taskbench::checker checker(g);

  const auto r0 = std::chrono::steady_clock::now();
  hytask::graph recorded;
  {
    std::vector<hytask::region_access> accesses;
    accesses.reserve(static_cast<std::size_t>(g.max_deps()) + 1);
    long deps[taskbench::max_radix];
    taskbench::state* sp = &s;
    for (long t = 0; t < g.steps; ++t) {
      for (long i = 0; i < g.active_width(t); ++i) {
        auto body = [sp, t, i] { taskbench::run_task(*sp, t, i); };
        accesses.clear();
        if (g.has_records()) {
          const int n = g.deps(t, i, deps);
          for (int k = 0; k < n; ++k) accesses.push_back(hytask::in(s.at(t - 1, deps[k]), 1));
          accesses.push_back(hytask::out(s.at(t, i), 1));
        }
        recorded.add(body, hytask::regions(accesses));
      }
    }
    recorded.seal();
  }
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
