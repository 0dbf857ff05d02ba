// The machine as hwloc sees it, restricted to the CPUs this process may run on.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

namespace hytask::core {

struct topology {
  unsigned packages = 1;   // sockets with at least one allowed core
  unsigned numa_nodes = 1;
  unsigned cores = 1;      // allowed cores
  unsigned pus = 1;        // allowed hardware threads
  // One entry per allowed core, in hwloc's logical order: its first allowed PU's OS index,
  // and the logical index of its package.
  std::vector<int> core_pu;
  std::vector<int> core_package;
  std::string description;  // one line for hytask-info

  static const topology& get();  // detected once per process
};

// Worker -> core placement: worker i gets core i % cores.
struct placement {
  std::vector<int> pu_of_worker;       // OS PU index (for pinning)
  std::vector<int> package_of_worker;  // for socket-aware stealing
};
placement place_workers(const topology& topo, unsigned workers);

// The order in which worker `thief` looks at the other workers when it steals: workers on
// its own package first, then the others; each group starts after the thief, so thieves
// spread over victims.
std::vector<unsigned> steal_order(const std::vector<int>& package_of_worker, unsigned thief);

// Pins the calling thread to one PU; returns false (and changes nothing) if it cannot.
bool pin_thread_to_pu(int pu);

// A runtime thread that is not a worker (the MPI thread, the progress thread, the watchdog,
// the node agent) calls this first. Such threads are started by main and inherit its
// affinity, which under HYTASK_PIN=cores is main's one core: they would compete with main
// for it while other cores idle. This gives the calling thread the affinity main had before
// the runtime pinned it; without a pinned runtime it changes nothing.
void leave_main_core();
// The scheduler: main's affinity before it pinned main (set), and after unpinning (clear).
void set_unpinned_affinity(const cpu_set_t* set);

// The calling thread's affinity when constructed, for restore() to give back (main's, which
// it had before the runtime pinned it and has again after the runtime is gone).
class saved_affinity {
 public:
  saved_affinity() noexcept;
  void restore() const noexcept;  // on the thread that constructed it
  const cpu_set_t* get() const noexcept { return valid_ ? &set_ : nullptr; }

 private:
  cpu_set_t set_;
  bool valid_;
};

}  // namespace hytask::core
