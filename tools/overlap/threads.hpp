// CPU time of this process's threads, grouped by what they do, read from /proc/self/task:
// main, hytask's workers, hytask's progress threads (hytask-progress, hytask-mpi,
// hytask-agent, hytask-watchdog), and every other thread, which belongs to the MPI library
// (MPICH_ASYNC_PROGRESS's progress thread, Open MPI's event threads).
#pragma once

#include <map>

namespace overlap {

struct thread_cpu {
  double main_s = 0, workers_s = 0, progress_s = 0, library_s = 0;
};

// CPU seconds per thread id, now.
std::map<int, std::pair<int, double>> thread_times();  // tid -> (group, seconds)
// What each group used between two readings (threads that appeared count from zero).
thread_cpu thread_cpu_between(const std::map<int, std::pair<int, double>>& before,
                              const std::map<int, std::pair<int, double>>& after);

}  // namespace overlap
