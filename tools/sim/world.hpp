// The simulated machine (simulator.hpp): the event queue and its clock, the network, the
// messages in flight, the rounds' collectives, and the cores ranks share. Internal to
// hytask-sim.
#pragma once

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "network.hpp"
#include "rank.hpp"

namespace hytask::sim::detail {

struct event {
  double t;
  std::uint64_t seq;
  std::function<void()> fn;
};
struct later {
  bool operator()(const event& a, const event& b) const { return a.t > b.t || (a.t == b.t && a.seq > b.seq); }
};

// The ranks sharing one core of the machine (params::host_cores).
struct cpu_group {
  std::vector<std::pair<struct rank_state*, int>> running;  // (rank, worker)
  double last = 0;
};

struct world {
  world(const app_model& m, const params& p_)
      : model(m), p(p_), net(m.ranks(), p_.net), groups(static_cast<std::size_t>(std::max(p_.host_cores, 0))) {
    for (int r = 0; r < m.ranks(); ++r) ranks.push_back(std::make_unique<rank_state>(*this, r));
  }
  const app_model& model;
  const params& p;
  network net;
  std::vector<event> heap;
  std::uint64_t seq = 0, events = 0, rounds_done = 0;
  double now = 0;
  std::vector<std::unique_ptr<rank_state>> ranks;
  std::unordered_map<std::uint64_t, int> joined;  // round key -> ranks in its collective
  std::vector<cpu_group> groups;
  int done = 0;

  void at(double t, std::function<void()> fn) {
    heap.push_back(event{t, seq++, std::move(fn)});
    std::push_heap(heap.begin(), heap.end(), later{});
  }
  // Messages in flight wait in a pool, so that an event stays small (std::function keeps
  // up to 16 trivially copyable bytes without allocating).
  std::vector<std::pair<int, inbound>> flying;
  std::vector<std::uint32_t> free_slots;
  void deliver(int dest, inbound m, double t) {
    std::uint32_t slot;
    if (free_slots.empty()) {
      slot = static_cast<std::uint32_t>(flying.size());
      flying.emplace_back(dest, std::move(m));
    } else {
      slot = free_slots.back();
      free_slots.pop_back();
      flying[slot] = {dest, std::move(m)};
    }
    at(t, [this, slot] {
      auto& [to, msg] = flying[slot];
      inbound got = std::move(msg);
      free_slots.push_back(slot);
      ranks[static_cast<std::size_t>(to)]->arrive(std::move(got));
    });
  }
  // A rank joins round `key`'s collective; the last one ends it, for every rank.
  void join(std::uint64_t key) {
    auto it = joined.try_emplace(key, 0).first;
    if (++it->second < static_cast<int>(ranks.size())) return;
    joined.erase(it);
    const double t = now + net.round_cost(static_cast<int>(ranks.size()));
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      inbound m;
      m.k = inbound::kind::round_end;
      m.value = key;
      deliver(static_cast<int>(r), std::move(m), t);
    }
    ++rounds_done;
  }

  double duration(const task* t) const {
    double d = p.task_overhead;
    if (t->kernel >= 0) d += p.kernel_seconds[static_cast<std::size_t>(t->kernel)];
    else if (t->kernel == transfer_kernel) d += p.post;
    else d += static_cast<double>(t->bytes) / p.copy_bytes_per_second;
    return d;
  }
  // A worker's finish event; a later one (processor sharing moved it) makes it stale.
  void schedule_finish(rank_state* rs, int i, double at_time);
  // Processor sharing: the running tasks of a core each progress at 1/n of its speed.
  void advance(cpu_group& g) {
    const double n = static_cast<double>(g.running.size());
    for (auto& [rs, i] : g.running) rs->workers[static_cast<std::size_t>(i)].cur->remaining -= (now - g.last) / n;
    g.last = now;
  }
  void reschedule(cpu_group& g) {
    const double n = static_cast<double>(g.running.size());
    for (auto& [rs, i] : g.running) {
      task* t = rs->workers[static_cast<std::size_t>(i)].cur;
      schedule_finish(rs, i, now + std::max(t->remaining, 0.0) * n);
    }
  }
  void run_task(rank_state* rs, int i, task* t) {
    t->started_at = now;
    if (groups.empty()) {
      schedule_finish(rs, i, now + duration(t));
      return;
    }
    cpu_group& g = groups[static_cast<std::size_t>(rs->r) % groups.size()];
    if (!g.running.empty()) advance(g);
    g.last = now;
    t->remaining = duration(t);
    g.running.emplace_back(rs, i);
    reschedule(g);
  }
  void task_left_cpu(rank_state* rs, int i) {
    if (groups.empty()) return;
    cpu_group& g = groups[static_cast<std::size_t>(rs->r) % groups.size()];
    advance(g);
    std::erase_if(g.running, [&](const auto& e) { return e.first == rs && e.second == i; });
    reschedule(g);
  }

  std::string state() const {
    std::ostringstream o;
    for (const auto& r : ranks) o << "  " << r->state() << "\n";
    return o.str();
  }

  void run() {
    for (auto& r : ranks) {
      rank_state* rs = r.get();
      at(0, [rs] { rs->step_main(); });
    }
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later{});
      event e = std::move(heap.back());
      heap.pop_back();
      now = e.t;
      ++events;
      e.fn();
    }
    if (done != static_cast<int>(ranks.size()))
      throw std::runtime_error("hytask-sim: the simulated program cannot finish at t = " + std::to_string(now) +
                               " s; what each rank waits for:\n" + state());
  }
};

}  // namespace hytask::sim::detail
