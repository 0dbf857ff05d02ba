// Ordering MPI operations posted by tasks.
//
// MPI matches messages on a (communicator, peer, tag) channel in the order they are posted,
// and requires collectives on a communicator in the same order on every rank. Tasks run in
// whatever order the scheduler finds; so when several tasks post on the same channel, or call
// collectives on the same communicator, they declare it:
//
//   for (int k = 0; k < n; ++k)
//     hytask::spawn([&, k] { hytask::mpi::recv(std::span(buf[k]), left, 7); },
//                   hytask::mpi::channel(left, 7), hytask::out(buf[k]));
//
// Tasks that declare the same channel (or collective(comm)) post their operations on it in
// spawn order: each starts after the previous one has completed. Such tasks also run in the
// high priority class when HYTASK_COMM_PRIORITY=1. Operations posted outside tasks (from
// main), and operations posted by one task, keep program order without any declaration.
// When two tasks that did not declare a channel have operations pending on it at once,
// hytask prints a warning naming the channel and the tasks, once per channel.
#pragma once

#include <mpi.h>

#include "hytask/comm/point_to_point.hpp"
#include "hytask/core/access.hpp"

namespace hytask::mpi {

struct channel_access {
  const void* token;
  void apply(hytask::detail::spawn_context& ctx) const;
};

// Point-to-point operations on (comm, peer, tag) — peer being the destination of sends and
// the source of receives.
channel_access channel(int peer, int tag, MPI_Comm comm = comm_world());
// Collectives on comm.
channel_access collective(MPI_Comm comm = comm_world());

}  // namespace hytask::mpi
