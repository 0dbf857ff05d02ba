// One rank's side of seed 001's protocol (§3.3), free of MPI and of the task scheduler: it
// is driven by a host — the MPI runtime, or the in-process simulation of the tests — that
// moves its buffers, runs the matching rounds' collective and releases the tasks it gates.
//
// Discovery (one thread, the one that spawns): begin_task, which says whether the task must
// also wait for host.release(task), then add_access per global access. An access to
// another rank's location becomes an A record for its owner; one to this rank's, a node of
// the home chains. fence() closes the discovery phase; its A records leave in buffers of that
// round (messages.hpp), and the host ends the round once every rank's buffers of it have
// been received and handled, telling the engine how many reached this rank (expect); then
// match(round) extends the home chains (phases in order). task_completed (any thread) sends
// C records and releases successors of other ranks; receive (any thread) takes every buffer.
// The engine keeps no array over the ranks: its boxes and counters exist for the peers it
// wrote to.
//
// Rules (seed 001 §3.4): no task of a phase runs before its phase is matched, except in a
// first phase (the program's, or the one after a wait_all), which has no predecessors on
// other ranks; a remote access also waits for the owner's B record. wait_all drains: once
// this rank's tasks have completed it sends no more C records; drain() sends each rank it
// sent C buffers to since the last drain their count (a D record, in a buffer of the drain
// round), and once the host has ended that round (expect_drain: the D buffers this rank
// handled) drained() says when the C buffers they count are in. B records need no count,
// each is awaited by a task. reset() then starts a first phase again.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "global/home.hpp"
#include "global/messages.hpp"
#include "global/task_record.hpp"

namespace hytask::global::detail {

class engine_host {
 public:
  virtual ~engine_host() = default;
  // Delivers buf to rank dest's engine (receive). Called without the engine's lock, from
  // whichever thread caused the message; one thread's buffers to one rank in order.
  virtual void send(int dest, std::vector<std::byte> buf) = 0;
  // The gate of a task that begin_task said is gated has opened. `inherited`: flag_cancelled
  // / flag_failed when a predecessor on another rank was cancelled or failed (the task is
  // then skipped, as a local successor of such a task is).
  virtual void release(void* task, std::uint16_t inherited) = 0;
  // Matching gave a task of this rank, not completed, a successor on another rank: it
  // communicates (seed 001 L1292). Called under the engine's lock, so the task is alive.
  virtual void remote_successor(void* /*task*/) {}
  // A phase was matched: `tasks` gated tasks of it no longer wait for this rank's discovery
  // (the host set them aside from the throttle's count while they did).
  virtual void phase_matched(std::size_t /*tasks*/) {}
  // A copyin access of rank dest (its id) to location key of this rank was released: send the
  // location's bytes, then call engine::push_sent. Called without the engine's lock.
  virtual void push(int /*dest*/, std::uint64_t /*id*/, std::uint64_t /*key*/) {}
  // Names a location of this rank in error messages ("element 17 of global_array 2").
  virtual std::string describe(std::uint64_t key) const = 0;
};

struct engine_stats {
  std::uint64_t announces_sent = 0, releases_sent = 0, completions_sent = 0, pushes = 0;
  std::uint64_t buffers_sent = 0, buffers_received = 0;
  std::size_t records_alive = 0, nodes_alive = 0, chains_alive = 0;
};

class engine {
 public:
  // max_records: records per buffer (the receiver's buffer size).
  engine(int rank, int nranks, engine_host& host, std::size_t max_records = 2048);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return nranks_; }
  // The discovery phase (any thread may ask).
  std::uint32_t phase() const noexcept { return phase_.load(std::memory_order_acquire); }
  std::uint32_t matched() const;                             // phases below are matched
  // Phases from the oldest one not matched or with a task not completed to the discovery
  // phase: the window of active phases (seed 001 §5.2.1) bounds it.
  std::uint32_t active_phases() const;
  // The conflicts matching found since the last call (home::take_conflicts).
  std::vector<std::string> take_conflicts();

