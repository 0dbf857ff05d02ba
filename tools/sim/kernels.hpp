// Task durations for the simulator: the applications' own tile kernels (apps/cholesky,
// apps/qr: OpenBLAS and LAPACKE, single-threaded), timed on this machine with `threads` of
// them running at once (as the simulated ranks' workers would share the memory system), or
// given by the user.
#pragma once

#include <string>
#include <vector>

#include "program.hpp"

namespace hytask::sim {

// Median seconds of each kernel of the model (model.kernels(), in that order) at tile size nb
// (and inner block ib for qr), over reps runs on each of `threads` threads, each run with its
// tiles out of the caches (64 MiB streamed through first), as a large matrix's tiles are.
std::vector<double> measure_kernels(const std::string& app, int nb, int ib, int threads, int reps);

// "name=seconds,name=seconds": overrides for some kernels; throws std::invalid_argument
// naming an unknown kernel or a bad number.
void override_kernels(const std::vector<std::string>& names, const std::string& spec, std::vector<double>& seconds);

// OpenBLAS's kernel family for this CPU ("Haswell", ..., "Prescott" when it does not know it).
std::string blas_core();

}  // namespace hytask::sim
