// The node agent (seed 002's helper, without its kernel module): one thread per node, in the
// node's first rank, that decides whose progress thread to wake. It looks only at the node
// table (node/node_table.hpp) and never calls MPI:
//   - only a rank with pending operations is woken; while no rank has any, the agent sleeps
//     on its futex word until a rank's count goes from zero (it spends nothing then);
//   - a rank whose own threads are inside MPI is not woken (seed 002's optimisations 1 and
//     2: the wake is counted as suppressed and looked at again a period later), nor one that
//     polled by itself since the agent's last look (its workers are progressing it);
//   - each rank has its own adaptive period (comm/polling_period.hpp, seed 001's and TAMPI's
//     slow start): halved when the woken poll completed something, doubled when not, within
//     HYTASK_PROGRESS_MIN_US..MAX_US;
//   - a rank whose process is gone (it crashed or exited without detaching) is skipped, and
//     reported once: it cannot hang the agent.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "node/node_table.hpp"

namespace hytask::node {

class agent {
 public:
  agent(node_table& table, std::int64_t min_ns, std::int64_t max_ns);
  // Stops the thread once every other rank of the node has detached or has nothing
  // pending (at most `linger_ns`), so that ranks finishing later keep their progress.
  void stop(std::int64_t linger_ns = 2'000'000'000);
  ~agent() { stop(0); }
  agent(const agent&) = delete;
  agent& operator=(const agent&) = delete;

 private:
  void run();
  node_table& table_;
  const std::int64_t min_ns_, max_ns_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Wakes the agent if it sleeps with nothing pending; called by a rank after its pending
// count went up (its increment, then this check: no wake is lost).
void notify_agent(node_header& h) noexcept;

}  // namespace hytask::node
