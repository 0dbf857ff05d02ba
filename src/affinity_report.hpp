// HYTASK_DISPLAY_AFFINITY=1: each rank prints, once at start, where its threads may run
// (as OMP_DISPLAY_AFFINITY and mpirun --report-bindings do), in lines that `sort` orders by
// rank. Also printed by `hytask-info --affinity` for a runtime without MPI.
#pragma once

#include <string>

#include "hytask/config.hpp"

namespace hytask::detail {

// A knob's value in `s`, as text ("cores", "multiple"), from the knob table (config.cpp).
std::string knob_text(const settings& s, const std::string& variable);

// The report of this process: a line with the host, pid, access mode, progress policy, pinning
// and workers; `node`, if not empty, a line on the rank's node (its ranks, workers and CPUs);
// with HYTASK_PROGRESS=node, one on the node agent's host; then one line per thread with its
// CPUs. `with_mpi`: the comm layer is up (rank, size and the node are asked).
std::string affinity_report(const settings& s, bool with_mpi, int rank, int size,
                            const std::string& node = {});

// Writes the report to stderr in one piece, so that ranks' reports do not interleave.
void print_affinity_report(const settings& s, bool with_mpi, int rank, int size,
                           const std::string& node = {});

}  // namespace hytask::detail
