// The end of a traced run with MPI: the clocks are measured again (their drift), every
// rank closes its timeline, and rank 0 merges the ranks' timelines into the job's trace
// (trace/paths.hpp names the files), receiving them over MPI one rank after the other in
// chunks, so that no file system need be shared and memory stays bounded. Collective over
// `world`, on the thread that may call MPI, after the last event was recorded.
#pragma once

#include <mpi.h>

#include <string>

#include "trace/clock_sync.hpp"

namespace hytask::mpi::detail {

// `path`: HYTASK_TRACE as given. Problems writing the merged trace are reported on stderr
// (the run's own work is done by then); MPI errors throw.
void finish_job_trace(MPI_Comm world, const std::string& path, const trace::clock_alignment& start);

}  // namespace hytask::mpi::detail
