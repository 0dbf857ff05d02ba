// The rank hook of the library's messages (message_rank.hpp).
#include "comm/message_rank.hpp"

#include <atomic>
#include <cstdlib>

#include "platform/messages.hpp"

namespace hytask::mpi::detail {
namespace {

std::atomic<int> g_world_rank{-1};

// No MPI call here: a message may come from any thread, in any access mode, and before
// MPI_Init or after MPI_Finalize.
int job_rank() noexcept {
  if (const int r = g_world_rank.load(std::memory_order_relaxed); r >= 0) return r;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return -1;
}

}  // namespace

void install_message_rank() noexcept { core::set_message_rank_source(&job_rank); }

void note_message_rank(int rank) noexcept {
  g_world_rank.store(rank, std::memory_order_relaxed);
  install_message_rank();
}

}  // namespace hytask::mpi::detail
