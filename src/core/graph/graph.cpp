// hytask::graph: recording a task graph once (its edges found by the dependency tracker) and
// running it many times with no tracking: a task is created when its last predecessor in
// the graph completes, by the worker that completed it.
#include "hytask/core/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/sched/cancellation.hpp"
#include "platform/clock.hpp"
#include "core/graph/graph_data.hpp"
#include "core/graph/graph_owner.hpp"
#include "core/deps/dependency.hpp"
#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"
#include "core/ext/watch.hpp"
#include "hytask/core/spawn.hpp"
#include "platform/assert.hpp"
#include "hytask/errors.hpp"
#include "trace/trace.hpp"

namespace hytask::detail {

graph_data::~graph_data() {
  if (domain != nullptr) drop_recording();
  for (node& n : nodes)
    if (n.body.destroy != nullptr) n.body.destroy(n.body.obj);
}

// Lets go of the tracker and its placeholder records.
void graph_data::drop_recording() {
  // Releases every placeholder the tracker still refers to, into their runtime's pool; if
  // that runtime has ended (a graph never run, outliving it), the records went with it.
  if (core::scheduler::instance() == recorded_in) delete domain;
  domain = nullptr;
  found.clear();
  found.shrink_to_fit();
}

namespace {

void record_edge(void* ctx, task* pred, task* succ) {
  auto* g = static_cast<graph_data*>(ctx);
  HYTASK_ASSERT(succ == g->placeholder, "edges are found only for the node being added");
  HYTASK_ASSERT(pred->spawn_seq >= 1 && pred->spawn_seq < succ->spawn_seq,
                "an edge goes from a node recorded earlier to the one being added (so a "
                "recorded graph has no cycle)");
  g->found.emplace_back(static_cast<std::uint32_t>(pred->spawn_seq - 1),
                        static_cast<std::uint32_t>(succ->spawn_seq - 1));
  ++g->npred[succ->spawn_seq - 1];
}

// Calls the recorded body of a node: the callable stored in each of its task records.
struct node_call {
  const graph_data::node* n;
  void operator()() const { n->body.call(n->body.obj); }
};

void node_done(task* t);

// The task of node i, ready to be placed: a child of the run's caller whose body is the node's.
task* node_task(core::scheduler* s, core::worker* w, graph_run* r, std::uint32_t i) {
  const graph_data::node& n = r->g->nodes[i];
  task* t = s->allocate_counted(w);
  t->parent = r->caller;
  t->depth = r->depth;
  t->priority = n.priority;
  t->spawn_seq = r->seq_base + 1 + i;
  t->flags |= flag_untracked;  // the graph releases its successors, no tracker links any
  if (n.name != nullptr) t->name = n.name;
  core::watch_completion(t, &node_done, r);
  emplace_callable(t, node_call{&n});
  return t;
}

// The roots created by one task at most: more are split off, in halves, to tasks of their
// own that idle workers steal, so that a graph with thousands of independent tasks is not
// created by the calling thread alone, and each worker runs the tasks it created.
constexpr std::uint32_t roots_per_chunk = 16;

void create_roots(core::scheduler* s, core::worker* w, graph_run* r, std::uint32_t lo,
                  std::uint32_t hi);

// Roots [lo, hi) of a run (positions in graph_data::roots), to create where this runs.
struct root_range {
  graph_run* r;
  std::uint32_t lo, hi;
  void operator()() const {
    create_roots(core::scheduler::instance(), core::current_worker(), r, lo, hi);
  }
};

void create_roots(core::scheduler* s, core::worker* w, graph_run* r, std::uint32_t lo,
                  std::uint32_t hi) {
  while (hi - lo > roots_per_chunk) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    push_run_task(s, w, r, root_range{r, mid, hi});  // the upper half
    hi = mid;
  }
  const std::vector<std::uint32_t>& roots = r->g->roots;
  task* batch[roots_per_chunk];
  std::uint32_t n = 0;
  for (std::uint32_t k = lo; k < hi; ++k) batch[n++] = node_task(s, w, r, roots[k]);
  s->push_ready_many(w, batch, n);
}

// Isolated nodes [lo, hi) of a run (positions in graph_data::isolated), run in line.
struct isolated_range {
  graph_run* r;
  std::uint32_t lo, hi;
  void operator()() const;
};

// `rest` (what a range has not run yet) to a task of its own; the range is left empty.
// Also the scheduler's escape hook, when a body suspends or yields.
void give_rest_away(void* arg) {
  auto* rest = static_cast<isolated_range*>(arg);
  if (rest->lo < rest->hi)
    push_run_task(core::scheduler::instance(), core::current_worker(), rest->r, *rest);
  rest->hi = rest->lo;
}

// Runs the bodies one after the other in this task, as a loop over independent iterations
// would: no record, no queue and no completion per node, which is most of what a task
// costs when its body is short (Task Bench's trivial graph: 60-80 ns a task over MPI's loop).
// What a task per node gave stays:
//   - parallelism: lazy splitting — whenever this worker's FIFOs hold nothing a thief could
//     take, the upper half of what is left goes to a task of its own; so ranges are split
//     only as often as workers look for work, down to single nodes;
//   - the scheduler's order: when find_work would take something first (a resumed task, a
//     released successor, a priority, main's wait ended), the rest goes back to the queues;
//   - a node's failure, cancellation, children and this_task::id are its own: a throw fails
//     this task (counted once per node), a cancellation skips the rest, children are waited
//     for before the next body, and the id is cleared between bodies;
//   - a body that suspends or yields (an MPI wait, wait_all on children still running)
//     first gives the rest of the range to a task of its own (the rest may hold the node
//     that wakes it), and is marked escaped: it runs as a task of its own in later runs.
// With tracing on, every node is a task, so that each one appears in the trace.
void isolated_range::operator()() const {
  core::scheduler* s = core::scheduler::instance();
  core::worker* w = core::current_worker();
  task* self = w->current_task;
  const graph_data* g = r->g;
  const unsigned depth = self->depth;
  const bool tracing = trace::enabled();
  isolated_range rest = *this;
  std::int32_t ran = 0;  // nodes this task ran or skipped: the caller's count of them
  bool failed = false;
  while (rest.lo < rest.hi) {
    if (rest.hi - rest.lo >= 2 && core::scheduler::nothing_to_steal(w)) {
      const std::uint32_t mid = rest.lo + (rest.hi - rest.lo) / 2;
      push_run_task(s, w, r, isolated_range{r, mid, rest.hi});
      rest.hi = mid;
    } else if (s->has_work_before(w, depth)) {
      give_rest_away(&rest);
      break;
    }
    const std::uint32_t i = g->isolated[rest.lo++];
    if (tracing || g->escaped[i].load(std::memory_order_relaxed) != 0) {
      s->push_ready(w, node_task(s, w, r, i));
      continue;
    }
    // The nodes are the caller's children: cancelled when it is.
    if (s->cancel_active() != 0 && core::task_cancelled(r->caller)) {
      ran += static_cast<std::int32_t>(rest.hi - rest.lo + 1);  // skipped, as their tasks would be
      break;
    }
    s->note_start(w);
    const std::uint64_t tasks_before = w->tasks_run.load(std::memory_order_relaxed);
    const std::uint64_t spawned_before = self->children_spawned;
    // Should the body (or the wait for its children) suspend or yield, the rest goes to a
    // task of its own first: it may hold the node that would wake this one.
    s->set_escape(w, &give_rest_away, &rest);
    try {
      g->nodes[i].body.call(g->nodes[i].body.obj);
    } catch (...) {
      std::exception_ptr e = std::current_exception();
      // A blocking call interrupted by a cancellation is no failure, as for a task.
      if (!(s->cancel_active() != 0 && core::is_task_cancelled(e) &&
            core::task_cancelled(r->caller))) {
        core::sched::record_error(self, std::move(e));
        if (failed) self->children_threw.fetch_add(1, std::memory_order_relaxed);
        failed = true;
      }
    }
    // Its children are part of it: done before the next node starts (their failures stay
    // in this task's record, as a task's children's would).
    if (self->children_spawned != spawned_before) s->wait_children(core::current_worker(), false);
    core::worker* now = core::current_worker();
    s->set_escape(now, nullptr, nullptr);
    if (now != w || now->tasks_run.load(std::memory_order_relaxed) != tasks_before)
      g->escaped[i].store(1, std::memory_order_relaxed);
    w = now;
    self->id = 0;  // the next body's this_task::id is its own
    ++ran;
  }
  if (ran != 0) r->caller->alive.fetch_sub(ran, std::memory_order_acq_rel);  // this task holds one
  if (failed) self->flags |= flag_error;  // counted as one failure, the others in children_threw
}

// A task of the graph completed (after its children): its successors in the graph that
// were waiting for it alone start, on this worker.
void node_done(task* t) {
  auto* r = static_cast<graph_run*>(core::watch_arg(t));
  const auto i = static_cast<std::uint32_t>(t->spawn_seq - r->seq_base - 1);
  const graph_data* g = r->g;
  HYTASK_ASSERT(t->spawn_seq > r->seq_base && i < g->nodes.size(),
                "a graph task's spawn_seq names a node of its run");
  const std::uint32_t first = g->succ_begin[i], last = g->succ_begin[i + 1];
  if (first == last) return;
  const bool failed = core::sched::has_failed(t);
  if (failed) r->note_failure(t->error);
  core::scheduler* s = core::scheduler::instance();
  core::worker* w = core::current_worker();
  for (std::uint32_t k = first; k < last; ++k) {
    const std::uint32_t j = g->succ[k];
    std::atomic<std::int32_t>& p = r->pending[j];
    if (failed) p.fetch_or(failed_bit, std::memory_order_relaxed);
    const std::int32_t left = p.fetch_sub(1, std::memory_order_acq_rel) - 1;
    HYTASK_ASSERT((left & ~failed_bit) >= 0,
                  "a node's pending count reaches zero once: each predecessor in the graph "
                  "counts it down once, so its task is created once");
    if ((left & ~failed_bit) != 0) continue;
    task* next = node_task(s, w, r, j);
    if (left & failed_bit) core::sched::fail_before_start(next, r->first_failure());
    s->place_released(w, next);
  }
}

// Builds the successor arrays from the recorded edges and lets go of the tracker.
void seal(graph_data& g) {
  std::lock_guard<std::mutex> lock(g.seal_mutex);
  if (g.sealed.load(std::memory_order_acquire)) return;
  const auto n = static_cast<std::uint32_t>(g.nodes.size());
  g.succ_begin.assign(n + 1, 0);
  for (const auto& [p, s] : g.found) ++g.succ_begin[p + 1];
  for (std::uint32_t i = 0; i < n; ++i) g.succ_begin[i + 1] += g.succ_begin[i];
#if defined(HYTASK_ASSERTIONS)
  HYTASK_ASSERT(g.npred.size() == n, "one predecessor count per recorded node");
  std::size_t edges_in = 0;
  for (std::uint32_t i = 0; i < n; ++i) edges_in += g.npred[i];
  HYTASK_ASSERT(edges_in == g.found.size(),
                "every recorded edge counts once among its successor's predecessors: a run's "
                "pending counts then reach zero");
  for (const auto& [p, s] : g.found)
    HYTASK_ASSERT(p < s && s < n, "a recorded edge goes forward, between recorded nodes");
#endif
  g.succ.resize(g.found.size());
  std::vector<std::uint32_t> fill(g.succ_begin.begin(), g.succ_begin.end() - 1);
  for (const auto& [p, s] : g.found) g.succ[fill[p]++] = s;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (g.npred[i] != 0) continue;
    const bool alone = g.succ_begin[i] == g.succ_begin[i + 1] && g.nodes[i].priority == 0 &&
                       g.nodes[i].name == nullptr;
    (alone ? g.isolated : g.roots).push_back(i);
  }
  for (std::uint32_t i = 0; i < n; ++i)  // isolated nodes have none
    if (g.nodes[i].priority != 0) g.edge_priorities = true;
  if (!g.isolated.empty()) {
    g.escaped.reset(new std::atomic<std::uint8_t>[n]);
    for (std::uint32_t i = 0; i < n; ++i) g.escaped[i].store(0, std::memory_order_relaxed);
  }
  // run() checks them against the caller's earlier tasks.
  if (g.domain != nullptr) g.regions = g.domain->regions();
  if (g.domain != nullptr) g.drop_recording();
  g.sealed.store(true, std::memory_order_release);
}

