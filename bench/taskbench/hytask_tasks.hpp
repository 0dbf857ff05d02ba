// The tasks of a Task Bench graph as hytask declares them, shared by the spawning program
// (tb_hytask.cpp) and the recording one (tb_hytask_graph.cpp): step by step, point by
// point, a body that runs task (t, i) and an `in` access on each record it reads and an
// `out` on the one it writes, as one run-time-length list (hytask::regions).
#pragma once

#include <hytask/hytask.hpp>
#include <vector>

#include "graph.hpp"

namespace taskbench {

// Calls declare(body, accesses) for every task of g, in order; the accesses are a
// hytask::region_list (empty for trivial, which reads and writes no record).
template <class Declare>
void declare_tasks(const graph& g, state& s, Declare&& declare) {
  std::vector<hytask::region_access> accesses;
  accesses.reserve(static_cast<std::size_t>(g.max_deps()) + 1);
  long deps[max_radix];
  state* sp = &s;
  for (long t = 0; t < g.steps; ++t) {
    for (long i = 0; i < g.active_width(t); ++i) {
      auto body = [sp, t, i] { run_task(*sp, t, i); };
      accesses.clear();
      if (g.has_records()) {
        const int n = g.deps(t, i, deps);
        for (int k = 0; k < n; ++k) accesses.push_back(hytask::in(s.at(t - 1, deps[k]), 1));
        accesses.push_back(hytask::out(s.at(t, i), 1));
      }
      declare(body, hytask::regions(accesses));
    }
  }
}

}  // namespace taskbench
