// The synthetic work of the overlap measurements: a Jacobi sweep over a small, cache-resident
// grid (seed 000's stencil), whose cost per unit is measured once, before MPI starts, so that
// a thread that takes cycles from it shows as slower compute. Used by hytask-overlap and by
// bench/overlap_program.
#pragma once

#include <cstdint>

namespace overlap {

// Runs `units` sweeps on this thread's grid.
void compute(std::uint64_t units);

// Nanoseconds per unit on this core: the median of many ~10 ms runs (one run's speed varies
// by 10-20 % on a shared machine; the median is what a long computation sees).
double calibrate_unit_ns();

}  // namespace overlap
