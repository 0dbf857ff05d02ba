// The node's census: how many ranks share this rank's node, how many worker threads they run
// and on how many CPUs. Taken once at start (collective over the world communicator); the
// runtime tells the core whether the node is oversubscribed, so that idle workers sleep
// between polls from the start instead of yielding (idle.cpp): a rank that polls and yields
// keeps its share of the CPUs, and on a node with more threads than CPUs a rank whose peers
// already sleep never finds its core crowded, so it would poll at a full core while idle.
#pragma once

#include <mpi.h>

namespace hytask::mpi::detail {

struct node_census {
  int ranks = 1;          // ranks of this node (MPI_COMM_TYPE_SHARED)
  unsigned threads = 1;   // their worker threads, main included
  unsigned cpus = 1;      // hardware threads any of them may run on (the union of their masks)
  bool oversubscribed() const noexcept { return threads > cpus; }
};

// Collective over `world`. `threads`: this rank's workers. Throws usage_error if MPI fails.
node_census take_node_census(MPI_Comm world, unsigned threads);

}  // namespace hytask::mpi::detail
