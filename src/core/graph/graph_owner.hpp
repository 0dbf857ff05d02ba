// Owner placement of a recorded graph's run: each task runs on a partition fixed for the
// graph, and a partition hears of a predecessor on another one by a message, as MPI ranks
// do. See docs/design/core.md, "Recorded graphs".
//
// The partition (owner_plan, built once per graph and worker count): nodes level by level
// (a node's level is one more than its predecessors' deepest), each to the partition that
// owns most of its predecessors, within a cap of ceil(level size / partitions) per
// partition; ties go to the block distribution of the level. So a Task Bench stencil or fft
// is cut into column blocks as its MPI version is, and a level is shared out evenly.
//
// A run: one agent task per partition to start with. An agent claims a partition, runs its
// ready nodes in the order they became ready, and announces each finished node whose
// successors live elsewhere with one 8-byte message per destination partition, into a
// single-producer, single-consumer ring sized at plan time for exactly one run's messages. The counts of
// predecessors still pending are the owning partition's alone: no locked instruction and
// no cache line shared between workers on the path from a task's end to its successor's
// start, but the message's. An agent with nothing ready polls its rings; after
// HYTASK_SPIN_US without a message, or when its worker has other work to do first, it lets
// its partitions go. A sender that finds a partition let go hands it to a new agent task
// (any idle worker steals it); an agent with nothing of its own takes partitions let go.
//
// Bodies keep everything a task's body has: children (waited for before the node counts as
// done), this_task::id, exceptions (successors skipped, counted as a task's would be),
// cancellation of the caller. A body that suspends or yields lets its agent's partitions
// go first, to new agents; its completion then reaches its partition as a late message.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/graph/graph_data.hpp"

namespace hytask::detail {

struct owner_state;  // the partitions' state in a run (graph_owner.cpp)
struct owner_state_deleter {
  void operator()(owner_state* s) const;
};

// The partition of a sealed graph's nodes with edges (isolated nodes run in ranges).
struct owner_plan {
  unsigned parts = 0;
  std::vector<std::uint16_t> owner;        // per node (unused for isolated nodes)
  std::vector<std::uint32_t> local;        // per node: its position among its partition's
  std::vector<std::uint32_t> part_begin;   // parts + 1: partition p's nodes are
  std::vector<std::uint32_t> part_nodes;   //   part_nodes[part_begin[p] .. part_begin[p+1])
  std::vector<std::uint32_t> root_begin;   // parts + 1: its roots, the same way
  std::vector<std::uint32_t> root_nodes;
  // Rings, by (source, destination) = source * parts + destination: capacity in messages
  // (the source's nodes with a successor at the destination), and the slots.
  std::vector<std::uint32_t> ring_cap;
  std::vector<std::unique_ptr<std::atomic<std::uint64_t>[]>> rings;
  std::vector<std::vector<std::uint16_t>> sources;  // per destination: sources with a ring
  std::uint32_t lap = 0;                             // the run's tag in its messages
  std::unique_ptr<owner_state, owner_state_deleter> state;  // one run at a time uses it

  // Builds the partition of g for `parts` workers.
  owner_plan(const graph_data& g, unsigned parts);
  ~owner_plan();
};

// Whether a graph may run with owner placement: its nodes with edges have no priority
// (the scheduler's order among priorities needs every task in its queues), and the
// runtime has 2 to max_owner_parts workers.
constexpr unsigned max_owner_parts = 64;
bool owner_placement_possible(const graph_data& g, unsigned workers);


// Starts the graph's nodes with edges on `w` and the other workers, with owner placement
// (isolated nodes are the caller's to start), and returns: the caller's wait_children waits
// for them, as for the other placement's tasks. r and plan live until then; no other run
// of the graph is under way.
void start_owned_run(core::scheduler* s, core::worker* w, graph_run* r, owner_plan* plan);

}  // namespace hytask::detail
