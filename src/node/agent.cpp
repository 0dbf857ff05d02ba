#include "node/agent.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <vector>

#include "comm/period_ceiling.hpp"
#include "comm/polling_period.hpp"
#include "platform/clock.hpp"
#include "platform/futex.hpp"
#include "platform/messages.hpp"
#include "platform/thread_name.hpp"
#include "platform/topology.hpp"
#include "trace/trace.hpp"

namespace hytask::node {
namespace {

using mpi::detail::period_ceiling;

std::int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Polls the rank made by itself (its workers, its waits), not woken by the agent.
std::uint64_t own_polls(const node_row& row) {
  return row.engine_polls.load(std::memory_order_relaxed) -
         row.woken_polls.load(std::memory_order_relaxed);
}

constexpr std::int64_t liveness_ns = 100'000'000;  // how often dead ranks are looked for

}  // namespace

void notify_agent(node_header& h) noexcept {
  if (h.agent_parked.load(std::memory_order_seq_cst) != 0) {
    h.agent_word.fetch_add(1, std::memory_order_release);
    core::futex_wake(h.agent_word, 1, true);
  }
}

agent::agent(node_table& table, std::int64_t min_ns, std::int64_t max_ns, self_poll poll,
             void* poll_ctx)
    : table_(table), min_ns_(min_ns), max_ns_(max_ns), poll_(poll), poll_ctx_(poll_ctx) {
  node_header& h = table_.header();
  h.agent_pid.store(static_cast<std::int32_t>(getpid()), std::memory_order_relaxed);
  h.agent_running.store(1, std::memory_order_release);
  thread_ = std::thread([this] {
    core::leave_main_core();
    run();
  });
}

bool agent::poll_own_rank(node_row& row, std::uint64_t& sent) {
  std::lock_guard<std::mutex> lock(poll_mutex_);
  if (!self_polls_) return false;
  // Counted as a wake taken at once (the poll counts itself in the row, as a woken one). The
  // rank's thread is not told (agent_wakes stays): it would poll again.
  row.wakes.fetch_add(1, std::memory_order_relaxed);
  row.agent_polls.fetch_add(1, std::memory_order_relaxed);
  row.woken_at_ns.store(core::now_ns(), std::memory_order_relaxed);
  sent = row.served.load(std::memory_order_acquire);
  poll_(poll_ctx_);
  return true;
}

void agent::stop_self_polls() {
  std::lock_guard<std::mutex> lock(poll_mutex_);
  self_polls_ = false;
}

void agent::stop(std::int64_t linger_ns) {
  if (!thread_.joinable()) return;
  const std::int64_t until = core::now_ns() + linger_ns;
  for (;;) {
    bool others = false;
    for (int r = 0; r < table_.local_size(); ++r) {
      if (r == table_.local_rank()) continue;
      node_row& row = table_.row(r);
      if (row.state.load(std::memory_order_acquire) == row_attached) others = true;
    }
    if (!others || core::now_ns() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  stop_.store(true, std::memory_order_release);
  node_header& h = table_.header();
  h.agent_word.fetch_add(1, std::memory_order_release);
  core::futex_wake(h.agent_word, 1, true);
  thread_.join();
  h.agent_running.store(0, std::memory_order_release);
}

void agent::run() {
  core::name_this_thread("hytask-agent");
  bool named = false;  // the trace may start after the agent (it starts with MPI)
  node_header& h = table_.header();
  const int n = table_.local_size();
  struct view {
    mpi::detail::polling_period period;
    mpi::detail::period_ceiling ceiling;  // the longest period, from the rank's exchanges
    std::int64_t due = 0;          // next look; 0: the rank had nothing pending
    std::uint64_t polls_seen = 0;  // the rank's own polls at the last look
    bool woke = false;             // the last look woke it (or polled for it)
    std::uint64_t sent = 0;        // agent_wakes after the last wake
    bool reported = false;         // its death was reported
  };
  std::vector<view> views(static_cast<std::size_t>(n), view{{min_ns_, max_ns_}, period_ceiling(max_ns_)});
  std::int64_t next_liveness = core::now_ns() + liveness_ns;
  core::set_timer_slack(core::poll_timer_slack_ns);
  while (!stop_.load(std::memory_order_acquire)) {
    const std::uint32_t seen = h.agent_word.load(std::memory_order_acquire);
    h.agent_rounds.fetch_add(1, std::memory_order_relaxed);
    if (!named && trace::enabled()) {
      trace::set_thread(1001, "node agent");
      named = true;
    }
    std::int64_t now = core::now_ns();
    if (now >= next_liveness) {
      next_liveness = now + liveness_ns;
      for (int r = 0; r < n; ++r) {
        node_row& row = table_.row(r);
        const std::int32_t pid = row.pid.load(std::memory_order_relaxed);
        if (row.state.load(std::memory_order_acquire) != row_attached || pid <= 0) continue;
        if (kill(pid, 0) != 0 && errno == ESRCH) {
          row.state.store(row_detached, std::memory_order_release);
          view& v = views[static_cast<std::size_t>(r)];
          if (!v.reported)
            core::messagef(core::verbosity::warning,
                           "node agent: rank %d (pid %d) on this node ended without shutting "
                           "its runtime down; the agent no longer serves it",
                           row.world_rank, static_cast<int>(pid));
          v.reported = true;
        }
      }
    }
    bool any = false;
    std::int64_t next = now + liveness_ns;
    for (int r = 0; r < n; ++r) {
      node_row& row = table_.row(r);
      view& v = views[static_cast<std::size_t>(r)];
      if (row.state.load(std::memory_order_acquire) != row_attached ||
          row.pending.load(std::memory_order_acquire) == 0) {
        if (v.due != 0) v.ceiling.ended(now);  // its exchange is over
        v.period.reset();
        v.due = 0;
        v.woke = false;
        continue;
      }
      any = true;
      if (v.due == 0) {  // operations appeared: look after the shortest period
        v.ceiling.started(now);
        v.period.set_max(v.ceiling.value());
        v.due = now + v.period.current();
        v.polls_seen = own_polls(row);
      } else if (now >= v.due) {
        if (v.woke && row.served.load(std::memory_order_acquire) != v.sent) {
          // Its thread has not run since the last wake (its core is busy): a second wake
          // would find the first one's poll still to come. Look again a period later.
          row.unserved.fetch_add(1, std::memory_order_relaxed);
          v.due = now + v.period.current();
          next = std::min(next, v.due);
          continue;
        }
        if (v.woke)
          v.period.after(row.progressed.load(std::memory_order_relaxed)
                             ? core::poll_result::progressed
                             : core::poll_result::pending);
        v.woke = false;
        const std::uint64_t polls = own_polls(row);
        if (row.in_mpi.load(std::memory_order_seq_cst) != 0) {
          row.suppressed.fetch_add(1, std::memory_order_relaxed);  // inside MPI: not now
          if (trace::enabled())
            trace::instant("node wake suppressed", "node", trace::now(), 0, {"rank", row.world_rank});
          v.period.after(core::poll_result::pending);  // and it progresses by itself
        } else if (polls != v.polls_seen) {
          v.period.after(core::poll_result::pending);  // it polls by itself: look less often
        } else if (poll_ != nullptr && r == table_.local_rank() && poll_own_rank(row, v.sent)) {
          v.woke = true;
        } else {
          row.wakes.fetch_add(1, std::memory_order_relaxed);
          row.woken_at_ns.store(core::now_ns(), std::memory_order_relaxed);
          v.sent = row.agent_wakes.fetch_add(1, std::memory_order_release) + 1;
          row.wake.fetch_add(1, std::memory_order_release);
          core::futex_wake(row.wake, 1, true);
          v.woke = true;
          if (trace::enabled())
            trace::instant("node wake", "node", trace::now(), 0, {"rank", row.world_rank});
        }
        v.polls_seen = polls;
        v.due = now + v.period.current();
      }
      next = std::min(next, v.due);
    }
    h.agent_cpu_ns.store(static_cast<std::uint64_t>(thread_cpu_ns()), std::memory_order_relaxed);
    if (!any) {
      // Nothing pending anywhere: park (announce, then look again, against a rank's
      // increment-then-check in notify_agent).
      h.agent_parked.store(1, std::memory_order_seq_cst);
      bool work = false;
      for (int r = 0; r < n && !work; ++r)
        work = table_.row(r).pending.load(std::memory_order_seq_cst) != 0;
      if (!work) core::futex_wait(h.agent_word, seen, liveness_ns, true);
      h.agent_parked.store(0, std::memory_order_relaxed);
      continue;
    }
    now = core::now_ns();
    if (next > now) core::futex_wait(h.agent_word, seen, static_cast<long>(next - now), true);
  }
}

}  // namespace hytask::node