// Whether add may record into g now; a usage error naming the problem if not.
void check_add(graph_data* g) {
  core::require_worker("graph::add");
  if (g->sealed)
    throw usage_error("hytask::graph::add after the graph was sealed (by seal() or its first "
                      "run()): record every task before, or build another graph");
  if (g->adding || g->runs.load(std::memory_order_acquire) != 0)
    throw usage_error("hytask::graph::add while the same graph is being added to or run by "
                      "another thread: record a graph from one thread, before running it");
  if (g->broken)
    throw usage_error("hytask::graph::add: an earlier add on this graph threw half-way, so the "
                      "graph is incomplete; build another graph");
  if (g->domain != nullptr && g->recorded_in != core::scheduler::instance())
    throw usage_error("hytask::graph::add: the graph was begun under a runtime that has ended; "
                      "build another graph under this one");
  // A run counts the graph's tasks among the caller's children at once, beside the share
  // of its body (2^30) in a 32-bit count.
  if (g->nodes.size() >= (std::size_t{1} << 28))
    throw usage_error("hytask::graph::add: more than 2^28 tasks in one graph; split it into "
                      "graphs run one after the other");
}

}  // namespace

void* graph_body_memory(graph_data* g, std::size_t bytes, std::size_t align) {
  check_add(g);
  void* p = g->body_next;
  if (p == nullptr || std::align(align, bytes, p, g->body_left) == nullptr) {
    const std::size_t size = std::max(graph_data::body_chunk, bytes + align);
    g->body_chunks.emplace_back(new std::byte[size]);
    p = g->body_chunks.back().get();
    g->body_left = size;
    std::align(align, bytes, p, g->body_left);  // fits: size >= bytes + align
  }
  g->body_next = static_cast<std::byte*>(p) + bytes;
  g->body_left -= bytes;
  return p;
}

