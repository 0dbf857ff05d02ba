// Seed 001's protocol in one process, without MPI (issue 17): several ranks, each an engine
// (src/global/engine.hpp) with a small scheduler of its own — a local dependency tracker
// that orders the rank's accesses as hytask's core does, a ready list, workers — exchanging
// their buffers through memory. Random global task graphs (random owners, in/out/inout,
// fences and wait_alls at random points) must give exactly what a sequential run gives: the
// values every task read and the final memory. The memory is plain, so under
// ThreadSanitizer a missing edge between tasks of two ranks is also a reported race.
//
// Two drivers: threads (a discovery thread and a worker per rank, buffers delivered in
// order), and a seeded single thread that interleaves every rank's steps at random and
// delivers buffers in random order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "global/engine.hpp"
#include "hytask/errors.hpp"
#include "test_util.hpp"

namespace gd = hytask::global::detail;

namespace {

enum class kind { in, out, inout };

struct access {
  int loc;
  kind k;
};

struct task_spec {
  std::uint64_t uid;
  std::vector<access> accesses;
};

struct program {
  int ranks = 1;
  int locs = 1;
  std::vector<int> owner;                                // per location
  std::vector<std::vector<std::vector<task_spec>>> tasks;  // [rank][phase]
  std::set<int> wait_after;                              // phases closed by a wait_all
  std::uint64_t ntasks = 0;
  int phases() const { return static_cast<int>(tasks[0].size()); }
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// What a task does: reads its inputs into a signature, writes its outputs from it.
std::uint64_t execute(const task_spec& t, std::vector<std::uint64_t>& mem) {
  std::uint64_t sig = t.uid;
  for (const access& a : t.accesses)
    if (a.k != kind::out) sig = mix(sig, mem[a.loc]);
  for (const access& a : t.accesses)
    if (a.k != kind::in) mem[a.loc] = mix(sig, static_cast<std::uint64_t>(a.loc));
  return sig;
}

struct outcome {
  std::vector<std::uint64_t> mem;
  std::vector<std::uint64_t> sig;  // per task uid
};

std::vector<std::uint64_t> initial_memory(const program& p) {
  std::vector<std::uint64_t> mem(p.locs);
  for (int l = 0; l < p.locs; ++l) mem[l] = 1000 + l;
  return mem;
}

// The sequential oracle: phase by phase, rank by rank, in discovery order — one linear
// extension of the index-phase order (seed 001 Fig. 3.4), and any gives the same result when
// no phase holds conflicting accesses of two ranks.
outcome oracle(const program& p) {
  outcome o{initial_memory(p), std::vector<std::uint64_t>(p.ntasks)};
  for (int ph = 0; ph < p.phases(); ++ph)
    for (int r = 0; r < p.ranks; ++r)
      for (const task_spec& t : p.tasks[r][ph]) o.sig[t.uid] = execute(t, o.mem);
  return o;
}

// Random owners, random accesses; per phase and location either one rank may access it
// in any way, or every rank may read it — so no phase holds a conflict.
program random_program(std::uint64_t seed, int ranks, int locs, int phases, int max_tasks,
                       int max_accesses, double wait_probability) {
  std::mt19937_64 rng(seed);
  program p;
  p.ranks = ranks;
  p.locs = locs;
  p.owner.resize(locs);
  for (int& o : p.owner) o = static_cast<int>(rng() % ranks);
  p.tasks.assign(ranks, std::vector<std::vector<task_spec>>(phases));
  std::uniform_real_distribution<double> u(0, 1);
  for (int ph = 0; ph < phases; ++ph) {
    std::vector<int> exclusive(locs);  // -1: every rank reads
    for (int& e : exclusive) e = u(rng) < 0.6 ? static_cast<int>(rng() % ranks) : -1;
    for (int r = 0; r < ranks; ++r) {
      const int n = static_cast<int>(rng() % (max_tasks + 1));
      for (int i = 0; i < n; ++i) {
        task_spec t;
        t.uid = p.ntasks++;
        const int na = 1 + static_cast<int>(rng() % max_accesses);
        for (int a = 0; a < na; ++a) {
          const int l = static_cast<int>(rng() % locs);
          if (exclusive[l] == -1) t.accesses.push_back({l, kind::in});
          else if (exclusive[l] == r) t.accesses.push_back({l, static_cast<kind>(rng() % 3)});
        }
        if (t.accesses.empty()) {
          // Every pick was another rank's this phase: read one this rank may read, if any.
          for (int l = 0; l < locs && t.accesses.empty(); ++l)
            if (exclusive[l] == -1 || exclusive[l] == r) t.accesses.push_back({l, kind::in});
          if (t.accesses.empty()) continue;
        }
        p.tasks[r][ph].push_back(std::move(t));
      }
    }
    if (ph + 1 < phases && u(rng) < wait_probability) p.wait_after.insert(ph);
  }
  return p;
}

struct world;

struct sim_task {
  const task_spec* spec = nullptr;
  int pending = 0;  // local predecessors + the engine's gate + the spawn bias
  bool done = false;
  std::vector<sim_task*> succ;
  gd::task_record* rec = nullptr;
};

struct tracker_entry {
  sim_task* writer = nullptr;
  std::vector<sim_task*> readers;
};

// One simulated rank: the host of one engine.
struct rank_sim final : gd::engine_host {
  rank_sim(world& w, int r, std::size_t max_records);
  world& w;
  const int r;
  gd::engine eng;

