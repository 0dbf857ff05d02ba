// Task Bench graphs (graph.hpp) on hytask, written the way a user would: a runtime with the
// default configuration but the thread count, main spawns every task step by step, point
// by point, with an `in` access on each record the task reads and an `out` on the one it
// writes (a run-time-length list: hytask::regions), then waits. No priorities, no knobs.
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

  std::vector<hytask::region_access> accesses;
  accesses.reserve(static_cast<std::size_t>(g.max_deps()) + 1);
  long deps[taskbench::max_radix];

  taskbench::bench_system sys{.name = "hytask", .cores = o.threads, .prints = true, .run = nullptr};
  sys.run = [&](long iterations) {
    s.reset(iterations);
    taskbench::state* sp = &s;
    const taskbench::timing timing = taskbench::time_graph([&] {
      for (long t = 0; t < g.steps; ++t) {
        for (long i = 0; i < g.active_width(t); ++i) {
          auto body = [sp, t, i] { taskbench::run_task(*sp, t, i); };
          if (!g.has_records()) {
            hytask::spawn(body);
            continue;
          }
          accesses.clear();
          const int n = g.deps(t, i, deps);
          for (int k = 0; k < n; ++k) accesses.push_back(hytask::in(s.at(t - 1, deps[k]), 1));
          accesses.push_back(hytask::out(s.at(t, i), 1));
          hytask::spawn(body, hytask::regions(accesses));
        }
      }
      hytask::wait_all();
    });
    checker.check(s, 0, g.width);
    return timing;
  };
  taskbench::sweep(o, sys, latency.get());
}
