// The node table (seed 002): one shared-memory segment per node with a row per local rank,
// through which one agent per node (node/agent.hpp) decides which rank's progress thread to
// wake. Ranks of a node find each other with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); the
// node's first rank creates the segment (shm_open), the others map it, and the name is
// unlinked once all have: nothing is left in /dev/shm, even if a rank crashes later. Each rank
// keeps its descriptor open, through which hytask-info --node (node/node_report.hpp) reads
// the table of a running job.
//
// Only lock-free atomics live in the segment; the futex words are waited on with the
// process-shared futex calls.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace hytask::node {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::uint32_t>::is_always_lock_free);

enum row_state : std::uint32_t { row_empty = 0, row_attached = 1, row_detached = 2 };

struct alignas(128) node_row {
  std::atomic<std::uint32_t> wake{0};     // futex: the rank's progress thread sleeps on it
  std::atomic<std::uint32_t> pending{0};  // MPI operations the rank has pending
  std::atomic<std::uint32_t> in_mpi{0};   // 1 while one of the rank's threads polls MPI
  std::atomic<std::uint32_t> state{row_empty};
  std::atomic<std::int32_t> pid{0};
  std::atomic<std::uint32_t> progressed{0};  // the rank's last woken poll completed something
  std::atomic<std::uint64_t> agent_wakes{0};  // wakes sent by the agent (the thread compares)
  std::atomic<std::uint64_t> served{0};       // agent_wakes when the rank's thread last looked
  // Counters (seed 002), written by the agent (wakes, suppressed) and the rank (the rest).
  std::atomic<std::uint64_t> wakes{0};       // the agent woke the rank's thread
  std::atomic<std::uint64_t> suppressed{0};  // a wake was due but the rank was inside MPI
  std::atomic<std::uint64_t> futile{0};      // woken, the rank found nothing to progress
  std::atomic<std::uint64_t> completed{0};   // woken, its poll completed an operation
  std::atomic<std::uint64_t> unserved{0};    // a wake was due but the last one was not taken yet
  std::atomic<std::uint64_t> agent_polls{0};  // the agent polled the rank itself (its own rank)
  std::atomic<std::uint64_t> engine_polls{0};  // every poll of the rank's engine
  std::atomic<std::uint64_t> woken_polls{0};   // those made by its woken thread
  std::atomic<std::int64_t> woken_at_ns{0};    // when the agent last woke it (steady clock)
  std::atomic<std::int64_t> woken_poll_ns{0};  // how long its last woken poll took
  int world_rank = -1;
};

struct alignas(128) node_header {
  std::atomic<std::uint32_t> agent_word{0};    // futex: the agent sleeps on it
  std::atomic<std::uint32_t> agent_parked{0};  // the agent sleeps until a rank has work
  std::atomic<std::int32_t> agent_pid{0};
  std::atomic<std::uint32_t> agent_running{0};
  std::atomic<std::uint64_t> agent_rounds{0};  // heartbeat: rounds of the agent's loop
  std::atomic<std::uint64_t> agent_cpu_ns{0};  // CPU time the agent thread used
  std::uint32_t local_size = 0;
};

class node_table {
 public:
  // Collective over `world`: every rank calls it. Throws usage_error on failure.
  explicit node_table(MPI_Comm world);
  ~node_table();
  node_table(const node_table&) = delete;
  node_table& operator=(const node_table&) = delete;

  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  node_header& header() noexcept { return *header_; }
  node_row& row(int local) noexcept { return rows_[local]; }
  node_row& mine() noexcept { return rows_[local_rank_]; }
  const node_header& header() const noexcept { return *header_; }
  const node_row& mine() const noexcept { return rows_[local_rank_]; }

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  node_header* header_ = nullptr;
  node_row* rows_ = nullptr;
  int local_rank_ = 0, local_size_ = 1;
  int fd_ = -1;
};

}  // namespace hytask::node
