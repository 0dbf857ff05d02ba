#include "simulator.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "global/engine.hpp"

namespace hytask::sim {

namespace gd = hytask::global::detail;

const char* name(idle_reason r) {
  switch (r) {
    case idle_reason::data: return "data in flight";
    case idle_reason::release: return "owner's release";
    case idle_reason::matching: return "matching round";
    case idle_reason::local: return "local predecessors";
    case idle_reason::discovery: return "discovery";
    case idle_reason::end: return "end of work";
    case idle_reason::count: break;
  }
  return "?";
}

namespace {

constexpr int transfer_kernel = -1;  // a copyin of another rank's location: post a receive
constexpr int copy_kernel = -2;      // a copyin of this rank's location: a memcpy

struct task {
  int kernel = 0;
  std::uint64_t bytes = 0;  // transfers and copies
  int pending = 1;          // the spawn bias, local predecessors, the engine's gate
  bool comm = false;        // communication class: another rank waits for it
  bool gated = false;
  bool started = false, posted = false, arrived = false;
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
  enum class kind : std::uint8_t { buffer, data, ack, round_end } k = kind::buffer;
  int source = -1;
  std::vector<std::byte> buf;
  std::uint64_t value = 0;  // data: the access id; ack, round_end: the round's key
  std::uint64_t count = 0;  // ack: buffers handled
};

struct event {
  double t;
  std::uint64_t seq;
  std::function<void()> fn;
};
struct later {
  bool operator()(const event& a, const event& b) const { return a.t > b.t || (a.t == b.t && a.seq > b.seq); }
};

struct world;

// The ranks sharing one core of the machine (params::host_cores).
struct cpu_group {
  std::vector<std::pair<struct rank_state*, int>> running;  // (rank, worker)
  double last = 0;
};

struct decl {
  place where;
  bool write;
  bool push = false;
};

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
  void release(void* t) override;
  void remote_successor(void* t) override;
  void push(int dest, std::uint64_t id, std::uint64_t key) override;
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

void world::schedule_finish(rank_state* rs, int i, double at_time) {
  const std::uint64_t v = (++rs->workers[static_cast<std::size_t>(i)].version << 16) | static_cast<std::uint64_t>(i);
  at(at_time, [rs, v] {
    const auto wi = static_cast<std::size_t>(v & 0xffff);
    if (rs->workers[wi].version == v >> 16) rs->finished(static_cast<int>(wi), rs->workers[wi].cur);
  });
}

rank_state::rank_state(world& w_, int r_)
    : w(w_), r(r_), eng(r_, w_.model.ranks(), *this, 2048), prog(w_.model.program(r_)),
      workers(static_cast<std::size_t>(w_.p.workers)) {
  for (std::size_t i = 1; i < workers.size(); ++i) workers[i].idle = true;
}

std::string rank_state::state() const {
  static const char* names[] = {"discovering", "blocked in fence", "in wait_all", "draining", "done"};
  std::ostringstream o;
  o << "rank " << r << ": main " << names[static_cast<int>(ms)] << ", phase " << eng.phase() << " matched "
    << eng.matched() << ", " << outstanding << " tasks not done (" << waiting_data << " transfers waiting for data), "
    << inbox.size() << " messages not handled";
  return o.str();
}

// ---- engine_host ---------------------------------------------------------------------------

void rank_state::send(int dest, std::vector<std::byte> buf) {
  gd::buffer_header h;
  if (gd::read_header(buf, h) && gd::in_a_round(h.round)) ++unacked[gd::round_key(h.round, h.epoch)];
  const auto bytes = static_cast<std::uint64_t>(buf.size());
  const message_times t = w.net.send(r, dest, bytes, w.now);
  ++res.messages;
  res.bytes += bytes;
  inbound m;
  m.source = r;
  m.buf = std::move(buf);
  w.deliver(dest, std::move(m), t.arrived);
}

void rank_state::release(void* p) {
  auto* t = static_cast<task*>(p);
  auto g = gated_by_phase.find(t->phase);
  if (g != gated_by_phase.end() && --g->second == 0) gated_by_phase.erase(g);
  t->gated = false;
  if (--t->pending == 0) make_ready(t);
}

void rank_state::remote_successor(void* p) {
  auto* t = static_cast<task*>(p);
  if (t->comm) return;
  t->comm = true;
  if (t->pending != 0 || t->started) return;
  // Ready already: it moves to the front class.
  if (auto it = std::find(ready.begin(), ready.end(), t); it != ready.end()) ready.erase(it);
  ready_comm.push_back(t);
}

void rank_state::push(int dest, std::uint64_t id, std::uint64_t key) {
  const std::uint64_t bytes = w.model.bytes(key);
  const message_times t = w.net.send(r, dest, bytes, w.now);
  ++res.messages;
  res.bytes += bytes;
  const std::uint64_t packed = (id << 24) | static_cast<std::uint64_t>(dest);  // ids < 2^40, ranks < 2^24
  w.at(t.sent, [this, packed] {
    eng.push_sent(static_cast<int>(packed & 0xffffff), packed >> 24);
    dispatch();
  });
  inbound m;
  m.k = inbound::kind::data;
  m.value = id;
  w.deliver(dest, std::move(m), t.arrived);
}

// ---- main: discovery -----------------------------------------------------------------------

void rank_state::step_main() {
  if (ms != main_state::discovering) return;
  if (!prog.next()) {
    ms = main_state::done;
    done_at = w.now;
    ++w.done;
    go_idle(0);
    return;
  }
  const op& o = prog.value();
  switch (o.k) {
    case op::kind::spawn: {
      const std::uint64_t before = res.tasks + outstanding;
      spawn(o);
      const double spawned = static_cast<double>(res.tasks + outstanding - before);
      w.at(w.now + w.p.spawn * std::max(spawned, 1.0), [this] { step_main(); });
      return;
    }
    case op::kind::fence:
      close_round();
      ms = main_state::fence;
      break;
    case op::kind::wait_all:
      close_round();
      ms = main_state::wait_all;
      break;
  }
  check_main();  // main goes on at once when the window allows it
  if (ms != main_state::discovering) go_idle(0);
}

void rank_state::close_round() {
  const std::uint32_t round = eng.fence();
  join_when_acknowledged(gd::round_key(round, eng.epoch()));
}

// A rank joins a round's collective once every buffer of the round it sent has been handled
// by its receiver (acknowledged).
void rank_state::join_when_acknowledged(std::uint64_t key) {
  if (unacked.count(key)) {
    to_join[key] = true;
    return;
  }
  w.join(key);
}

bool rank_state::copyin_needed(std::uint64_t buf, std::uint64_t key) {
  if (copyin_phase != eng.phase()) {
    copyins.clear();
    copyin_of.clear();
    copyin_phase = eng.phase();
  }
  auto [it, fresh] = copyins.try_emplace(buf, key);
  if (!fresh && it->second == key) return false;
  it->second = key;
  copyin_of[key].push_back(buf);
  return true;
}

void rank_state::copyin_written(std::uint64_t key) {
  if (copyin_phase != eng.phase()) return;
  auto it = copyin_of.find(key);
  if (it == copyin_of.end()) return;
  for (std::uint64_t buf : it->second) {
    auto c = copyins.find(buf);
    if (c != copyins.end() && c->second == key) copyins.erase(c);
  }
  copyin_of.erase(it);
}

void rank_state::spawn(const op& o) {
  std::vector<decl> mine;
  for (const access& a : o.accesses) {
    switch (a.m) {
      case mode::in: mine.push_back({a.where, false}); break;
      case mode::inout: mine.push_back({a.where, true}); break;
      case mode::copyin_r:
        if (a.where.owner == r) {
          mine.push_back({a.where, false});
          break;
        }
        [[fallthrough]];
      case mode::copyin:
        if (copyin_needed(a.buffer.key, a.where.key)) {
          const bool remote = a.where.owner != r;
          task* t = make_task(remote ? transfer_kernel : copy_kernel,
                              {decl{a.where, false, remote}, decl{a.buffer, true}}, a.where.bytes);
          (void)t;
        }
        mine.push_back({a.buffer, false});
        break;
    }
  }
  make_task(o.kernel, mine, 0);
  for (const decl& d : mine)
    if (d.write && d.where.owner >= 0) copyin_written(d.where.key);
}

task* rank_state::make_task(int kernel, const std::vector<decl>& accesses, std::uint64_t bytes) {
  task* t = new_task();
  t->kernel = kernel;
  t->bytes = bytes;
  t->phase = eng.phase();
  if (kernel == transfer_kernel) {
    t->comm = true;
    ++res.transfers;
  }
  ++outstanding;
  res.peak_live_tasks = std::max(res.peak_live_tasks, outstanding);
  auto edge = [&](task* pred) {
    if (pred == nullptr || pred == t) return;
    pred->succ.push_back(t);
    ++t->pending;
  };
  bool global = false;
  for (const decl& d : accesses) {
    global |= d.where.owner >= 0;
    tracker_entry& e = tracker[d.where.key];
    edge(e.writer);
    if (!d.write) {
      e.readers.push_back(t);
    } else {
      for (task* rd : e.readers) edge(rd);
      e.readers.clear();
      e.writer = t;
    }
    t->keys.emplace_back(d.where.key, d.write);
  }
  if (global) {
    bool gated = false;
    t->rec = eng.begin_task(t, gated);
    if (gated) {
      t->gated = true;
      ++t->pending;
      ++gated_by_phase[t->phase];
    }
    for (const decl& d : accesses) {
      if (d.where.owner < 0) continue;
      const std::uint64_t id = eng.add_access(t->rec, gd::location{d.where.owner, d.where.key},
                                              d.write ? gd::dep_kind::out : gd::dep_kind::in, d.push);
      if (d.push) {
        t->xfer = id;
        transfers.emplace(id, t);
      }
    }
  }
  if (--t->pending == 0) make_ready(t);
  return t;
}

// ---- workers ---------------------------------------------------------------------------------

void rank_state::make_ready(task* t) {
  (t->comm ? ready_comm : ready).push_back(t);
  dispatch();
}

task* rank_state::pop() {
  for (auto* q : {&ready_comm, &ready}) {
    if (q->empty()) continue;
    task* t = q->front();
    q->pop_front();
    return t;
  }
  return nullptr;
}

void rank_state::dispatch() {
  for (int i = 0; i < static_cast<int>(workers.size()); ++i) {
    if (!available(i)) continue;
    task* t = pop();
    if (t == nullptr) return;
    wake(i);
    start(i, t);
  }
}

void rank_state::start(int i, task* t) {
  t->started = true;
  workers[static_cast<std::size_t>(i)].cur = t;
  w.run_task(this, i, t);
}

void rank_state::finished(int i, task* t) {
  w.task_left_cpu(this, i);
  res.busy += w.now - t->started_at;
  workers[static_cast<std::size_t>(i)].cur = nullptr;
  if (t->kernel == transfer_kernel) {
    t->posted = true;
    if (t->arrived) complete(t);
    else ++waiting_data;
  } else {
    complete(t);
  }
  // A task switch: the worker polls.
  if (!inbox.empty()) poll();
  if (i == 0 && ms != main_state::discovering && ms != main_state::done) {
    check_main();
    if (ms == main_state::discovering) return;  // main went back to its program
  }
  if (i == 0 && ms == main_state::discovering) return;
  if (task* n = pop()) {
    start(i, n);
    return;
  }
  go_idle(i);
}

void rank_state::complete(task* t) {
  for (task* s : t->succ)
    if (--s->pending == 0) make_ready(s);
  for (const auto& [key, write] : t->keys) {
    auto it = tracker.find(key);
    if (it == tracker.end()) continue;
    tracker_entry& e = it->second;
    if (e.writer == t) e.writer = nullptr;
    if (!write) std::erase(e.readers, t);
    if (e.writer == nullptr && e.readers.empty()) tracker.erase(it);
  }
  if (t->rec) eng.task_completed(t->rec);
  --outstanding;
  ++res.tasks;
  free_task(t);
  check_main();
}

idle_reason rank_state::judge() const {
  if (waiting_data > 0) return idle_reason::data;
  if (!gated_by_phase.empty())
    return gated_by_phase.begin()->first < eng.matched() ? idle_reason::release : idle_reason::matching;
  if (outstanding > 0) return idle_reason::local;
  if (ms == main_state::discovering || ms == main_state::fence) return idle_reason::discovery;
  return idle_reason::end;
}

void rank_state::go_idle(int i) {
  worker& wk = workers[static_cast<std::size_t>(i)];
  if (wk.idle) return;
  wk.idle = true;
  wk.idle_since = w.now;
  wk.why = judge();
  dispatch();
}

void rank_state::wake(int i) {
  worker& wk = workers[static_cast<std::size_t>(i)];
  if (!wk.idle) return;
  wk.idle = false;
  res.idle[static_cast<int>(wk.why)] += w.now - wk.idle_since;
}

// ---- messages and progress ---------------------------------------------------------------------

void rank_state::arrive(inbound m) {
  inbox.push_back(std::move(m));
  for (int i = 0; i < static_cast<int>(workers.size()); ++i)
    if (available(i)) {
      poll();  // an idle worker polls at once
      return;
    }
  if (backstop_armed) return;
  backstop_armed = true;
  w.at(w.now + w.p.backstop, [this] {
    backstop_armed = false;
    if (!inbox.empty()) poll();
  });
}

void rank_state::poll() {
  std::vector<inbound> items;
  items.swap(inbox);
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> acks;  // (source, round key) -> buffers
  for (inbound& m : items) {
    switch (m.k) {
      case inbound::kind::buffer: {
        gd::buffer_header h;
        const bool counted = gd::read_header(m.buf, h) && gd::in_a_round(h.round);
        eng.receive(m.source, m.buf);
        if (counted) {
          const std::uint64_t key = gd::round_key(h.round, h.epoch);
          ++handled[key];
          ++acks[{m.source, key}];
        }
        break;
      }
      case inbound::kind::ack: {
        auto it = unacked.find(m.value);
        if (it == unacked.end() || it->second < m.count)
          throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " got an acknowledgement it did not expect");
        if ((it->second -= m.count) == 0) {
          unacked.erase(it);
          if (to_join.erase(m.value)) w.join(m.value);
        }
        break;
      }
      case inbound::kind::data: {
        auto it = transfers.find(m.value);
        if (it == transfers.end())
          throw std::logic_error("hytask-sim: rank " + std::to_string(r) + " received data no transfer waits for");
        task* t = it->second;
        transfers.erase(it);
        t->arrived = true;
        if (t->posted) {
          --waiting_data;
          complete(t);
        }
        break;
      }
      case inbound::kind::round_end: {
        std::uint64_t n = 0;
        if (auto it = handled.find(m.value); it != handled.end()) {
          n = it->second;
          handled.erase(it);
        }
        const auto round = static_cast<std::uint32_t>(m.value & 0xffffffffu);
        if (round == gd::drain_round) {
          eng.expect_drain(n);
          drain_expected = true;
        } else {
          round_results[round] = n;
        }
        break;
      }
    }
  }
  // One acknowledgement per sender and round for what this poll handled.
  for (const auto& [who, n] : acks) {
    const message_times t = w.net.send(r, who.first, sizeof(gd::buffer_header), w.now);
    ++res.messages;
    res.bytes += sizeof(gd::buffer_header);
    inbound a;
    a.k = inbound::kind::ack;
    a.value = who.second;
    a.count = n;
    w.deliver(who.first, std::move(a), t.arrived);
  }
  try_match();
  check_main();
  dispatch();
}

void rank_state::try_match() {
  for (;;) {
    const std::uint32_t m = eng.matched();
    if (m >= eng.phase()) return;
    auto it = round_results.find(m);
    if (it != round_results.end()) {
      eng.expect(m, it->second);
      round_results.erase(it);
    }
    if (!eng.round_complete(m)) return;
    eng.match(m);
  }
}

void rank_state::check_main() {
  switch (ms) {
    case main_state::fence:
      if (eng.active_phases() >= w.p.window) return;
      break;
    case main_state::wait_all:
      if (outstanding != 0 || eng.matched() != eng.phase()) return;
      ms = main_state::draining;
      drain_expected = false;
      eng.drain();
      join_when_acknowledged(gd::round_key(gd::drain_round, eng.epoch()));
      return;
    case main_state::draining:
      if (!drain_expected || !eng.drained()) return;
      eng.reset();
      break;
    case main_state::discovering:
    case main_state::done:
      return;
  }
  // Main returns to its program once the task it runs, if any, is done.
  if (workers[0].cur != nullptr) {
    if (ms == main_state::draining) ms = main_state::fence;  // resumes like a fence
    return;
  }
  wake(0);
  ms = main_state::discovering;
  w.at(w.now, [this] { step_main(); });
}

}  // namespace

result simulate(const app_model& model, const params& p) {
  if (p.workers < 1) throw std::invalid_argument("hytask-sim: workers must be at least 1");
  if (p.kernel_seconds.size() != model.kernels().size())
    throw std::invalid_argument("hytask-sim: " + std::to_string(p.kernel_seconds.size()) + " kernel times for " +
                                std::to_string(model.kernels().size()) + " kernels");
  world w(model, p);
  w.run();
  result res;
  for (const auto& r : w.ranks) res.seconds = std::max(res.seconds, r->done_at);
  res.seconds += w.net.round_cost(model.ranks());  // wait_all's barrier
  res.events = w.events;
  res.rounds = w.rounds_done;
  for (auto& r : w.ranks) {
    for (auto& wk : r->workers)
      if (wk.idle) r->res.idle[static_cast<int>(idle_reason::end)] += res.seconds - wk.idle_since;
    res.tasks += r->res.tasks;
    res.ranks.push_back(r->res);
  }
  return res;
}

}  // namespace hytask::sim
