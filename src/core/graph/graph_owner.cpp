// Owner placement of a recorded graph's run (see graph_owner.hpp).
#include "core/graph/graph_owner.hpp"

#include <algorithm>
#include <exception>

#include "core/sched/cancellation.hpp"
#include "platform/clock.hpp"
#include "platform/assert.hpp"
#include "platform/cpu.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "hytask/core/spawn.hpp"

namespace hytask::detail {

// A node's completion that reached its partition by no ring: its body suspended or yielded,
// and its agent had let the partition go meanwhile. (Outside the anonymous namespace:
// owner_part, which has external linkage, holds a pointer to it.)
struct late_done {
  std::uint32_t node;
  bool failed;
  late_done* next;
};

namespace {

enum : std::uint8_t { part_free = 0, part_kicked = 1, part_held = 2 };

constexpr std::uint64_t failed_msg = std::uint64_t{1} << 31;  // in a message: the node failed

// How long an idle agent leaves a partition that waits for an agent to the agent task made
// for it (which an idle worker steals within a few microseconds) before taking it itself.
constexpr std::int64_t takeover_ns = 50'000;

}  // namespace

// One partition's state in a run. The atomics are anyone's; the rest is its holder's.
struct alignas(64) owner_part {
  std::atomic<std::uint8_t> status{part_free};
  std::atomic<late_done*> late{nullptr};
  alignas(64) std::uint32_t lap = 0;  // the run whose state this is (set at its first claim)
  std::uint32_t left = 0;             // its nodes not yet done in this run
  std::vector<std::int32_t> count;    // predecessors pending, by local position
  std::vector<std::uint32_t> ready;   // ready nodes, in the order they became ready: a
  std::uint32_t ready_head = 0;       //   FIFO from ready_head (each node enters once a run)
  std::vector<std::uint32_t> head;    // per source ring (plan.sources order): next slot
  std::vector<std::uint32_t> tail;    // per destination: next slot to write
  std::vector<std::uint8_t> dirty;    // per destination: written since the last fenced look
  std::vector<std::uint16_t> dirty_list;
  std::vector<std::uint32_t> mark;    // per destination: the last node announced there, + 1
};

struct owner_state {
  std::unique_ptr<owner_part[]> parts;
};

void owner_state_deleter::operator()(owner_state* s) const { delete s; }

owner_plan::owner_plan(const graph_data& g, unsigned P) : parts(P) {
  const auto n = static_cast<std::uint32_t>(g.nodes.size());
  std::vector<std::uint8_t> isolated(n, 0);
  for (std::uint32_t i : g.isolated) isolated[i] = 1;
  // Predecessor lists (edges go from a lower index to a higher one) and levels.
  std::vector<std::uint32_t> pred_begin(n + 1, 0), level(n, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t k = g.succ_begin[i]; k < g.succ_begin[i + 1]; ++k) {
      ++pred_begin[g.succ[k] + 1];
      level[g.succ[k]] = std::max(level[g.succ[k]], level[i] + 1);
    }
  for (std::uint32_t i = 0; i < n; ++i) pred_begin[i + 1] += pred_begin[i];
  std::vector<std::uint32_t> preds(pred_begin[n]);
  {
    std::vector<std::uint32_t> fill(pred_begin.begin(), pred_begin.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t k = g.succ_begin[i]; k < g.succ_begin[i + 1]; ++k)
        preds[fill[g.succ[k]]++] = i;
  }
  std::uint32_t levels = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    if (!isolated[i]) levels = std::max(levels, level[i] + 1);
  std::vector<std::uint32_t> level_begin(levels + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    if (!isolated[i]) ++level_begin[level[i] + 1];
  for (std::uint32_t l = 0; l < levels; ++l) level_begin[l + 1] += level_begin[l];
  std::vector<std::uint32_t> by_level(level_begin[levels]);
  {
    std::vector<std::uint32_t> fill(level_begin.begin(), level_begin.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i)
      if (!isolated[i]) by_level[fill[level[i]]++] = i;
  }
  // Each level shared out: most predecessors at home, within the cap; ties to the block.
  owner.assign(n, 0);
  std::vector<std::uint32_t> votes(P, 0), load(P, 0);
  for (std::uint32_t l = 0; l < levels; ++l) {
    const std::uint32_t lo = level_begin[l], size = level_begin[l + 1] - lo;
    const std::uint32_t cap = (size + P - 1) / P;
    std::fill(load.begin(), load.end(), 0);
    for (std::uint32_t k = 0; k < size; ++k) {
      const std::uint32_t i = by_level[lo + k];
      std::fill(votes.begin(), votes.end(), 0);
      for (std::uint32_t q = pred_begin[i]; q < pred_begin[i + 1]; ++q) ++votes[owner[preds[q]]];
      const auto block = static_cast<unsigned>(std::uint64_t{k} * P / size);
      unsigned best = P;
      for (unsigned p = 0; p < P; ++p) {
        if (load[p] >= cap) continue;
        if (best == P || votes[p] > votes[best] ||
            (votes[p] == votes[best] && p == block))
          best = p;
      }
      owner[i] = static_cast<std::uint16_t>(best);
      ++load[best];
    }
  }
  // Positions within partitions, in index order; the roots.
  part_begin.assign(P + 1, 0);
  root_begin.assign(P + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (isolated[i]) continue;
    ++part_begin[owner[i] + 1];
    if (g.npred[i] == 0) ++root_begin[owner[i] + 1];
  }
  for (unsigned p = 0; p < P; ++p) {
    part_begin[p + 1] += part_begin[p];
    root_begin[p + 1] += root_begin[p];
  }
  part_nodes.resize(part_begin[P]);
  root_nodes.resize(root_begin[P]);
  local.assign(n, 0);
  {
    std::vector<std::uint32_t> fill(part_begin.begin(), part_begin.end() - 1);
    std::vector<std::uint32_t> rfill(root_begin.begin(), root_begin.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (isolated[i]) continue;
      local[i] = fill[owner[i]] - part_begin[owner[i]];
      part_nodes[fill[owner[i]]++] = i;
      if (g.npred[i] == 0) root_nodes[rfill[owner[i]]++] = i;
    }
  }
  // Ring capacities: one message per node and destination partition of its successors.
  ring_cap.assign(std::size_t{P} * P, 0);
  std::vector<std::uint32_t> mark(P, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (isolated[i]) continue;
    for (std::uint32_t k = g.succ_begin[i]; k < g.succ_begin[i + 1]; ++k) {
      const unsigned d = owner[g.succ[k]];
      if (d == owner[i] || mark[d] == i + 1) continue;
      mark[d] = i + 1;
      ++ring_cap[std::size_t{owner[i]} * P + d];
    }
  }
  rings.resize(std::size_t{P} * P);
  sources.resize(P);
  for (unsigned src = 0; src < P; ++src)
    for (unsigned dst = 0; dst < P; ++dst) {
      const std::uint32_t c = ring_cap[std::size_t{src} * P + dst];
      if (c == 0) continue;
      rings[std::size_t{src} * P + dst].reset(new std::atomic<std::uint64_t>[c]);
      for (std::uint32_t k = 0; k < c; ++k)
        rings[std::size_t{src} * P + dst][k].store(0, std::memory_order_relaxed);
      sources[dst].push_back(static_cast<std::uint16_t>(src));
    }
  state.reset(new owner_state);
  state->parts.reset(new owner_part[P]);
}

owner_plan::~owner_plan() = default;

bool owner_placement_possible(const graph_data& g, unsigned workers) {
  return workers >= 2 && workers <= max_owner_parts && !g.roots.empty() &&
         !g.edge_priorities;
}

namespace {

// What one agent task holds and has done.
struct agent {
  core::scheduler* s;
  graph_run* r;
  owner_plan* plan;
  task* self;
  unsigned depth;
  std::vector<unsigned> held;
  std::int32_t ran = 0;  // nodes run or skipped here: the caller's count of them
  bool escaped = false;  // a body suspended or yielded: the partitions were let go
  unsigned since_look = 0;  // nodes run since has_work_before was last asked
  enum class first_failure : std::uint8_t { none, threw, skipped } first = first_failure::none;

  owner_part& part(unsigned p) const { return plan->state->parts[p]; }
  unsigned parts() const { return plan->parts; }
};

void push_agent(core::scheduler* s, core::worker* w, graph_run* r, owner_plan* plan);

// p let go with work left, or a message sent to it while free: an agent task will take it.
void kick(agent& a, core::worker* w, unsigned p) {
  std::uint8_t expected = part_free;
  if (a.part(p).status.compare_exchange_strong(expected, part_kicked, std::memory_order_seq_cst))
    push_agent(a.s, w, a.r, a.plan);
}

// The holder's first claim in a run: the counts, the roots, the ring positions.
void begin_part(agent& a, unsigned p) {
  owner_part& st = a.part(p);
  if (st.lap == a.plan->lap) return;
  const owner_plan& pl = *a.plan;
  const graph_data* g = a.r->g;
  st.lap = pl.lap;
  const std::uint32_t lo = pl.part_begin[p], hi = pl.part_begin[p + 1];
  st.left = hi - lo;
  st.count.resize(hi - lo);
  for (std::uint32_t k = lo; k < hi; ++k)
    st.count[k - lo] = static_cast<std::int32_t>(g->npred[pl.part_nodes[k]]);
  st.ready.assign(pl.root_nodes.begin() + pl.root_begin[p],
                  pl.root_nodes.begin() + pl.root_begin[p + 1]);
  st.ready_head = 0;
  st.head.assign(pl.sources[p].size(), 0);
  st.tail.assign(pl.parts, 0);
  st.dirty.assign(pl.parts, 0);
  st.dirty_list.clear();
  st.mark.assign(pl.parts, 0);
}

bool try_claim(agent& a, unsigned p) {
  std::uint8_t expected = part_kicked;
  if (a.part(p).status.load(std::memory_order_relaxed) != part_kicked ||
      !a.part(p).status.compare_exchange_strong(expected, part_held, std::memory_order_acq_rel))
    return false;
  begin_part(a, p);
  a.held.push_back(p);
  return true;
}

// Claims a partition waiting for an agent, this worker's own first; true if it did.
bool claim_kicked(agent& a, unsigned home) {
  const unsigned P = a.parts();
  for (unsigned k = 0; k < P; ++k)
    if (try_claim(a, (home + k) % P)) return true;
  return false;
}

bool has_ready(const owner_part& st) { return st.ready_head != st.ready.size(); }

std::uint32_t ready_pop(owner_part& st) {
  HYTASK_ASSERT(st.ready_head < st.ready.size(), "a node is taken only from a non-empty ready list");
  const std::uint32_t node = st.ready[st.ready_head++];
  if (st.ready_head == st.ready.size()) {
    st.ready.clear();
    st.ready_head = 0;
  }
  return node;
}

// One successor j of a completed predecessor, at j's home p: one predecessor fewer.
// j's body is fetched on the way: its entry while predecessors remain, its callable and
// its successor list once it is ready. A graph's entries and callables outgrow the core's
// cache at a few tens of thousands of tasks, and a miss on each just before the body was a
// good part of a short task's cost (the ready list is short: a node often runs just after
// it became ready).
void count_one(const graph_data* g, owner_part& st, const owner_plan& pl, std::uint32_t j,
               bool failed) {
  std::int32_t& c = st.count[pl.local[j]];
  if (failed) c |= failed_bit;
  HYTASK_ASSERT((c & ~failed_bit) > 0,
                "a node's pending count reaches zero once: each predecessor counts it down once, "
                "so it enters the ready list once a run");
  if ((--c & ~failed_bit) != 0) {
    core::prefetch(&g->nodes[j]);
    return;
  }
  st.ready.push_back(j);
  core::prefetch(g->nodes[j].body.obj);
  core::prefetch(g->succ.data() + g->succ_begin[j]);  // for its completion (may be the end)
}

// A predecessor on another partition completed (a message): p's successors of it count down.
void count_down(agent& a, unsigned p, std::uint32_t node, bool failed) {
  owner_part& st = a.part(p);
  const graph_data* g = a.r->g;
  const owner_plan& pl = *a.plan;
  for (std::uint32_t k = g->succ_begin[node]; k < g->succ_begin[node + 1]; ++k)
    if (pl.owner[g->succ[k]] == p) count_one(g, st, pl, g->succ[k], failed);
}

// Node `node` of p completed: its successors at home count down, the other partitions hear
// (one message each, however many of its successors they hold).
void complete(agent& a, unsigned p, std::uint32_t node, bool failed) {
  owner_part& st = a.part(p);
  const graph_data* g = a.r->g;
  owner_plan& pl = *a.plan;
  HYTASK_ASSERT(st.left > 0 && pl.owner[node] == p,
                "a partition's node completes once a run, at its own partition");
  --st.left;
  const unsigned P = pl.parts;
  for (std::uint32_t k = g->succ_begin[node]; k < g->succ_begin[node + 1]; ++k) {
    const std::uint32_t j = g->succ[k];
    const unsigned d = pl.owner[j];
    if (d == p) {
      count_one(g, st, pl, j, failed);
      continue;
    }
    if (st.mark[d] == node + 1) continue;
    st.mark[d] = node + 1;
    HYTASK_ASSERT(st.tail[d] < pl.ring_cap[std::size_t{p} * P + d],
                  "a ring holds one run's messages: one per node and destination partition");
    const std::uint64_t msg =
        (std::uint64_t{pl.lap} << 32) | (failed ? failed_msg : 0) | std::uint64_t{node};
    pl.rings[std::size_t{p} * P + d][st.tail[d]++].store(msg, std::memory_order_release);
    if (!st.dirty[d]) {
      st.dirty[d] = 1;
      st.dirty_list.push_back(static_cast<std::uint16_t>(d));
    }
  }
}

// Reads p's rings and late completions; true if any message came.
bool drain(agent& a, unsigned p) {
  owner_part& st = a.part(p);
  owner_plan& pl = *a.plan;
  const unsigned P = pl.parts;
  bool got = false;
  const std::vector<std::uint16_t>& src = pl.sources[p];
  for (std::size_t k = 0; k < src.size(); ++k) {
    std::atomic<std::uint64_t>* ring = pl.rings[std::size_t{src[k]} * P + p].get();
    const std::uint32_t cap = pl.ring_cap[std::size_t{src[k]} * P + p];
    while (st.head[k] < cap) {
      const std::uint64_t m = ring[st.head[k]].load(std::memory_order_acquire);
      if ((m >> 32) != pl.lap) break;
      ++st.head[k];
      got = true;
      HYTASK_ASSERT(pl.owner[m & 0x0fffffffu] == src[k],
                    "a ring carries only its source partition's completions");
      count_down(a, p, static_cast<std::uint32_t>(m & 0x0fffffffu), (m & failed_msg) != 0);
    }
  }
  if (st.late.load(std::memory_order_relaxed) != nullptr) {
    late_done* l = st.late.exchange(nullptr, std::memory_order_acquire);
    while (l != nullptr) {
      late_done* next = l->next;
      complete(a, p, l->node, l->failed);
      delete l;
      l = next;
      got = true;
    }
  }
  return got;
}

// Whether a message waits in p's rings at the given positions, or a late completion.
bool mail_waiting(const agent& a, unsigned p, const std::vector<std::uint32_t>& heads) {
  const owner_plan& pl = *a.plan;
  const unsigned P = pl.parts;
  const std::vector<std::uint16_t>& src = pl.sources[p];
  for (std::size_t k = 0; k < src.size(); ++k) {
    const std::uint32_t cap = pl.ring_cap[std::size_t{src[k]} * P + p];
    if (heads[k] < cap &&
        (pl.rings[std::size_t{src[k]} * P + p][heads[k]].load(std::memory_order_acquire) >> 32) ==
            pl.lap)
      return true;
  }
  return a.part(p).late.load(std::memory_order_acquire) != nullptr;
}

// After a fence: the partitions st wrote to since the last look hear of it by a kick if free.
void kick_dirty(agent& a, core::worker* w, owner_part& st) {
  for (std::uint16_t d : st.dirty_list) {
    st.dirty[d] = 0;
    if (a.part(d).status.load(std::memory_order_seq_cst) == part_free) kick(a, w, d);
  }
  st.dirty_list.clear();
}

// The same for every partition held, after one fence.
void kick_written(agent& a, core::worker* w) {
  core::full_fence();
  for (unsigned p : a.held) kick_dirty(a, w, a.part(p));
}

// Hands a held partition on (free, or kicked for a new agent task); the destinations of its
// last messages hear of them first, after a fence.
void let_go(agent& a, core::worker* w, unsigned p, std::uint8_t to) {
  HYTASK_ASSERT(a.part(p).status.load(std::memory_order_relaxed) == part_held,
                "only the agent that holds a partition lets it go");
  core::full_fence();
  kick_dirty(a, w, a.part(p));
  a.part(p).status.store(to, std::memory_order_seq_cst);
}

// Lets every partition go: finished ones simply; the others to a new agent if they have
// work (a message may arrive just as the status turns free: looked for after it).
void release_all(agent& a, core::worker* w) {
  kick_written(a, w);
  std::vector<unsigned> held;
  held.swap(a.held);
  for (unsigned p : held) {
    owner_part& st = a.part(p);
    const bool work = has_ready(st) && st.left != 0;
    const std::vector<std::uint32_t> heads = st.head;
    HYTASK_ASSERT(st.status.load(std::memory_order_relaxed) == part_held,
                  "only the agent that holds a partition lets it go");
    st.status.store(part_free, std::memory_order_seq_cst);
    if (work || mail_waiting(a, p, heads)) kick(a, w, p);
  }
}

// The escape hook: a body is about to suspend or yield.
void escape(void* arg) {
  auto* a = static_cast<agent*>(arg);
  a->escaped = true;
  release_all(*a, core::current_worker());
}

void note_failure(agent& a, std::exception_ptr e, bool threw) {
  if (a.first == agent::first_failure::none) {
    core::sched::record_error(a.self, std::move(e));
    a.first = threw ? agent::first_failure::threw : agent::first_failure::skipped;
  } else if (threw) {
    a.self->children_threw.fetch_add(1, std::memory_order_relaxed);
  } else {
    a.self->children_skipped.fetch_add(1, std::memory_order_relaxed);
  }
}

// Runs (or skips) one ready node of p. False when the body escaped: the partitions are gone.
bool run_node(agent& a, core::worker*& w, unsigned p, std::uint32_t node) {
  owner_part& st = a.part(p);
  const graph_data* g = a.r->g;
  bool failed = (st.count[a.plan->local[node]] & failed_bit) != 0;
  core::scheduler* s = a.s;
  if (failed) {
    note_failure(a, a.r->first_failure(), false);
  } else if (!(s->cancel_active() != 0 && core::task_cancelled(a.r->caller))) {
    s->note_start(w);
    const std::uint64_t spawned_before = a.self->children_spawned;
    try {
      g->nodes[node].body.call(g->nodes[node].body.obj);
    } catch (...) {
      std::exception_ptr e = std::current_exception();
      if (!(s->cancel_active() != 0 && core::is_task_cancelled(e) &&
            core::task_cancelled(a.r->caller))) {
        failed = true;
        a.r->note_failure(e);
        note_failure(a, std::move(e), true);
      }
    }
    if (a.self->children_spawned != spawned_before) s->wait_children(core::current_worker(), false);
    w = core::current_worker();
    a.self->id = 0;  // the next body's this_task::id is its own
  }
  ++a.ran;
  if (a.escaped) {  // the partition is another agent's now: it completes the node
    owner_part& home = a.part(p);
    late_done* l = new late_done{node, failed, home.late.load(std::memory_order_relaxed)};
    while (!home.late.compare_exchange_weak(l->next, l, std::memory_order_acq_rel)) {
    }
    if (home.status.load(std::memory_order_seq_cst) == part_free) kick(a, w, p);
    return false;
  }
  complete(a, p, node, failed);
  return true;
}

struct agent_task {
  graph_run* r;
  owner_plan* plan;
  void operator()() const;
};

void push_agent(core::scheduler* s, core::worker* w, graph_run* r, owner_plan* plan) {
  push_run_task(s, w, r, agent_task{r, plan});
}

void agent_task::operator()() const {
  core::worker* w = core::current_worker();
  agent a{core::scheduler::instance(), r, plan, w->current_task, w->current_task->depth, {}};
  const std::int64_t spin_ns = static_cast<std::int64_t>(a.s->config().spin_us) * 1000;
  claim_kicked(a, w->index % a.parts());
  // Should a body suspend or yield (or wait for its children), the partitions go first: the
  // node it waits for may be in one of them. Set for the whole loop: nothing else in it
  // suspends.
  core::scheduler::set_escape(w, &escape, &a);
  std::int64_t idle_since = -1;
  unsigned idle_rounds = 0, rounds = 0;
  while (!a.held.empty()) {
    bool progressed = false;
    bool leave = false;
    for (std::size_t h = 0; h < a.held.size() && !leave; ++h) {
      const unsigned p = a.held[h];
      owner_part& st = a.part(p);
      progressed = drain(a, p) || progressed;
      while (has_ready(st)) {
        const std::uint32_t node = ready_pop(st);
        progressed = true;
        if (!run_node(a, w, p, node)) {
          leave = true;
          break;
        }
        // A message sent to a partition let go: kick it now, not at this agent's next idle
        // look (its bodies may be long). A racing release is caught by that look's fence.
        for (std::uint16_t d : st.dirty_list)
          if (a.part(d).status.load(std::memory_order_relaxed) == part_free) kick(a, w, d);
        // Work this worker would take first (a resumed task, a priority, main's wait
        // ended): looked for every few nodes, as a task switch would.
        if ((++a.since_look & 7) == 0 && a.s->has_work_before(w, a.depth)) {
          leave = true;
          break;
        }
      }
    }
    if (a.escaped) break;
    if (leave) {
      release_all(a, w);
      break;
    }
    // Finished partitions are let go (no message can come for them any more).
    for (std::size_t h = 0; h < a.held.size();) {
      owner_part& st = a.part(a.held[h]);
      if (st.left == 0 && !has_ready(st)) {
        const unsigned p = a.held[h];
        a.held[h] = a.held.back();
        a.held.pop_back();
        let_go(a, w, p, part_free);
      } else {
        ++h;
      }
    }
    if (a.held.empty()) {
      claim_kicked(a, w->index % a.parts());
      continue;
    }
    // Holding partitions taken over while another worker idles: give one back to an agent
    // task for that worker to steal.
    if (a.held.size() > 1 && (++rounds & 15) == 0 && a.s->any_worker_idle()) {
      const unsigned p = a.held.back();
      a.held.pop_back();
      let_go(a, w, p, part_kicked);
      push_agent(a.s, w, r, plan);
    }
    if (progressed) {
      idle_since = -1;
      continue;
    }
    // Nothing ready, no message: wait for one, a while. Not with a fence at once: the
    // message this agent just wrote is still on its way to the other core, and a fence
    // would wait for it, one round trip between the cores at every step of the graph.
    if (idle_since < 0) {
      idle_since = core::now_ns();
      idle_rounds = 0;
    }
    core::cpu_relax();  // one: a message is looked for within a pause of its arrival
    if ((++idle_rounds & 511) == 0) {
      kick_written(a, w);
      // A partition waiting for an agent this long: its agent task sits behind other work
      // (or was stolen by no one); take it here.
      const std::int64_t idle = core::now_ns() - idle_since;
      if (idle > takeover_ns && claim_kicked(a, w->index % a.parts())) {
        idle_since = -1;
        continue;
      }
      if (idle > spin_ns || a.s->has_work_before(w, a.depth)) {
        release_all(a, w);
        break;
      }
    }
  }
  if (!a.escaped) core::scheduler::set_escape(w, nullptr, nullptr);
  if (a.ran != 0) r->caller->alive.fetch_sub(a.ran, std::memory_order_acq_rel);
  if (a.first == agent::first_failure::threw) a.self->flags |= flag_error;
  if (a.first == agent::first_failure::skipped) a.self->flags |= flag_error | flag_failed;
}

}  // namespace

void start_owned_run(core::scheduler* s, core::worker* w, graph_run* r, owner_plan* plan) {
#if defined(HYTASK_ASSERTIONS)
  // The previous run (its agents are the caller's children, all done) let every partition
  // go: each kick came with an agent task, and each agent left nothing held. Every node of a
  // partition it began completed, and no late completion was left unread.
  for (unsigned p = 0; p < plan->parts; ++p) {
    const owner_part& st = plan->state->parts[p];
    HYTASK_ASSERT(st.status.load(std::memory_order_relaxed) == part_free,
                  "a run of a graph with owner placement starts with every partition free: "
                  "one run at a time uses the plan's state");
    HYTASK_ASSERT(st.late.load(std::memory_order_relaxed) == nullptr,
                  "every late completion of the previous run was read");
    HYTASK_ASSERT(st.lap != plan->lap || (st.left == 0 && st.ready_head == st.ready.size()),
                  "the previous run completed every node of the partitions it began");
  }
#endif
  if (++plan->lap == 0) {  // the tags wrapped: no slot may carry a stale one
    for (std::size_t k = 0; k < plan->rings.size(); ++k)
      for (std::uint32_t i = 0; i < plan->ring_cap[k]; ++i)
        plan->rings[k][i].store(0, std::memory_order_relaxed);
    plan->lap = 1;
  }
  const unsigned P = plan->parts;
  unsigned agents = 0;
  for (unsigned p = 0; p < P; ++p) {
    owner_part& st = plan->state->parts[p];
    st.late.store(nullptr, std::memory_order_relaxed);
    const bool roots = plan->root_begin[p + 1] != plan->root_begin[p];
    st.status.store(roots ? part_kicked : part_free, std::memory_order_relaxed);
    agents += roots ? 1 : 0;
  }
  for (unsigned k = 0; k < agents; ++k) push_agent(s, w, r, plan);
}

}  // namespace hytask::detail
