// The state of a recorded graph (hytask/core/graph.hpp) and of one of its runs, shared by
// the two ways a run places tasks: graph.cpp (released where they become ready, stolen by
// idle workers) and graph_owner.cpp (each on a worker fixed for the graph).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "core/deps/dependency.hpp"
#include "core/graph/graph_choice.hpp"
#include "core/sched/scheduler.hpp"
#include "hytask/core/detail/task.hpp"
#include "hytask/core/graph.hpp"

namespace hytask::detail {

struct owner_plan;

constexpr std::int32_t failed_bit = 1 << 30;  // in a run's pending count: a predecessor failed

struct graph_data {
  struct node {
    graph_body body;
    int priority;
    const char* name;  // interned, or null
  };
  std::vector<node> nodes;
  // The bodies' callables, one after the other in the order added, in chunks of
  // body_chunk bytes (or one of its own for a bigger one): a run calls them in about that
  // order, so they stream through the cache with the nodes. (A heap block each, scattered
  // among the tracker's allocations, cost a cache miss per task at Task Bench's 64 tasks
  // a step.)
  static constexpr std::size_t body_chunk = 64 * 1024;
  std::vector<std::unique_ptr<std::byte[]>> body_chunks;
  std::byte* body_next = nullptr;
  std::size_t body_left = 0;
  std::vector<std::uint32_t> npred;  // predecessors of each node (an edge per access pair)

  // While recording.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> found;  // edges (pred, succ)
  dep_domain* domain = nullptr;
  core::scheduler* recorded_in = nullptr;  // the runtime whose records the placeholders are
  task* placeholder = nullptr;  // the node being added: a record that never runs
  // Once sealed: the memory the graph's tasks touch, as disjoint [lo, hi) (the tracker's).
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> regions;
  std::atomic<bool> adding{false};
  bool broken = false;  // an add threw half-way: the graph is incomplete

  // Once sealed (at the first run): successors in one array, the start of each node's.
  std::atomic<bool> sealed{false};
  std::mutex seal_mutex;  // two first runs at once: one seals
  std::vector<std::uint32_t> succ_begin;  // nodes.size() + 1 entries
  std::vector<std::uint32_t> succ;
  std::vector<std::uint32_t> roots;
  // Nodes with neither predecessors nor successors, nor a name or a priority: their bodies
  // run in line in range tasks (see isolated_range). A node whose body suspended, or ran
  // other tasks while it waited, is marked escaped and gets a task of its own from then on.
  std::vector<std::uint32_t> isolated;
  std::unique_ptr<std::atomic<std::uint8_t>[]> escaped;  // per node
  std::atomic<int> runs{0};  // runs under way
  // The pending counts of the last run, kept for the next (a run that starts while another
  // is under way allocates its own).
  std::unique_ptr<std::atomic<std::int32_t>[]> spare_pending;
  std::atomic<bool> spare_taken{false};

  // Owner placement (graph_owner.cpp): the partition, built at its first use; and which
  // placement this graph's runs use (HYTASK_GRAPH_PLACEMENT=auto measures them).
  std::unique_ptr<owner_plan> plan;
  graph_choice choice;
  bool edge_priorities = false;  // a node that is not isolated has a priority (set at seal)

  ~graph_data();
  void drop_recording();
};


// One run of a graph: the pending counts and what a node's creation needs.
struct graph_run {
  const graph_data* g;
  task* caller;            // the parent of the graph's tasks
  std::uint8_t depth;      // theirs
  std::uint64_t seq_base;  // their spawn_seq is seq_base + 1 + node index
  std::unique_ptr<std::atomic<std::int32_t>[]> pending;
  // The first failure: what skipped tasks carry. Failures are rare: a lock keeps the
  // reader of a skipped task from seeing it half-written.
  std::mutex error_mutex;
  std::exception_ptr error;

  void note_failure(const std::exception_ptr& e) {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = e;
  }
  std::exception_ptr first_failure() {
    std::lock_guard<std::mutex> lock(error_mutex);
    return error;
  }
};

// Pushes a task of the run that is not one of the graph's (a range of roots or of
// independent nodes, an owner placement's agent), running f: another child of the caller,
// counted before it exists (the caller's body, or the task that pushes it, keeps the count
// above zero meanwhile). One level above the graph's tasks: a thief takes the shallowest
// level first (so it takes such a task, and runs or creates nodes where it runs), the owner
// the deepest. Never skipped by a cancellation: a skipped one would never count its nodes
// out of the caller; the nodes are skipped one by one instead.
template <class F>
void push_run_task(core::scheduler* s, core::worker* w, graph_run* r, F f) {
  r->caller->alive.fetch_add(1, std::memory_order_seq_cst);
  task* t = s->allocate_counted(w);
  t->parent = r->caller;
  t->spawn_seq = 0;  // not one of the graph's tasks
  t->flags |= flag_untracked | flag_uncancellable;
  t->depth = static_cast<std::uint8_t>(r->depth - 1);
  emplace_callable(t, std::move(f));
  s->push_ready(w, t);
}

}  // namespace hytask::detail
