// idle_meter: whether the threads that compute left a core idle between two looks, measured
// by the process's CPU time against the wall clock. A thread that polls for others may then
// poll often without taking a core from the compute; while they are busy, every one of its
// wakes preempts them.
//
// `workers` is how many threads compute (an OpenMP team's size): the interval counts as idle
// when the process used at most workers - 1/2 cores on average. The looking thread's own time
// counts: a looker that polls often takes the core a woken worker would run on, which would
// look idle without it, and it would never back off. Other threads of the process (MPI's
// own) count too, which errs on the side of "busy". One thread calls idle(); a call costs
// about 0.8 us (the process clock is a system call; bench_micro's BM_IdleMeterLook).
#pragma once

#include <cstdint>

namespace hytask::core {

class idle_meter {
 public:
  explicit idle_meter(int workers) noexcept;
  // Since the previous call (the first returns false): whether half a core or more of the
  // `workers` stood idle.
  bool idle() noexcept;

 private:
  std::int64_t workers_;
  std::int64_t wall_ = -1, process_ = 0;
};

}  // namespace hytask::core
