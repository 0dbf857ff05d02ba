// Task Bench graphs (graph.hpp) on hytask, written the way a user would: a runtime with the
// default configuration but the thread count, main spawns every task step by step, point
// by point, with an `in` access on each record the task reads and an `out` on the one it
// writes (a run-time-length list: hytask::regions), then waits. No priorities, no knobs.
#include <hytask/hytask.hpp>

#include "graph.hpp"
#include "hytask_tasks.hpp"

int main(int argc, char** argv) {
  taskbench::options o;
  if (const auto status =
          taskbench::take_options(argc, argv, "taskbench_hytask", taskbench::with_threads | taskbench::with_latency, o))
    return *status;
  hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(o.threads)});

  const taskbench::graph& g = o.g;
  taskbench::state s(g, o.threads);
  const std::unique_ptr<taskbench::latency_log> latency =
      taskbench::configure(o, s, [] { return hytask::worker_index(); });
  taskbench::checker checker(g);

  taskbench::bench_system sys{.name = "hytask", .cores = o.threads, .prints = true, .run = nullptr};
  sys.run = [&](long iterations) {
    s.reset(iterations);
    const taskbench::timing timing = taskbench::time_graph([&] {
      taskbench::declare_tasks(g, s, [](const auto& body, const hytask::region_list& accesses) {
        if (accesses.list.empty()) hytask::spawn(body);  // trivial: no accesses at all
        else hytask::spawn(body, accesses);
      });
      hytask::wait_all();
    });
    checker.check(s, 0, g.width);
    return timing;
  };
  taskbench::sweep(o, sys, latency.get());
}
