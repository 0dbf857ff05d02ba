// The ping-pongs that align the ranks' trace clocks on rank 0's (the arithmetic is the
// trace's, trace/clock_sync.hpp). Collective over `world`, on the thread that may call MPI;
// rank 0 serves the ranks one after the other, each with `rounds` ping-pongs of which the
// shortest counts, while the others wait without spinning. Used only when tracing, at the start and the end of a run.
#pragma once

#include <mpi.h>

#include "trace/clock_sync.hpp"

namespace hytask::mpi::detail {

// Every rank's offset to rank 0's clock, and a common origin (rank 0's clock when it
// finished). Rank 0's own alignment has offset 0.
trace::clock_alignment align_clocks(MPI_Comm world, int rounds = 16);
// The offset measured again, and how far it moved since `start` (rank 0: not measured).
trace::clock_drift measure_drift(MPI_Comm world, const trace::clock_alignment& start, int rounds = 16);

}  // namespace hytask::mpi::detail
