// hytask-overlap's command line: what to measure and where to write it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace overlap {

// How a rank communicates and where the compute runs.
enum class mode {
  mpi,             // plain MPI on main, the library as it is
  mpi_progress,    // plain MPI with the library's own progress thread (MPICH_ASYNC_PROGRESS=1)
  hytask_workers,  // compute in tasks, communication through hytask::mpi, HYTASK_PROGRESS=workers
  hytask_thread,   //   ... HYTASK_PROGRESS=thread
  hytask_none,     //   ... HYTASK_PROGRESS=none
  hytask_node,     //   ... HYTASK_PROGRESS=node (seed 002's node agent)
};
const char* name(mode m);

// Who communicates (seed 002, Fig. 4.5): both directions at once, or the lower half of the
// ranks sends and the upper half receives, computes and is timed, with the receive posted
// before the send arrives (receiver-first) or after (sender-first).
enum class order { exchange, receiver_first, sender_first };
const char* name(order o);
bool is_hytask(mode m);

// When the communication completes relative to the compute (seed 000, Alg. 4.3-4.5).
struct pattern {
  enum kind { sync, async, async_x } kind = async;
  unsigned tests = 0;  // X of ASYNC(X): progress opportunities spread through the compute
  std::string label() const;  // SYNC, ASYNC, ASYNC(4)
};

struct options {
  std::vector<mode> modes;
  std::vector<std::size_t> sizes;      // bytes per message
  std::vector<pattern> patterns;
  std::vector<double> steps;           // T_syn as fractions of T_lat (seed 002, Eq. 4.2)
  order direction = order::exchange;
  double delay_us = 200;               // the late side's delay in receiver-/sender-first
  unsigned partners = 1;
  unsigned messages = 1;               // per partner
  std::size_t block = 0, stride = 0;   // MPI_Type_vector layout in doubles; 0 = contiguous
  unsigned iters = 10;
  double min_time = 0.05;              // seconds per measurement, at least
  unsigned tasks = 32;                 // compute tasks per ASYNC iteration in hytask modes
  double task_us = 0;                  // or: compute tasks of this length (overrides tasks)
  std::string csv, json, plot;
  std::vector<std::string> merge;      // --merge: JSON files of earlier runs
  bool quiet = false;

  std::string layout() const;  // "contiguous" or "vector:BLOCK:STRIDE"
};

// A problem with the command line: main prints it and exits with 2.
using usage_error = hytask_cli::usage_error;

// The command line; nothing when --help was asked for (printed when `print_help`: rank 0).
std::optional<options> parse(int argc, char** argv, bool print_help);

}  // namespace overlap
