// Channels (hytask/comm/ordering.hpp): a task declares the channels it posts on, an inout
// access on each channel's token, so that tasks posting on one channel post in spawn order.
#include <mpi.h>

#include "comm/api_common.hpp"
#include "comm/channels.hpp"
#include "hytask/comm/ordering.hpp"
#include "hytask/core/spawn.hpp"

namespace hytask::mpi {

using detail::sys;

void channel_access::apply(hytask::detail::spawn_context& ctx) const {
  ctx.region(token, bytes, access_mode::inout);
  if (detail::comm_system::instance()->comm_priority()) ctx.raise_priority();
}

channel_access send_channel(int dest, int tag, MPI_Comm comm) {
  sys("send_channel");
  return {detail::declare_channel(comm, dest, tag, false), 1};
}

channel_access recv_channel(int source, int tag, MPI_Comm comm) {
  sys("recv_channel");
  return {detail::declare_channel(comm, source, tag, false) + 1, 1};
}

channel_access channel(int peer, int tag, MPI_Comm comm) {
  sys("channel");
  return {detail::declare_channel(comm, peer, tag, false), 2};
}

channel_access collective(MPI_Comm comm) {
  sys("collective");
  return {detail::declare_channel(comm, -1, -1, true), 1};
}

}  // namespace hytask::mpi
