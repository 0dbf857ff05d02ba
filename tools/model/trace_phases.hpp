// What hytask-model measures in a hytask trace (HYTASK_TRACE, docs/tracing.md): per rank and
// per iteration, the time spent communicating with no compute running, and the compute split
// into overlappable and non-overlappable work (docs/model.md).
//
// Events read from a rank's Chrome trace-event JSON: thread names (ph "M"), task slices
// (ph "X", cat "task", args.id the task), MPI posts (ph "i", cat "mpi", named after the
// call; args.id the posting task, 0 outside tasks). A task slice is
//   - communication when its task posted an MPI operation (its id is a post's id);
//   - overlappable compute when its name starts with "overlap:" (the annotation the
//     program adds: this work reads nothing this iteration's messages bring);
//   - non-overlappable compute otherwise.
// An iteration starts at an MPI post that follows compute (the first post of the trace
// starts the first) and ends where the next starts: the main thread's communication phase,
// then its compute phase. Only complete iterations count; the compute after the last
// communication phase is not one.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hytask::model {

// A trace that cannot be read: what() names the file and the problem.
struct trace_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct iteration {
  double start_us = 0, seconds = 0;
  double comm = 0, non = 0, overlap = 0;  // fractions of seconds; they sum to 1
};

struct rank_phases {
  std::string file;
  int rank = -1;            // the trace's pid
  int workers = 0;          // tracks named "worker N..."
  std::size_t posts = 0;    // MPI posts in the file
  std::size_t overlap_slices = 0, non_slices = 0, comm_slices = 0;
  std::size_t tasks_during_comm = 0;  // compute slices that ran while a post was made
  std::vector<iteration> iterations;
};

// Reads one rank's trace file. Throws trace_error naming the file when it cannot be opened,
// is not JSON, holds no trace events, or has no MPI post or no compute task.
rank_phases read_rank(const std::string& path);

// The rank files a HYTASK_TRACE value wrote: `path` itself if it exists, else
// stem.rank<r>.ext for r = 0, 1, ... (the names HYTASK_TRACE gives each rank). Throws
// trace_error when neither exists.
std::vector<std::string> rank_files(const std::string& path);

// Time-weighted means of the iterations' fractions (sum of each part over sum of times).
struct totals {
  double seconds = 0;
  std::size_t iterations = 0;
  double comm = 0, non = 0, overlap = 0;
};
totals sum_iterations(const std::vector<iteration>& its);

}  // namespace hytask::model
