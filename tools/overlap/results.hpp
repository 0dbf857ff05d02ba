// What hytask-overlap measured: one row per (MPI, mode, pattern, message size).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace overlap {

// One point of the T_syn sweep: medians over iterations, then means over ranks.
struct step_result {
  double fraction = 0;     // T_syn / T_lat
  double t_syn_us = 0;     // time the compute took (a fixed number of work units)
  double t_et_us = 0;      // elapsed time of an iteration, slowest rank
  double overlap_pct = 0;  // seed 002, Eq. 4.2, mean over ranks
  double speed_pct = 0;    // the units' cost measured before MPI started / T_syn
  double done_us = 0;      // when the program saw every request complete
  // When the data was in the receive buffers, seen by the compute between sweeps without
  // calling MPI, or done_us if the program saw it complete first (seed 002's progression)
  double arrived_us = 0;
  bool within = false;     // T_et <= 1.1 T_lat on every rank (Eq. 4.1)
};

struct row {
  std::string mpi;      // openmpi | mpich | mpi
  std::string mode;     // mpi, mpi-progress, hytask-workers, ...
  std::string pattern;  // SYNC, ASYNC, ASYNC(X)
  std::string layout;   // contiguous | vector:BLOCK:STRIDE
  std::string order = "exchange";  // exchange | receiver-first | sender-first
  std::size_t bytes = 0;
  unsigned partners = 1, messages = 1, ranks = 2, nodes = 1, threads = 1;
  unsigned iterations = 0;  // per step
  double t_lat_us = 0;      // exchange alone, mean over ranks
  step_result chosen;       // the largest step within Eq. 4.1's limit (else the smallest)
  double cpu_per_wall = 0;  // CPU time / wall time of the whole measurement, mean over ranks
  double rss_kib = 0;       // VmRSS at the end of the measurement, largest rank
  // CPU of threads that only progress communication (hytask's progress thread and node
  // agent, the MPI library's own threads), per wall time, summed over a node's ranks and
  // averaged over nodes: the cores a node gives to progress.
  double progress_cores = 0;
  // HYTASK_PROGRESS=node: seed 002's counters over the measurement, summed over ranks.
  std::uint64_t wakes = 0, futile = 0, completed = 0, suppressed = 0;
  std::vector<step_result> steps;
  std::optional<double> overhead_us;  // T_lat - T_lat(plain mpi), filled by the report
};

// The run a set of rows came from.
struct run_info {
  std::string mpi;          // openmpi | mpich | mpi
  std::string library;      // MPI_Get_library_version, first line
  std::string hytask_version;
  unsigned ranks = 0, nodes = 0;  // nodes: distinct network namespaces among the ranks
  double unit_ns = 0;       // cost of one work unit (one stencil sweep), before MPI started
  std::string command;      // the command line
};

}  // namespace overlap
