// hytask::mpi::progress_stats(): what the progress policy has done for this rank so far.
//
// ```cpp context=mpi
// auto s = hytask::mpi::progress_stats();
// std::printf("%s: %llu polls, %llu node wakes (%llu futile)\n", s.policy,
//             static_cast<unsigned long long>(s.polls),
//             static_cast<unsigned long long>(s.wakes),
//             static_cast<unsigned long long>(s.futile));
// ```
//
// See docs/mpi.md ("Progress counters"). Counters only grow; take differences to measure
// a phase.
#pragma once

#include <cstdint>

namespace hytask::mpi {

struct progress_counters {
  const char* policy = "";           // workers | thread | node | none
  std::uint64_t polls = 0;           // polls of this rank's MPI engine, by any thread
  std::uint64_t thread_cpu_ns = 0;   // CPU time of the runtime's progress (or MPI) thread
  // HYTASK_PROGRESS=node only (the node agent's counters); zero under the other policies.
  std::uint64_t wakes = 0;       // the node agent woke this rank's progress thread
  std::uint64_t futile = 0;      //   ... and the woken poll found nothing to progress
  std::uint64_t completed = 0;   //   ... and the woken poll completed an operation
  std::uint64_t suppressed = 0;  // a wake was due but one of the rank's threads was inside MPI
  std::uint64_t agent_polls = 0; // of the wakes, polls the agent made itself (its own rank)
  std::uint64_t agent_cpu_ns = 0;  // CPU time of the node's agent (on the node's first rank)
  int local_rank = 0, local_size = 1;  // this rank among the ranks of its node
};

// This rank's counters. Throws usage_error when no runtime with MPI is alive.
progress_counters progress_stats();

}  // namespace hytask::mpi
