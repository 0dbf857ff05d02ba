// HYTASK_PROGRESS=node (seed 002): the rank's progress thread (multiple mode; the MPI thread
// in funneled mode) sleeps on its row's wake word in the node table and polls once each time
// the node agent (node/agent.hpp) wakes it. Busy workers do not poll on their own schedule
// (the agent decides when this rank needs a poll); idle workers still do. The node's first
// rank runs the agent. Should the agent be gone (its rank ended first), the thread falls
// back to polling on its own adaptive period, as HYTASK_PROGRESS=thread does.
#include <cinttypes>
#include <cstdio>
#include <memory>

#include "comm/comm.hpp"
#include "comm/polling_period.hpp"
#include "comm/progress_policy.hpp"
#include "comm/progress_registry.hpp"
#include "hytask/errors.hpp"
#include "node/agent.hpp"
#include "node/node_table.hpp"
#include "node/progress_node.hpp"
#include "platform/clock.hpp"
#include "platform/messages.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {
namespace {

class progress_node final : public progress_policy_impl {
 public:
  explicit progress_node(comm_system& c)
      : progress_policy_impl(c),
        period_(static_cast<std::int64_t>(c.config().progress_min_us) * 1000,
                static_cast<std::int64_t>(c.config().progress_max_us) * 1000) {
    if (c.mode() == hytask::mpi_mode::masteronly)
      throw usage_error(
          "HYTASK_PROGRESS=node needs a thread that may call MPI when the node agent wakes it, "
          "but HYTASK_MPI_MODE=masteronly lets only main call MPI: use HYTASK_MPI_MODE=multiple "
          "or funneled, or another HYTASK_PROGRESS");
  }

  ~progress_node() override {
    if (agent_) agent_->stop();
    if (table_ && c_.config().node_stats) print_stats();
  }

  void mpi_ready(MPI_Comm world) override {
    table_ = std::make_unique<node::node_table>(world);
    node::node_row& me = table_->mine();
    c_.eng().mirror(&me.pending, &me.in_mpi, &me.engine_polls);
    // In multiple mode any thread of this process may call MPI: the agent polls this rank
    // itself. In funneled mode only the MPI thread may: the agent wakes it like the others'.
    const bool self = c_.mode() == hytask::mpi_mode::multiple;
    if (table_->local_rank() == 0)
      agent_ = std::make_unique<node::agent>(*table_, period_.min(), period_.max(),
                                             self ? &agent_poll : nullptr, this);
  }

  void stopping() override {
    if (agent_) agent_->stop_self_polls();
  }

  std::atomic<std::uint32_t>* shared_word() override { return table_ ? &table_->mine().wake : nullptr; }
  bool wants_thread() const override { return true; }

  long round(bool asked) override {
    node::node_row& me = table_->mine();
    const std::uint64_t sent = me.agent_wakes.load(std::memory_order_acquire);
    const bool woken = sent != seen_wakes_;
    seen_wakes_ = sent;
    const bool alone = !agent_alive();
    if (!woken && !asked && !alone) return -1;
    if (woken) me.served.store(sent, std::memory_order_release);
    const core::poll_result r = woken ? woken_poll() : c_.eng().poll();
    if (alone && r != core::poll_result::nothing_pending) return static_cast<long>(period_.after(r));
    return -1;
  }

  // Parked with operations pending: the agent will wake it; look at the agent again now
  // and then in case it is gone.
  long park_timeout() override { return agent_alive() ? 100'000'000L : static_cast<long>(period_.current()); }

  // A poll the agent asked for (its wake, or its own call for the agent's rank), counted in
  // the row: the agent reads whether it completed something and how long it took.
  core::poll_result woken_poll() {
    node::node_row& me = table_->mine();
    const std::int64_t t0 = core::now_ns();
    const core::poll_result r = c_.eng().poll();
    const std::int64_t t1 = core::now_ns();
    me.woken_poll_ns.store(t1 - t0, std::memory_order_relaxed);
    if (trace::enabled())
      trace::instant("woken poll", "node", trace::now(), 0,
                     {"late_us", (t0 - me.woken_at_ns.load(std::memory_order_relaxed)) / 1000},
                     {"poll_us", (t1 - t0) / 1000});
    me.woken_polls.fetch_add(1, std::memory_order_relaxed);
    if (r == core::poll_result::nothing_pending) me.futile.fetch_add(1, std::memory_order_relaxed);
    if (r == core::poll_result::progressed) me.completed.fetch_add(1, std::memory_order_relaxed);
    me.progressed.store(r == core::poll_result::progressed ? 1 : 0, std::memory_order_relaxed);
    return r;
  }
  static core::poll_result agent_poll(void* self) {
    return static_cast<progress_node*>(self)->woken_poll();
  }

  void registered() override { node::notify_agent(table_->header()); }

  void counters(progress_counters& out) const override {
    if (!table_) return;
    const node::node_row& me = table_->mine();
    out.wakes = me.wakes.load(std::memory_order_relaxed);
    out.futile = me.futile.load(std::memory_order_relaxed);
    out.completed = me.completed.load(std::memory_order_relaxed);
    out.suppressed = me.suppressed.load(std::memory_order_relaxed);
    out.agent_polls = me.agent_polls.load(std::memory_order_relaxed);
    if (agent_) out.agent_cpu_ns = table_->header().agent_cpu_ns.load(std::memory_order_relaxed);
    out.local_rank = table_->local_rank();
    out.local_size = table_->local_size();
  }

 private:
  bool agent_alive() const {
    return table_->header().agent_running.load(std::memory_order_acquire) != 0;
  }

  // One line per rank, written at once, so that the reports of ranks sharing a terminal or
  // a pipe do not interleave mid-line.
  void print_stats() {
    node::node_row& me = table_->mine();
    const std::uint64_t wakes = me.wakes.load(), futile = me.futile.load();
    char agent[64] = "";
    if (table_->local_rank() == 0)
      std::snprintf(agent, sizeof agent, "; agent CPU %.3f ms",
                    static_cast<double>(table_->header().agent_cpu_ns.load()) / 1e6);
    core::reportf("node: local %d of %d: %" PRIu64 " wakes, %" PRIu64
                  " futile (%.1f %%), %" PRIu64 " suppressed (inside MPI), %" PRIu64
                  " completing; %" PRIu64 " polls by the rank itself%s",
                  table_->local_rank(), table_->local_size(), wakes, futile,
                 wakes ? 100.0 * static_cast<double>(futile) / static_cast<double>(wakes) : 0.0,
                 me.suppressed.load(), me.completed.load(),
                 me.engine_polls.load() - me.woken_polls.load(), agent);
  }

  polling_period period_;
  std::unique_ptr<node::node_table> table_;
  std::unique_ptr<node::agent> agent_;
  std::uint64_t seen_wakes_ = 0;
};

std::unique_ptr<progress_policy_impl> make_progress_node(comm_system& c) {
  return std::make_unique<progress_node>(c);
}

}  // namespace
}  // namespace hytask::mpi::detail

namespace hytask::node {

void register_progress_policy() noexcept {
  mpi::detail::register_progress_policy(hytask::progress_policy::node,
                                        &mpi::detail::make_progress_node);
}

}  // namespace hytask::node