std::size_t graph_begin(graph_data* g, const task_options& opts, graph_body body) {
  struct owner {  // the body is the graph's once it is in a node
    graph_body* b;
    ~owner() {
      if (b && b->destroy) b->destroy(b->obj);
    }
  } own{&body};
  // graph_body_memory checked the graph, before the body was made.
  core::worker* w = core::require_worker("graph::add");
  if (opts.group != nullptr)
    throw usage_error("hytask::graph::add: task_options::group is not supported for a graph's "
                      "tasks; run the graph from a task spawned into the group instead");
  const char* name = opts.name.empty() ? nullptr : core::intern_name(opts.name);
  g->nodes.push_back({body, opts.priority, name});
  own.b = nullptr;
  g->npred.push_back(0);
  if (g->domain == nullptr) {
    g->domain = new dep_domain;
    g->domain->record_edges(&record_edge, g);
    g->recorded_in = core::scheduler::instance();
  }
  HYTASK_ASSERT(g->placeholder == nullptr && !g->adding,
                "one node is added at a time: the previous add ended (graph_end)");
  task* p = core::scheduler::instance()->allocate(w);
  p->spawn_seq = g->nodes.size();
  g->placeholder = p;
  g->adding = true;
  return g->nodes.size() - 1;
}

void graph_region(graph_data* g, const region_access& a) {
  if (a.bytes == 0) return;
  const auto lo = reinterpret_cast<std::uintptr_t>(a.addr);
  const std::uintptr_t hi = lo + a.bytes;
  if (hi < lo)
    throw usage_error("hytask::graph::add: a region wraps around the address space (" +
                      std::to_string(a.bytes) + " bytes); check the count passed to in/out/inout");
  HYTASK_ASSERT(g->placeholder != nullptr && g->adding,
                "accesses are recorded between graph_begin and graph_end, for the node added");
  g->domain->access(g->placeholder, lo, hi, a.mode);
}

