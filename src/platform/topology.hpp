// The machine as hwloc sees it, restricted to the CPUs this process may run on.
#pragma once

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
  std::vector<int> allowed_pus;  // OS indices of the PUs the process may run on, ascending
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

// HYTASK_PIN=cores pins main. Before that, the scheduler calls remember_unpinned_affinity()
// on main: the mask main has then is what leave_main_core() gives the calling thread, until
// forget_unpinned_affinity() (the runtime's end, after main called leave_main_core itself).
// A runtime thread that is not a worker (the MPI thread, the progress thread, the watchdog,
// the node agent) calls leave_main_core() first: it is started by main and inherits main's
// one core, and would compete with main for it while other cores idle. Without a
// remembered mask the call changes nothing.
void remember_unpinned_affinity();
void forget_unpinned_affinity();
void leave_main_core();

}  // namespace hytask::core