  std::mutex mu;  // the scheduler's state: tracker, ready list, task counts
  std::unordered_map<int, tracker_entry> tracker;
  std::deque<sim_task*> ready;
  std::vector<std::unique_ptr<sim_task>> tasks;  // of the current epoch
  std::atomic<int> outstanding{0};

  std::mutex inbox_mu;
  std::deque<std::pair<int, std::vector<std::byte>>> inbox;

  std::mutex match_mu;
  std::set<std::uint32_t> expected;

  // Discovery's position.
  enum class stage { spawning, waiting, draining, done } st = stage::spawning;
  int phase = 0;
  std::size_t next = 0;
  int epoch = 0;
  bool drain_expected = false;
  std::size_t max_active = 0;
  std::size_t max_nodes = 0, max_records = 0;

  void send(int dest, std::vector<std::byte> buf) override;
  void release(void* t, std::uint16_t /*inherited*/) override {
    auto* s = static_cast<sim_task*>(t);
    std::lock_guard lk(mu);
    if (--s->pending == 0) ready.push_back(s);
  }
  std::string describe(std::uint64_t key) const override { return "location " + std::to_string(key); }

  void spawn(const task_spec& spec);
  bool discovery_step();
  bool worker_step(std::mt19937_64* rng);
  bool try_match();
  void run(sim_task* t);
  std::string state() const;
};

struct world {
  const program& p;
  std::vector<std::uint64_t> mem;
  std::vector<std::uint64_t> sig;
  std::vector<std::unique_ptr<rank_sim>> ranks;
  std::size_t window;

  // Rounds as the MPI transport ends them (src/global/am.hpp): a round ends once every rank
  // has started it and every buffer of it has been handled by its receiver; each rank then
  // learns how many of them it handled.
  struct round_count {
    int started = 0;
    std::uint64_t sent = 0, handled = 0;
    std::vector<std::uint64_t> handled_by;  // per rank
  };
  std::mutex mu;
  std::map<std::uint64_t, round_count> rounds;

  std::atomic<bool> failed{false};
  std::mutex error_mu;
  std::string error;

  world(const program& prog, std::size_t window_, std::size_t max_records)
      : p(prog), mem(initial_memory(prog)), sig(prog.ntasks, 0), window(window_) {
    for (int r = 0; r < p.ranks; ++r) ranks.push_back(std::make_unique<rank_sim>(*this, r, max_records));
  }

  round_count& count(std::uint64_t key) {
    round_count& c = rounds[key];
    if (c.handled_by.empty()) c.handled_by.assign(p.ranks, 0);
    return c;
  }
  // A buffer of a round is sent (before it can be handled), handled by `rank`; the round is
  // started by a rank once it has sent all its buffers of it.
  void sent(std::uint64_t key) {
    std::lock_guard lk(mu);
    ++count(key).sent;
  }
  void handled(std::uint64_t key, int rank) {
    std::lock_guard lk(mu);
    round_count& c = count(key);
    ++c.handled;
    ++c.handled_by[rank];
  }
  void start(std::uint64_t key) {
    std::lock_guard lk(mu);
    ++count(key).started;
  }
  // Whether the round has ended, and the buffers of it `rank` handled.
  bool ended(std::uint64_t key, int rank, std::uint64_t& out) {
    std::lock_guard lk(mu);
    auto it = rounds.find(key);
    if (it == rounds.end() || it->second.started != p.ranks || it->second.sent != it->second.handled)
      return false;
    out = it->second.handled_by[rank];
    return true;
  }

