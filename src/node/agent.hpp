// The node agent (seed 002's helper, without its kernel module): one thread per node, in the
// node's first rank, that decides whose progress thread to wake. It looks only at the node
// table (node/node_table.hpp), and calls MPI only through the poll function of its own rank:
//   - only a rank with pending operations is woken; while no rank has any, the agent sleeps
//     on its futex word until a rank's count goes from zero (it spends nothing then);
//   - a rank whose own threads are inside MPI is not woken (seed 002's optimisations 1 and
//     2: the wake is counted as suppressed and looked at again a period later), nor one that
//     polled by itself since the agent's last look (its workers are progressing it);
//   - each rank has its own adaptive period (comm/polling_period.hpp, seed 001's and TAMPI's
//     slow start): halved when the woken poll completed something, doubled when not, within
//     HYTASK_PROGRESS_MIN_US and a ceiling learnt from the rank's exchanges
//     (comm/period_ceiling.hpp: an eighth of their length, MAX_US to 4x MAX_US; over TCP a
//     long transfer's data waits in the socket buffers between polls, traced in
//     docs/design/node.md);
//   - a rank whose process is gone (it crashed or exited without detaching) is skipped, and
//     reported once: it cannot hang the agent;
//   - a rank whose thread has not yet taken the last wake is not woken again (a second wake
//     would cost a system call and find the first one's poll still to come);
//   - for its own rank, where that rank lets any thread call MPI (multiple mode), the agent
//     polls itself instead of waking the rank's thread: a process's threads may call MPI for
//     it, another process's cannot. That spares a context switch per poll for one rank of
//     the node, and with one rank per node the agent is that rank's progress thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "core/face.hpp"
#include "node/node_table.hpp"

namespace hytask::node {

class agent {
 public:
  // Polls the agent's own rank's MPI engine, as its woken thread would, counting the poll in
  // the rank's row: returns whether it completed something (progressed), found operations
  // still pending (pending), or nothing to do. Called on the agent's thread.
  using self_poll = core::poll_result (*)(void* ctx);

  // With `poll` set, the agent polls its own rank itself (above) instead of waking it.
  agent(node_table& table, std::int64_t min_ns, std::int64_t max_ns, self_poll poll = nullptr,
        void* poll_ctx = nullptr);
  // Stops the thread once every other rank of the node has detached or has nothing
  // pending (at most `linger_ns`), so that ranks finishing later keep their progress.
  void stop(std::int64_t linger_ns = 2'000'000'000);
  ~agent() { stop(0); }
  // From here on the agent wakes its own rank's thread instead of polling for it (MPI is about
  // to be finalised); returns once a poll under way has ended.
  void stop_self_polls();
  agent(const agent&) = delete;
  agent& operator=(const agent&) = delete;

 private:
  void run();
  bool poll_own_rank(node_row& row, std::uint64_t& sent);  // false: self-polls are over
  node_table& table_;
  const std::int64_t min_ns_, max_ns_;
  const self_poll poll_;
  void* const poll_ctx_;
  std::mutex poll_mutex_;    // held by the agent while it polls for its rank
  bool self_polls_ = true;   // guarded by poll_mutex_
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Wakes the agent if it sleeps with nothing pending; called by a rank after its pending
// count went up (its increment, then this check: no wake is lost).
void notify_agent(node_header& h) noexcept;

}  // namespace hytask::node
