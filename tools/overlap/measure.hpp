// The measurement: pairs of ranks exchange messages while computing, in each mode.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "options.hpp"
#include "results.hpp"
#include "work.hpp"

namespace overlap {

struct context {
  const options& opt;
  int rank = 0, size = 0;
  double unit_ns = 0;
  std::string mpi;  // flavour name for the rows
  unsigned nodes = 1;
  MPI_Comm node = MPI_COMM_NULL;  // the ranks of this rank's node (MPI_COMM_TYPE_SHARED)
  // The world's ranks ordered by node, then rank: its first half pairs with its second, so
  // that with two nodes every pair spans them, however the launcher placed the ranks.
  std::vector<int> placed;
  // Called on rank 0 with a line of progress text.
  std::function<void(const std::string&)> progress;
};

// Measures one mode at one message size, every pattern, every step. Collective over
// MPI_COMM_WORLD; every rank returns the same rows.
std::vector<row> measure(const context& ctx, mode m, std::size_t bytes);

}  // namespace overlap