void graph_end(graph_data* g) {
  task* p = g->placeholder;
  HYTASK_ASSERT(p != nullptr && g->adding, "graph_end ends an add that graph_begin began");
  g->placeholder = nullptr;
  g->adding = false;
  g->domain->finish_spawn();
  // The tracker's references keep the placeholder until a later access replaces it; without
  // any, it goes back to the pool now. (Its execution reference is the one refs holds.)
  if (p->tracker_refs == 0) core::scheduler::instance()->drop_ref(p);
}

void graph_abort(graph_data* g) {
  if (g->placeholder != nullptr) graph_end(g);
  g->broken = true;
}

}  // namespace hytask::detail

namespace hytask {

graph::graph() : d_(new detail::graph_data) {}
graph::~graph() { delete d_; }
graph::graph(graph&& other) noexcept : d_(other.d_) { other.d_ = new detail::graph_data; }
graph& graph::operator=(graph&& other) noexcept {
  std::swap(d_, other.d_);
  return *this;
}

std::size_t graph::size() const noexcept { return d_->nodes.size(); }
std::size_t graph::edges() const noexcept {
  return d_->sealed.load(std::memory_order_acquire) ? d_->succ.size() : d_->found.size();
}

void graph::seal() {
  detail::graph_data& g = *d_;
  if (g.broken)
    throw usage_error("hytask::graph::seal: an add on this graph threw half-way, so the graph "
                      "is incomplete; build another graph");
  if (g.adding) throw usage_error("hytask::graph::seal while another thread adds to the graph");
  detail::seal(g);
}

void graph::run() {
  using namespace detail;
  core::worker* w = core::require_worker("graph::run");
  graph_data& g = *d_;
  if (g.broken)
    throw usage_error("hytask::graph::run: an add on this graph threw half-way, so the graph is "
                      "incomplete; build another graph");
  if (g.adding)
    throw usage_error("hytask::graph::run while another thread adds to the same graph");
  core::scheduler* s = core::scheduler::instance();
  if (!g.sealed.load(std::memory_order_acquire)) detail::seal(g);
  if (g.nodes.empty()) return;

  task* caller = w->current_task != nullptr ? w->current_task : s->root();
  // Ordered after the caller's earlier tasks on the same memory, as spawned tasks would be.
  if (caller->domain != nullptr) {
    for (const auto& [lo, hi] : g.regions) {
      if (caller->domain->busy(lo, hi)) {
        s->wait_children(w);
        w = core::current_worker();
        break;
      }
    }
  }

  // Where the graph's tasks run (HYTASK_GRAPH_PLACEMENT; graph_choice.hpp): owner placement
  // needs the graph to itself, and is off while tracing (every task then has a record).
  const bool alone = g.runs.fetch_add(1, std::memory_order_acq_rel) == 0;
  const hytask::graph_placement setting = s->config().graph_placement;
  const bool either = alone && setting != hytask::graph_placement::steal &&
                      !trace::enabled() && owner_placement_possible(g, s->size());
  const bool learn = either && setting == hytask::graph_placement::automatic;
  placement mode = placement::steal;
  if (either) mode = learn ? g.choice.next() : placement::owner;
  if (mode == placement::owner && (!g.plan || g.plan->parts != s->size()))
    g.plan = std::make_unique<owner_plan>(g, s->size());
  struct run_end {
    graph_data& g;
    ~run_end() {
      [[maybe_unused]] const int before = g.runs.fetch_sub(1, std::memory_order_acq_rel);
      HYTASK_ASSERT(before > 0, "a run ends once: the count of runs under way never goes negative");
    }
  } end{g};

  const std::int64_t started = core::now_ns();
  const auto n = static_cast<std::uint32_t>(g.nodes.size());
  graph_run r;
  r.g = &g;
  r.caller = caller;
  r.depth = caller == s->root()
                ? std::uint8_t{1}
                : static_cast<std::uint8_t>(caller->depth < max_depth ? caller->depth + 1 : max_depth);
  // The counts are written again each run; their array is reused when no other run has it.
  const bool own_spare = !g.spare_taken.exchange(true, std::memory_order_acq_rel);
  if (own_spare && g.spare_pending) r.pending = std::move(g.spare_pending);
  else r.pending.reset(new std::atomic<std::int32_t>[n]);
  struct keep_spare {
    graph_data& g;
    graph_run& r;
    bool own;
    ~keep_spare() {
      if (!own) return;
      g.spare_pending = std::move(r.pending);
      g.spare_taken.store(false, std::memory_order_release);
    }
  } keep{g, r, own_spare};
  if (mode == placement::steal)
    for (std::uint32_t i = 0; i < n; ++i)
      r.pending[i].store(static_cast<std::int32_t>(g.npred[i]), std::memory_order_relaxed);
  // Every task of the graph is the caller's child from now on, counted as spawn counts one.
  r.seq_base = caller->children_spawned;
  caller->children_spawned += n;
  caller->unpublished += static_cast<std::int32_t>(n);
  if (caller != s->root() && !(caller->flags & flag_parent)) caller->flags |= flag_parent;
  // Published now: tasks of the graph may complete before the wait below publishes it.
  core::scheduler::publish_children(caller);
  if (!g.isolated.empty())
    push_run_task(s, w, &r, isolated_range{&r, 0, static_cast<std::uint32_t>(g.isolated.size())});
  if (mode == placement::owner) start_owned_run(s, w, &r, g.plan.get());
  else create_roots(s, w, &r, 0, static_cast<std::uint32_t>(g.roots.size()));
  // wait_all, without the hooks a layer may put around main's (the global layer's makes it
  // collective): a graph's run involves this process only.
  s->wait_children(w);
#if defined(HYTASK_ASSERTIONS)
  // The caller's children are done, the graph's tasks among them: each node was created once
  // its last predecessor counted it down, so every count reached zero (owner placement keeps
  // its own counts: checked when its next run starts).
  if (mode == placement::steal)
    for (std::uint32_t i = 0; i < n; ++i)
      HYTASK_ASSERT((r.pending[i].load(std::memory_order_relaxed) & ~failed_bit) == 0,
                    "a run ends only when every node's predecessors all counted it down");
#endif
  if (learn) g.choice.record(mode, core::now_ns() - started);
}

}  // namespace hytask
