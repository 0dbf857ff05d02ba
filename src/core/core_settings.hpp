// The knobs the core reads: nothing of MPI (the MPI layer has comm/comm_settings.hpp). The
// runtime builds both from the resolved hytask::settings (hytask/config.hpp), where every
// knob is documented.
#pragma once

#include <cstddef>

#include "hytask/config.hpp"

namespace hytask::core {

struct core_settings {
  unsigned threads = 1;                      // HYTASK_THREADS
  std::size_t max_tasks = 0;                 // HYTASK_MAX_TASKS
  std::size_t stack_size = 0;                // HYTASK_STACK_SIZE
  unsigned spin_us = 0;                      // HYTASK_SPIN_US
  pin_policy pin = pin_policy::none;         // HYTASK_PIN
  bool comm_priority = true;                 // HYTASK_COMM_PRIORITY: the communication class
  std::size_t rename_max_bytes = 0;          // HYTASK_RENAME_MAX_BYTES: memory of versions
  hytask::graph_placement graph_placement = hytask::graph_placement::automatic;  // HYTASK_GRAPH_PLACEMENT
  // Not a knob: the node runs more worker threads than it has CPUs (counted by the MPI layer
  // at start), so an idle worker with operations pending sleeps between polls at once.
  bool crowded_node = false;

  static core_settings from(const hytask::settings& s) {
    return core_settings{.threads = s.threads,
                         .max_tasks = s.max_tasks,
                         .stack_size = s.stack_size,
                         .spin_us = s.spin_us,
                         .pin = s.pin,
                         .comm_priority = s.comm_priority,
                         .rename_max_bytes = s.rename_max_bytes,
                         .graph_placement = s.graph_placement};
  }
};

}  // namespace hytask::core