  void fail(const std::string& why) {
    std::lock_guard lk(error_mu);
    if (error.empty()) error = why;
    failed = true;
  }
  bool all_done() const {
    for (auto& r : ranks)
      if (r->st != rank_sim::stage::done) return false;
    return true;
  }
  std::string state() const {
    std::string s;
    for (auto& r : ranks) s += r->state() + "\n";
    return s;
  }
};

rank_sim::rank_sim(world& w_, int r_, std::size_t max_records)
    : w(w_), r(r_), eng(r_, w_.p.ranks, *this, max_records) {}

void rank_sim::send(int dest, std::vector<std::byte> buf) {
  gd::buffer_header h{};
  if (gd::read_header(buf, h) && gd::in_a_round(h.round)) w.sent(gd::round_key(h.round, h.epoch));
  rank_sim& d = *w.ranks[dest];
  std::lock_guard lk(d.inbox_mu);
  d.inbox.emplace_back(r, std::move(buf));
}

std::string rank_sim::state() const {
  std::ostringstream o;
  o << "rank " << r << ": phase " << phase << " task " << next << " stage "
    << static_cast<int>(st) << ", engine phase " << eng.phase() << " matched " << eng.matched()
    << ", " << outstanding.load() << " tasks outstanding";
  return o.str();
}

void rank_sim::spawn(const task_spec& spec) {
  auto owned = std::make_unique<sim_task>();
  sim_task* t = owned.get();
  t->spec = &spec;
  outstanding.fetch_add(1);
  {
    std::lock_guard lk(mu);
    tasks.push_back(std::move(owned));
    t->pending = 2;  // the spawn bias and a gate the engine may hold
    auto edge = [&](sim_task* pred) {
      if (pred == nullptr || pred == t || pred->done) return;
      pred->succ.push_back(t);
      ++t->pending;
    };
    for (const access& a : spec.accesses) {
      tracker_entry& e = tracker[a.loc];
      edge(e.writer);
      if (a.k == kind::in) {
        e.readers.push_back(t);
      } else {
        for (sim_task* rd : e.readers) edge(rd);
        e.readers.clear();
        e.writer = t;
      }
    }
  }
  bool gated = false;
  gd::task_record* rec = eng.begin_task(t, gated);
  for (const access& a : spec.accesses)
    eng.add_access(rec, gd::location{w.p.owner[a.loc], static_cast<std::uint64_t>(a.loc)},
                   a.k == kind::in ? gd::dep_kind::in : gd::dep_kind::out);
  std::lock_guard lk(mu);
  t->rec = rec;
  t->pending -= gated ? 1 : 2;
  if (t->pending == 0) ready.push_back(t);
}

void rank_sim::run(sim_task* t) {
  w.sig[t->spec->uid] = execute(*t->spec, w.mem);
  {
    std::lock_guard lk(mu);
    t->done = true;
    for (sim_task* s : t->succ)
      if (--s->pending == 0) ready.push_back(s);
    t->succ.clear();
  }
  eng.task_completed(t->rec, 0);
  outstanding.fetch_sub(1);
}

bool rank_sim::try_match() {
  std::unique_lock lk(match_mu, std::try_to_lock);
  if (!lk.owns_lock()) return false;
  bool any = false;
  for (;;) {
    const std::uint32_t m = eng.matched();
    if (m >= eng.phase()) break;
    if (!expected.count(m)) {
      std::uint64_t want;
      if (!w.ended(gd::round_key(m, eng.epoch()), r, want)) break;
      eng.expect(m, want);
      expected.insert(m);
    }
    if (!eng.round_complete(m)) break;
    eng.match(m);  // a conflict throws
    expected.erase(m);
    any = true;
  }
  const auto s = eng.stats();
  max_nodes = std::max(max_nodes, s.nodes_alive);
  max_records = std::max(max_records, s.records_alive);
  return any;
}

bool rank_sim::worker_step(std::mt19937_64* rng) {
  bool progressed = false;
  std::pair<int, std::vector<std::byte>> msg{-1, {}};
  {
    std::lock_guard lk(inbox_mu);
    if (!inbox.empty()) {
      std::size_t i = rng ? (*rng)() % inbox.size() : 0;
      msg = std::move(inbox[i]);
      inbox.erase(inbox.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  if (msg.first >= 0) {
    eng.receive(msg.first, msg.second);
    gd::buffer_header h{};
    if (gd::read_header(msg.second, h) && gd::in_a_round(h.round))
      w.handled(gd::round_key(h.round, h.epoch), r);
    progressed = true;
  }
  progressed |= try_match();
  sim_task* t = nullptr;
  {
    std::lock_guard lk(mu);
    if (!ready.empty()) {
      std::size_t i = rng ? (*rng)() % ready.size() : 0;
      t = ready[i];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  if (t) {
    run(t);
    progressed = true;
  }
  return progressed;
}

// One step of the rank's program: spawn a task, fence, or a stage of wait_all. False when
// it must wait for something.
bool rank_sim::discovery_step() {
  const program& p = w.p;
  switch (st) {
    case stage::spawning: {
      if (eng.active_phases() > w.window) return false;  // the window of active phases
      max_active = std::max<std::size_t>(max_active, eng.active_phases());
      const auto& list = p.tasks[r][phase];
      if (next < list.size()) {
        spawn(list[next++]);
        return true;
      }
      const std::uint32_t closing = eng.fence();
      w.start(gd::round_key(closing, eng.epoch()));
      if (phase + 1 == p.phases() || p.wait_after.count(phase)) {
        st = stage::waiting;
      } else {
        ++phase;
        next = 0;
      }
      return true;
    }
    case stage::waiting:
      if (outstanding.load() != 0 || eng.matched() != eng.phase()) return false;
      eng.drain();
      w.start(gd::round_key(gd::drain_round, eng.epoch()));
      st = stage::draining;
      drain_expected = false;
      return true;
    case stage::draining: {
      if (!drain_expected) {
        std::uint64_t want;
        if (!w.ended(gd::round_key(gd::drain_round, eng.epoch()), r, want)) return false;
        eng.expect_drain(want);
        drain_expected = true;
      }
      if (!eng.drained()) return false;
      eng.reset();
      ++epoch;
      {
        std::lock_guard lk(mu);
        tracker.clear();
        tasks.clear();
      }
      if (phase + 1 == p.phases()) {
        st = stage::done;
      } else {
        ++phase;
        next = 0;
        st = stage::spawning;
      }
      return true;
    }
    case stage::done:
      return false;
  }
  return false;
}

void check_against_oracle(const program& p, const world& w) {
  const outcome o = oracle(p);
  std::size_t wrong = 0;
  for (std::uint64_t u = 0; u < p.ntasks; ++u)
    if (w.sig[u] != o.sig[u] && wrong++ < 5) ADD_FAILURE() << "task " << u << " read other values than in a sequential run";
  EXPECT_EQ(wrong, 0u) << "tasks that read other values";
  EXPECT_EQ(w.mem, o.mem) << "final memory differs from the sequential run's";
}

// Threads: per rank a discovery thread (which also runs tasks while it waits) and a worker.
void run_threads(world& w, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::atomic<int> finished{0};
  auto guard = [&](auto&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      w.fail(e.what());
    }
  };
  std::vector<std::thread> threads;
  for (auto& rp : w.ranks) {
    rank_sim* rs = rp.get();
    threads.emplace_back([&, rs] {
      guard([&] {
        while (rs->st != rank_sim::stage::done && !w.failed) {
          if (!rs->discovery_step() && !rs->worker_step(nullptr)) std::this_thread::yield();
          if (std::chrono::steady_clock::now() > deadline)
            w.fail("simulation stuck:\n" + w.state());
        }
      });
      finished.fetch_add(1);
    });
    threads.emplace_back([&, rs] {
      guard([&] {
        while (finished.load() < static_cast<int>(w.ranks.size()) && !w.failed)
          if (!rs->worker_step(nullptr)) std::this_thread::yield();
      });
    });
  }
  for (auto& t : threads) t.join();
}

// One thread, every choice from a seeded generator: which rank steps, what it does, which
// buffer arrives first.
void run_random_interleaving(world& w, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::size_t idle = 0;
  while (!w.all_done() && !w.failed) {
    rank_sim& rs = *w.ranks[rng() % w.ranks.size()];
    bool progressed;
    try {
      progressed = (rng() % 3 == 0) ? rs.discovery_step() : rs.worker_step(&rng);
    } catch (const std::exception& e) {
      w.fail(e.what());
      break;
    }
    idle = progressed ? 0 : idle + 1;
    if (idle > 100000) {
      w.fail("simulation stuck:\n" + w.state());
      break;
    }
  }
}


}  // namespace

TEST(GlobalSim, RandomGraphsMatchASequentialRunWithRandomInterleavings) {
  const int seeds = static_cast<int>(std::max(4L, hytask_test::scaled(80)));
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (int s = 0; s < seeds; ++s) {
      const std::uint64_t seed = 1000 * ranks + s;
      const program p = random_program(seed, ranks, 6 + s % 10, 1 + s % 9, 4, 3, 0.2);
      world w(p, 1 + s % 4, 1 + s % 5);  // tiny buffers: many per round
      run_random_interleaving(w, seed);
      ASSERT_FALSE(w.failed) << "seed " << seed << ", " << ranks << " ranks: " << w.error;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(ranks) + " ranks");
      check_against_oracle(p, w);
      if (HasFailure()) return;
    }
  }
}

TEST(GlobalSim, RandomGraphsMatchASequentialRunOnThreads) {
  const int seeds = static_cast<int>(std::max(2L, hytask_test::scaled(24)));
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (int s = 0; s < seeds; ++s) {
      const std::uint64_t seed = 7000 + 100 * ranks + s;
      const program p = random_program(seed, ranks, 8 + s % 8, 4 + s % 12, 12, 3, 0.1);
      world w(p, 2 + s % 3, 64);
      run_threads(w, std::chrono::seconds(60));
      ASSERT_FALSE(w.failed) << "seed " << seed << ", " << ranks << " ranks: " << w.error;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(ranks) + " ranks");
      check_against_oracle(p, w);
      if (HasFailure()) return;
    }
  }
}

TEST(GlobalSim, AConflictIsFoundByTheOwnerAndTheRunEnds) {
  // Rank 0 writes location 0 (owned by rank 2) while rank 1 reads it, both in phase 1.
  program p;
  p.ranks = 3;
  p.locs = 1;
  p.owner = {2};
  p.tasks.assign(3, std::vector<std::vector<task_spec>>(2));
  p.tasks[0][1].push_back({p.ntasks++, {{0, kind::out}}});
  p.tasks[1][1].push_back({p.ntasks++, {{0, kind::in}}});
  world w(p, 4, 64);
  run_random_interleaving(w, 1);
  ASSERT_FALSE(w.failed) << "a conflict stopped the protocol: " << w.error;
  const std::vector<std::string> found = w.ranks[2]->eng.take_conflicts();
  ASSERT_EQ(found.size(), 1u) << "the owner did not report the conflict once";
  EXPECT_NE(found[0].find("conflicting accesses to location 0 in phase 1"), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("rank 0 declares out/inout and rank 1 declares in"), std::string::npos) << found[0];
  EXPECT_TRUE(w.ranks[0]->eng.take_conflicts().empty()) << "a rank that owns nothing reported a conflict";
}

TEST(GlobalSim, MemoryFollowsTheWindowNotTheProgramLength) {
  // 300 phases of 40 tasks per rank touching 8 locations: the live protocol state stays
  // within the window of active phases.
  program p;
  p.ranks = 2;
  p.locs = 8;
  p.owner = {0, 1, 0, 1, 0, 1, 0, 1};
  const int phases = static_cast<int>(hytask_test::scaled(300)) + 10;
  p.tasks.assign(2, std::vector<std::vector<task_spec>>(phases));
  for (int ph = 0; ph < phases; ++ph)
    for (int r = 0; r < 2; ++r)
      for (int i = 0; i < 40; ++i) {
        // Rank r writes even locations in even phases; the other rank reads them.
        const int l = 2 * (i % 4) + ((ph + r) % 2);
        const bool writer = (ph % 2) == r;
        p.tasks[r][ph].push_back({p.ntasks++, {{l, writer ? kind::inout : kind::in}}});
      }
  world w(p, 3, 64);  // window 3
  run_threads(w, std::chrono::seconds(120));
  ASSERT_FALSE(w.failed) << w.error;
  check_against_oracle(p, w);
  // A rank keeps its own accesses of the active phases, and the other rank's of phases up
  // to its window ahead; 24,000 accesses in all.
  const std::size_t window = 3, per_phase = 40;
  for (auto& r : w.ranks) {
    EXPECT_LE(r->max_active, window + 1);
    EXPECT_LE(r->max_records, per_phase * (window + 3)) << "task records alive at once on rank " << r->r;
    EXPECT_LE(r->max_nodes, 2 * per_phase * (window + 5)) << "home nodes alive at once on rank " << r->r;
  }
}
