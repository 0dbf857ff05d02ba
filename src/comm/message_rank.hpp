// The rank that prefixes the library's messages (platform/messages.hpp). The platform knows
// nothing of MPI, so the MPI layer installs the hook that tells it: MPI_COMM_WORLD's rank once
// MPI is up, before that the launcher's (its environment), otherwise none.
#pragma once

namespace hytask::mpi::detail {

// Installs the hook; the runtime calls it first thing, so that its own errors carry the rank.
void install_message_rank() noexcept;
// MPI_COMM_WORLD's rank, once MPI is initialised or adopted.
void note_message_rank(int rank) noexcept;

}  // namespace hytask::mpi::detail
