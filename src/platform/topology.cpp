#include "platform/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>

#include <mutex>
#include <sched.h>
#include <sstream>
#include <thread>

namespace hytask::core {
namespace {

topology detect() {
  topology t;
  hwloc_topology_t h;
  if (hwloc_topology_init(&h) != 0 || hwloc_topology_load(h) != 0) {
    unsigned n = std::thread::hardware_concurrency();
    t.cores = t.pus = n ? n : 1;
    for (unsigned i = 0; i < t.cores; ++i) {
      t.core_pu.push_back(static_cast<int>(i));
      t.core_package.push_back(0);
      t.allowed_pus.push_back(static_cast<int>(i));
    }
    t.description = std::to_string(t.cores) + " cores (hwloc unavailable)";
    return t;
  }
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(h, allowed, HWLOC_CPUBIND_PROCESS) != 0)
    hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(h));

  std::vector<int> packages_seen;
  int ncores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    hwloc_bitmap_t cs = hwloc_bitmap_alloc();
    hwloc_bitmap_and(cs, core->cpuset, allowed);
    int pu = hwloc_bitmap_first(cs);
    hwloc_bitmap_free(cs);
    if (pu < 0) continue;
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, core);
    int pkg_index = pkg ? static_cast<int>(pkg->logical_index) : 0;
    t.core_pu.push_back(pu);
    t.core_package.push_back(pkg_index);
    bool seen = false;
    for (int p : packages_seen) seen = seen || p == pkg_index;
    if (!seen) packages_seen.push_back(pkg_index);
  }
  if (t.core_pu.empty()) {  // no core objects (odd VMs): fall back to PUs
    int pu = -1;
    while ((pu = hwloc_bitmap_next(allowed, pu)) >= 0) {
      t.core_pu.push_back(pu);
      t.core_package.push_back(0);
    }
    if (t.core_pu.empty()) {
      t.core_pu.push_back(0);
      t.core_package.push_back(0);
    }
  }
  for (int pu = hwloc_bitmap_first(allowed); pu >= 0 && pu < (1 << 16);
       pu = hwloc_bitmap_next(allowed, pu))
    t.allowed_pus.push_back(pu);
  if (t.allowed_pus.empty()) t.allowed_pus.push_back(0);
  t.cores = static_cast<unsigned>(t.core_pu.size());
  t.pus = static_cast<unsigned>(std::max(1, hwloc_bitmap_weight(allowed)));
  t.packages = static_cast<unsigned>(std::max<std::size_t>(1, packages_seen.size()));
  int numa = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_NUMANODE);
  t.numa_nodes = static_cast<unsigned>(numa > 0 ? numa : 1);

  char* cpuset_text = nullptr;
  hwloc_bitmap_list_asprintf(&cpuset_text, allowed);
  std::ostringstream os;
  os << t.packages << (t.packages == 1 ? " package, " : " packages, ") << t.numa_nodes
     << (t.numa_nodes == 1 ? " NUMA node, " : " NUMA nodes, ") << t.cores
     << (t.cores == 1 ? " core, " : " cores, ") << t.pus
     << (t.pus == 1 ? " hardware thread" : " hardware threads") << " available (cpuset "
     << (cpuset_text ? cpuset_text : "?") << ")";
  t.description = os.str();
  std::free(cpuset_text);
  hwloc_bitmap_free(allowed);
  hwloc_topology_destroy(h);
  return t;
}

}  // namespace

const topology& topology::get() {
  static const topology t = detect();
  return t;
}

placement place_workers(const topology& topo, unsigned workers) {
  placement p;
  for (unsigned i = 0; i < workers; ++i) {
    std::size_t c = i % topo.core_pu.size();
    p.pu_of_worker.push_back(topo.core_pu[c]);
    p.package_of_worker.push_back(topo.core_package[c]);
  }
  return p;
}

std::vector<unsigned> steal_order(const std::vector<int>& package_of_worker, unsigned thief) {
  const auto n = static_cast<unsigned>(package_of_worker.size());
  std::vector<unsigned> order;
  for (int pass = 0; pass < 2; ++pass)
    for (unsigned k = 1; k < n; ++k) {
      unsigned v = (thief + k) % n;
      bool same = package_of_worker[v] == package_of_worker[thief];
      if (same == (pass == 0)) order.push_back(v);
    }
  return order;
}

bool pin_thread_to_pu(int pu) {
  if (pu < 0 || pu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(pu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

namespace {
std::mutex unpinned_mutex;
bool unpinned_valid = false;
cpu_set_t unpinned_set;
}  // namespace

void remember_unpinned_affinity() {
  std::lock_guard<std::mutex> lock(unpinned_mutex);
  CPU_ZERO(&unpinned_set);
  unpinned_valid = sched_getaffinity(0, sizeof unpinned_set, &unpinned_set) == 0;
}

void forget_unpinned_affinity() {
  std::lock_guard<std::mutex> lock(unpinned_mutex);
  unpinned_valid = false;
}

void leave_main_core() {
  std::lock_guard<std::mutex> lock(unpinned_mutex);
  if (unpinned_valid) sched_setaffinity(0, sizeof unpinned_set, &unpinned_set);
}

}  // namespace hytask::core
