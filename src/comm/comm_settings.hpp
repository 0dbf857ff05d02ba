// The knobs the MPI layer reads (the core's are in core/core_settings.hpp). The runtime
// builds both from the resolved hytask::settings (hytask/config.hpp), where every knob is
// documented.
#pragma once

#include <string>

#include "hytask/config.hpp"

namespace hytask::mpi::detail {

struct comm_settings {
  mpi_use mpi = mpi_use::automatic;                          // HYTASK_MPI
  hytask::mpi_mode mpi_mode = hytask::mpi_mode::multiple;    // HYTASK_MPI_MODE
  progress_policy progress = progress_policy::workers;      // HYTASK_PROGRESS
  unsigned poll_every = 0;                                   // HYTASK_POLL_EVERY
  unsigned poll_us = 0;                                      // HYTASK_POLL_US
  unsigned backstop_us = 0;                                  // HYTASK_BACKSTOP_US
  unsigned progress_min_us = 0;                              // HYTASK_PROGRESS_MIN_US
  unsigned progress_max_us = 0;                              // HYTASK_PROGRESS_MAX_US
  bool comm_priority = true;                                 // HYTASK_COMM_PRIORITY
  bool node_stats = false;                                   // HYTASK_NODE_STATS
  unsigned watchdog_s = 0;                                   // HYTASK_WATCHDOG_S
  unsigned spin_us = 0;                                      // HYTASK_SPIN_US
  hytask::order_check order_check = hytask::order_check::warn;  // HYTASK_ORDER_CHECK
  unsigned threads = 1;                                      // HYTASK_THREADS (the node's census)
  std::string trace;                                         // HYTASK_TRACE: align the clocks,
                                                             // merge the ranks' timelines

  static comm_settings from(const hytask::settings& s) {
    return comm_settings{.mpi = s.mpi,
                         .mpi_mode = s.mpi_mode,
                         .progress = s.progress,
                         .poll_every = s.poll_every,
                         .poll_us = s.poll_us,
                         .backstop_us = s.backstop_us,
                         .progress_min_us = s.progress_min_us,
                         .progress_max_us = s.progress_max_us,
                         .comm_priority = s.comm_priority,
                         .node_stats = s.node_stats,
                         .watchdog_s = s.watchdog_s,
                         .spin_us = s.spin_us,
                         .order_check = s.order_check,
                         .threads = s.threads,
                         .trace = s.trace};
  }
};

}  // namespace hytask::mpi::detail