  // A task of the discovery phase with global accesses, before its first one; `gated`: it
  // must also wait for host.release(task) (one external dependency, decided here because
  // accesses are declared one at a time).
  task_record* begin_task(void* task, bool& gated);
  // Returns the access's id when the location is another rank's (0 for this rank's). push: a
  // copyin, whose data the owner sends when it releases the access.
  std::uint64_t add_access(task_record* t, location where, dep_kind k, bool push = false);
  // The data of a copyin access of rank `accessor` has been sent (host.push).
  void push_sent(int accessor, std::uint64_t id);
  // t's task completed; `ended`: flag_cancelled, flag_failed or 0 (its C records say so).
  void task_completed(task_record* t, std::uint16_t ended);

  // Closes the discovery phase (its A buffers leave); returns its round. Buffers of round
  // R carry R in their header (messages.hpp: round_key(R, epoch()) names it).
  std::uint32_t fence();
  // Round `round` has ended: every rank's buffers of it were handled, `buffers` of them by
  // this rank (a check: the engine counted them too).
  void expect(std::uint32_t round, std::uint64_t buffers);
  bool round_complete(std::uint32_t round) const;
  void match(std::uint32_t round);  // round == matched(), round_complete(round)
  // wait_all calls completed (the epoch buffers carry).
  std::uint32_t epoch() const;

  void receive(int source, std::span<const std::byte> buf);

  // Once this rank's tasks are done: D buffers (round drain_round) to the ranks this rank
  // sent C buffers to since the last drain; returns how many were sent.
  std::size_t drain();
  // The drain round has ended: `buffers` D buffers reached this rank.
  void expect_drain(std::uint64_t buffers);
  bool drained() const;  // and the C buffers they count have been taken
  void reset();

  engine_stats stats() const;

 private:
  struct round_state {
    bool expected = false;
    std::uint64_t want = 0, got = 0;
  };
  using outgoing = std::vector<std::pair<int, std::vector<std::byte>>>;  // (rank, buffer)
  // What an event makes the engine do once it has let go of its lock.
  struct actions {
    outgoing out;
    std::vector<std::pair<void*, std::uint16_t>> ready;  // a task and what it inherited
    std::vector<push_order> pushes;
  };
  void take(int source, const buffer_header& h, const std::vector<record>& recs, actions& a);
  // Record boxes of the peers this rank has written to (not one per rank of the job).
  using peer_boxes = std::unordered_map<int, outbox>;
  // Puts rec in boxes[rank] (b_ or c_) and remembers that rank has records to flush.
  void stage(peer_boxes& boxes, int rank, const record& rec);
  void flush_bc(outgoing& out);
  void act(effects& fx, actions& a);
  void deliver(actions& a);
  std::size_t live_tasks() const;  // under mu_

  const int rank_, nranks_;
  engine_host& host_;
  const std::size_t max_records_;

  mutable std::mutex mu_;
  home home_;
  std::atomic<std::uint32_t> phase_{0};  // written by discovery, under mu_
  std::uint32_t matched_ = 0;      // next phase to match
  std::uint32_t first_ = 0;        // the current first phase
  std::uint64_t seq_ = 0;          // discovery order of accesses
  std::uint64_t next_id_ = 1;      // names of remote accesses
  std::uint32_t epoch_ = 0;        // wait_all drains completed
  peer_boxes announce_;            // A records of the discovery phase, per owner
  peer_boxes b_;                   // B records, per rank
  peer_boxes c_;                   // C records, per rank
  // C buffers since the last drain, per rank written to (not one per rank of the job).
  std::unordered_map<int, std::uint64_t> c_sent_;
  std::vector<int> staged_ranks_;  // ranks whose B or C box got records since the last flush
  std::map<std::uint32_t, round_state> rounds_;
  std::map<std::uint32_t, std::vector<task_record*>> gated_;  // held by their phase's matching
  std::unordered_map<std::uint64_t, task_record*> awaiting_b_;
  outgoing stashed_;  // received from ranks already in the next epoch
  std::uint64_t c_received_ = 0, c_want_ = 0;  // C buffers taken, and counted by D records
  std::uint64_t d_received_ = 0, d_want_ = 0;  // D buffers taken, and the drain round's count
  bool drain_expected_ = false;
  std::map<std::uint32_t, std::size_t> live_;  // tasks not completed, per phase
  engine_stats stats_;
};

}  // namespace hytask::global::detail
