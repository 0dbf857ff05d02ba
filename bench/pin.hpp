// Pinning the calling thread to one CPU, for the benchmarks that measure between or on
// given cores (core_to_core.cpp, wake_cost.cpp).
#pragma once

#include <pthread.h>
#include <sched.h>

namespace bench {

// Whether the calling thread now runs on `cpu` only.
inline bool pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace bench
