// Ordering MPI operations posted by tasks.
//
// MPI matches the messages of a (communicator, peer, tag) channel in the order they are
// posted — sends to a peer among themselves, receives from a peer among themselves — and
// requires collectives on a communicator in the same order on every rank. Tasks run in
// whatever order the scheduler finds; so when several tasks post on the same channel, or
// call collectives on the same communicator, they declare it:
//
// ```cpp context=mpi
// for (int k = 0; k < n; ++k)
//   hytask::spawn([&, k] { hytask::mpi::recv(bufs[k], left, 7); },
//                 hytask::mpi::recv_channel(left, 7), hytask::out(bufs[k]));
// ```
//
// Tasks that declare the same channel direction (or collective(comm)) post their operations
// on it in spawn order: each starts after the previous one has completed. Sends and receives
// are separate directions: a task that receives from P and one that sends to P with the
// same tag stay independent, as they must (ordering them would deadlock a symmetric
// exchange). channel(peer, tag) declares both directions, for a task that does both. Such
// tasks also run in the high priority class when HYTASK_COMM_PRIORITY=1. Operations posted
// outside tasks (from main), and operations posted by one task, keep program order without
// any declaration. Posts by sibling tasks out of their spawn order are reported (a warning
// once per channel, or an error: HYTASK_ORDER_CHECK, docs/mpi.md "Ordering").
#pragma once

#include <mpi.h>

#include <cstddef>

#include "hytask/comm/point_to_point.hpp"
#include "hytask/core/access.hpp"

namespace hytask::mpi {

struct channel_access {
  const void* token;
  std::size_t bytes;
  void apply(hytask::detail::spawn_context& ctx) const;
};

// Sends to dest with tag on comm.
channel_access send_channel(int dest, int tag, MPI_Comm comm = comm_world());
// Receives (and probes) from source with tag on comm.
channel_access recv_channel(int source, int tag, MPI_Comm comm = comm_world());
// Both directions of (comm, peer, tag): for a task that sends to and receives from peer.
channel_access channel(int peer, int tag, MPI_Comm comm = comm_world());
// Collectives on comm.
channel_access collective(MPI_Comm comm = comm_world());

}  // namespace hytask::mpi
