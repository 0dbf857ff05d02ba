// Task Bench graphs (graph.hpp) in plain MPI, no hytask: one rank per core, the points
// divided in contiguous blocks over the ranks. Each step t: every rank sends each of its
// records of step t - 1 that a task of another rank reads (one message per point and
// destination rank), receives the records of other ranks that its tasks read (tag = the
// point: MPI's non-overtaking order keeps the steps of one point apart), waits for all of
// them, then runs its tasks of step t in point order. The exchange lists are worked out
// once, before the timed runs, as an MPI programmer would. With --latency each rank records
// its own tasks, rank r as worker r, and rank 0 merges the logs after each run: the ranks'
// clocks are compared, so they must share one machine's.
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "graph.hpp"

namespace {

struct transfer {
  long point;
  int rank;  // destination of a send, source of a receive
};

// What rank `me` sends and receives before step t (t >= 1), for all steps: the entries of
// step t are [first[t], first[t + 1]).
struct exchange_plan {
  std::vector<transfer> sends, recvs;
  std::vector<std::size_t> send_first, recv_first;
};

}  // namespace

int main(int argc, char** argv) {
  taskbench::options o;
  if (const auto status = taskbench::take_options(argc, argv, "taskbench_mpi", taskbench::with_latency, o))
    return *status;
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const taskbench::graph& g = o.g;

  int* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  if (found && g.width - 1 > *tag_ub) {
    if (rank == 0)
      std::fprintf(stderr,
                   "taskbench_mpi: --width %ld: the points are the message tags, and this MPI's "
                   "largest tag is %d; use a smaller width\n",
                   g.width, *tag_ub);
    MPI_Finalize();
    return 2;
  }

  // Point i belongs to the rank r with first(r) <= i < first(r + 1).
  auto first = [&](long r) { return r * g.width / ranks; };
  auto owner = [&](long i) { return static_cast<int>(((i + 1) * ranks - 1) / g.width); };
  const long lo = first(rank), hi = first(rank + 1);

  exchange_plan plan;
  {
    long deps[taskbench::max_radix];
    std::vector<char> needed(static_cast<std::size_t>(g.width));
    // readers[(j - lo) * ranks + r]: a task of rank r reads my point j.
    std::vector<char> readers(static_cast<std::size_t>((hi - lo) * ranks));
    plan.send_first.assign(2, 0);
    plan.recv_first.assign(2, 0);
    for (long t = 1; t < g.steps; ++t) {
      // Receives: the remote points that my tasks of step t read, in point order.
      std::fill(needed.begin(), needed.end(), 0);
      for (long i = lo; i < std::min(hi, g.active_width(t)); ++i) {
        const int n = g.deps(t, i, deps);
        for (int k = 0; k < n; ++k) needed[deps[k]] = 1;
      }
      for (long j = 0; j < g.width; ++j)
        if (needed[j] && owner(j) != rank) plan.recvs.push_back({j, owner(j)});
      // Sends: each of my points of step t - 1, to every other rank with a reader of it.
      std::fill(readers.begin(), readers.end(), 0);
      for (long i = 0; i < g.active_width(t); ++i) {
        if (owner(i) == rank) continue;
        const int n = g.deps(t, i, deps);
        for (int k = 0; k < n; ++k)
          if (deps[k] >= lo && deps[k] < hi) readers[(deps[k] - lo) * ranks + owner(i)] = 1;
      }
      for (long j = lo; j < std::min(hi, g.active_width(t - 1)); ++j)
        for (int r = 0; r < ranks; ++r)
          if (readers[(j - lo) * ranks + r]) plan.sends.push_back({j, r});
      plan.send_first.push_back(plan.sends.size());
      plan.recv_first.push_back(plan.recvs.size());
    }
  }
  std::size_t most = 0;
  for (long t = 1; t < g.steps; ++t)
    most = std::max(most, plan.send_first[t + 1] - plan.send_first[t] + plan.recv_first[t + 1] -
                              plan.recv_first[t]);
  std::vector<MPI_Request> requests(most);

  taskbench::state s(g);
  s.corrupt = o.corrupt;
  taskbench::checker checker(g);
  std::unique_ptr<taskbench::latency_log> latency;
  if (o.latency) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int on_node = 0;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    if (on_node != ranks) {
      if (rank == 0)
        std::fprintf(stderr,
                     "taskbench_mpi: --latency compares the clocks of different ranks, which needs every "
                     "rank on one machine (%d of %d share rank 0's); run without --latency or "
                     "on one node\n",
                     on_node, ranks);
      MPI_Finalize();
      return 2;
    }
    latency = std::make_unique<taskbench::latency_log>(g);
    latency->set_worker_base(rank);
    s.latency = latency.get();
  }
  // Rank 0's log gets every rank's tasks (each rank wrote only its own; the rest are 0, or
  // an earlier run's smaller clock readings).
  auto merge_latency = [&] {
    auto merge = [&](void* data, MPI_Datatype type) {
      MPI_Reduce(rank == 0 ? MPI_IN_PLACE : data, data, static_cast<int>(latency->entries()),
                 type, MPI_MAX, 0, MPI_COMM_WORLD);
    };
    merge(latency->starts(), MPI_INT64_T);
    merge(latency->ends(), MPI_INT64_T);
    merge(latency->workers(), MPI_INT);
  };

  taskbench::bench_system sys{.name = "mpi", .cores = ranks, .prints = rank == 0, .run = nullptr};
  sys.sum_over_processes = [](long x) {
    long sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
  };
  sys.run = [&](long iterations) {
    s.reset(iterations);
    MPI_Barrier(MPI_COMM_WORLD);
    const taskbench::timing timing = taskbench::time_graph([&] {
      for (long t = 0; t < g.steps; ++t) {
        if (t > 0) {
          int nreq = 0;
          for (std::size_t k = plan.recv_first[t]; k < plan.recv_first[t + 1]; ++k) {
            const transfer& x = plan.recvs[k];
            MPI_Irecv(s.at(t - 1, x.point), sizeof(taskbench::record), MPI_BYTE, x.rank,
                      static_cast<int>(x.point), MPI_COMM_WORLD, &requests[nreq++]);
          }
          for (std::size_t k = plan.send_first[t]; k < plan.send_first[t + 1]; ++k) {
            const transfer& x = plan.sends[k];
            MPI_Isend(s.at(t - 1, x.point), sizeof(taskbench::record), MPI_BYTE, x.rank,
                      static_cast<int>(x.point), MPI_COMM_WORLD, &requests[nreq++]);
          }
          MPI_Waitall(nreq, requests.data(), MPI_STATUSES_IGNORE);
        }
        for (long i = lo; i < std::min(hi, g.active_width(t)); ++i) taskbench::run_task(s, t, i);
      }
      // The graph is done when the last rank is.
      MPI_Barrier(MPI_COMM_WORLD);
    });
    checker.check(s, std::min(lo, g.width), std::min(hi, g.width));
    if (latency) merge_latency();
    return timing;
  };
  taskbench::sweep(o, sys, latency.get());
  MPI_Finalize();
}
