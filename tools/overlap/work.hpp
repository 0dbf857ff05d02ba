// The synthetic work of the overlap measurements: a Jacobi sweep over a small, cache-resident
// grid (seed 000's stencil), whose cost per unit is measured once, before MPI starts, so that
// a thread that takes cycles from it shows as slower compute. Used by hytask-overlap and by
// bench/overlap_program.
#pragma once

#include <cstdint>

namespace overlap {

// Something the compute looks at every few sweeps, without calling MPI (seed 002's
// progression: when did the data arrive in the receive buffers?). check() is called about
// every 8 units (a few microseconds) until it returns true once.
struct watcher {
  bool (*check)(void* arg) = nullptr;
  void* arg = nullptr;
};

// Runs `units` sweeps on this thread's grid, calling w's check between them while it has
// not returned true (no watcher: nothing but the sweeps). Returns whether it returned true.
bool compute(std::uint64_t units, const watcher* w = nullptr);

// Nanoseconds per unit on this core: the median of many ~10 ms runs (one run's speed varies
// by 10-20 % on a shared machine; the median is what a long computation sees).
double calibrate_unit_ns();

// The steady clock, in microseconds (the measurements' stopwatch).
double now_us();

}  // namespace overlap
