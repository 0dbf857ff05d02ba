// One simulated rank (simulator.hpp): the host of a real global-dependency engine, with a
// model of the rest of hytask's runtime around it — main's discovery, the tracker, copyin
// transfer tasks, workers and their idle time, the progress policy, the transport's
// acknowledged rounds. Internal to hytask-sim.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "global/engine.hpp"
#include "program.hpp"
#include "simulator.hpp"

namespace hytask::sim::detail {

namespace gd = hytask::global::detail;

constexpr int transfer_kernel = -1;  // a copyin of another rank's location: post a receive
constexpr int copy_kernel = -2;      // a copyin of this rank's location: a memcpy
constexpr std::uint64_t control_bytes = 64;  // a rendezvous request or go-ahead

struct task {
  int kernel = 0;
  std::uint64_t bytes = 0;  // transfers and copies
  int pending = 1;          // the spawn bias, local predecessors, the engine's gate
  bool comm = false;        // communication class: another rank waits for it
  bool gated = false;
  bool started = false, posted = false, arrived = false;
  bool announced = false;  // a transfer: the owner's request to send (rendezvous) is here
  int owner = -1;          // a transfer: the rank that sends the data
  std::uint32_t phase = 0;
  std::uint64_t xfer = 0;  // a transfer: the access id that names the pushed data
  gd::task_record* rec = nullptr;
  std::vector<task*> succ;
  std::vector<std::pair<std::uint64_t, bool>> keys;  // (key, write) in the tracker
  double started_at = 0, remaining = 0;              // processor sharing: work left
};

struct tracker_entry {
  task* writer = nullptr;
  std::vector<task*> readers;
};

struct inbound {
  // rts: an owner's request to send a large tile (rendezvous); cts: the accessor's go-ahead;
  // piece: a part of a tile, not its last; more: the accessor took a piece
  enum class kind : std::uint8_t { buffer, data, ack, round_end, rts, cts, piece, more } k = kind::buffer;
  int source = -1;
  std::vector<std::byte> buf;
  std::uint64_t value = 0;  // data: the access id; ack, round_end: the round's key
  std::uint64_t count = 0;  // ack: buffers handled
};

struct decl {
  place where;
  bool write;
  bool push = false;
};

struct world;

struct rank_state final : gd::engine_host {
  rank_state(world& w, int r);
  world& w;
  const int r;
  gd::engine eng;
  generator<op> prog;

  std::unordered_map<std::uint64_t, tracker_entry> tracker;
  std::deque<task*> ready_comm, ready;
  std::unordered_map<std::uint64_t, task*> transfers;  // by access id
  std::unordered_map<std::uint64_t, std::uint64_t> copyins;              // buffer -> key, this phase
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> copyin_of;  // key -> buffers
  std::uint32_t copyin_phase = ~0u;
  std::vector<inbound> inbox;
  bool backstop_armed = false;
  std::map<std::uint32_t, std::uint64_t> round_results;  // ended rounds, not expected yet
  std::unordered_map<std::uint64_t, std::uint64_t> unacked;  // round key -> buffers sent, not acknowledged
  std::unordered_map<std::uint64_t, std::uint64_t> handled;  // round key -> buffers of it handled here
  std::unordered_map<std::uint64_t, bool> to_join;           // rounds closed here, not joined yet
  std::map<std::uint32_t, int> gated_by_phase;
  int waiting_data = 0;
  std::uint64_t outstanding = 0;

  struct worker {
    task* cur = nullptr;
    std::uint64_t version = 0;  // of its finish event
    bool idle = false;
    double idle_since = 0;
    idle_reason why = idle_reason::discovery;
  };
  std::vector<worker> workers;  // 0 is main
  enum class main_state { discovering, fence, wait_all, draining, done } ms = main_state::discovering;
  bool drain_expected = false;
  double done_at = 0;
  rank_result res;

  // engine_host
  void send(int dest, std::vector<std::byte> buf) override;
  void release(void* t, std::uint16_t inherited) override;
  void remote_successor(void* t) override;
  void push(int dest, std::uint64_t id, std::uint64_t key) override;
  // The data of access `id` leaves this rank for `dest` now.
  void send_data(int dest, std::uint64_t id, std::uint64_t bytes);
  void send_piece(int dest, std::uint64_t id, std::uint64_t left);
  // A transfer whose receive is posted and whose owner asked to send: let the data come.
  void accept(task* t);
  void release_rendezvous(int dest, std::uint64_t id);
  std::unordered_map<std::uint64_t, std::uint64_t> rendezvous;  // (access id, accessor) -> bytes, awaiting a go-ahead
  std::string describe(std::uint64_t key) const override { return "location " + std::to_string(key); }

  // Tasks are recycled: their vectors keep their capacity.
  std::vector<std::unique_ptr<task>> task_store;
  std::vector<task*> spare;
  task* new_task() {
    if (spare.empty()) {
      task_store.push_back(std::make_unique<task>());
      return task_store.back().get();
    }
    task* t = spare.back();
    spare.pop_back();
    return t;
  }
  void free_task(task* t) {
    std::vector<task*> succ = std::move(t->succ);
    std::vector<std::pair<std::uint64_t, bool>> keys = std::move(t->keys);
    succ.clear();
    keys.clear();
    *t = task{};
    t->succ = std::move(succ);
    t->keys = std::move(keys);
    spare.push_back(t);
  }

  void step_main();
  void spawn(const op& o);
  bool copyin_needed(std::uint64_t buf, std::uint64_t key);
  void copyin_written(std::uint64_t key);
  task* make_task(int kernel, const std::vector<decl>& accesses, std::uint64_t bytes);
  void make_ready(task* t);
  task* pop();
  void dispatch();
  bool available(int i) const { return workers[static_cast<std::size_t>(i)].idle && (i > 0 || ms != main_state::discovering); }
  void start(int i, task* t);
  void finished(int i, task* t);
  void complete(task* t);
  void go_idle(int i);
  void wake(int i);
  idle_reason judge() const;
  void arrive(inbound m);
  void poll();
  void try_match();
  void check_main();
  void close_round();
  void join_when_acknowledged(std::uint64_t key);
  std::string state() const;
};

}  // namespace hytask::sim::detail
