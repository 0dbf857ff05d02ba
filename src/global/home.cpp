#include "global/home.hpp"

#include <algorithm>
#include <stdexcept>

#include "hytask/errors.hpp"
#include "platform/assert.hpp"

namespace hytask::global::detail {

home::home(int self, std::function<std::string(std::uint64_t)> describe)
    : self_(self), describe_(std::move(describe)) {}

home::~home() {
  std::vector<node*> all;
  for (auto& [key, c] : chains_) {
    if (c.last_out) all.push_back(c.last_out);
    for (node* r : c.readers) all.push_back(r);
  }
  for (auto& [phase, list] : unmatched_)
    for (const entry& e : list) all.push_back(e.n);
  for (auto& [k, n] : remote_)
    if (n->matched && !n->in_chain) all.push_back(n);
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  for (node* n : all) delete n;
  for (node* n : free_) delete n;
}

std::uint64_t home::remote_key(int rank, std::uint64_t id) noexcept {
  // Ids are per-rank sequence numbers (under 2^44 in any run); the rank fills the top bits.
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)) << 44) ^ id;
}

node* home::new_node() {
  node* n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    n = new node;
  }
  ++nodes_;
  return n;
}

void home::free_node(node* n) {
  HYTASK_ASSERT(nodes_ > 0 && n->complete,
                "a node is freed once, after its access completed (nodes alive never below zero)");
  n->succ.clear();
  std::vector<node*> keep = std::move(n->succ);
  *n = node{};
  n->succ = std::move(keep);  // keeps its capacity for the next use
  --nodes_;
  free_.push_back(n);
}

bool home::idle() const noexcept {
  return nodes_ == 0 && chains_.empty() && unmatched_.empty() && remote_.empty() &&
         early_complete_.empty();
}

node* home::add_local(task_record* t, std::uint64_t key, dep_kind k, std::uint32_t phase,
                      std::uint64_t seq) {
  node* n = new_node();
  n->task = t;
  n->rank = self_;
  n->kind = k;
  unmatched_[phase].push_back(entry{key, self_, seq, n});
  return n;
}

void home::add_remote(int rank, const record& a) {
  node* n = new_node();
  n->id = a.id;
  n->key = a.key;
  n->rank = rank;
  n->kind = a.kind;
  n->push = (a.flags & flag_push) != 0;
  n->holds = n->push ? 2 : 1;
  const std::uint64_t rk = remote_key(rank, a.id);
  // A C record before its A (a task of a first phase that completed early) is possible only
  // without push: a copyin's task completes after the data, which follows matching.
  auto early = n->push ? early_complete_.end() : early_complete_.find(rk);
  if (early != early_complete_.end()) {
    n->complete = true;
    n->ended = early->second;
    early_complete_.erase(early);
  } else {
    [[maybe_unused]] const bool fresh = remote_.emplace(rk, n).second;
    HYTASK_ASSERT(fresh, "an A record is handled once: one node per remote access");
  }
  unmatched_[a.phase].push_back(entry{a.key, rank, a.seq, n});
}

void home::complete_local(node* n, std::uint16_t ended, effects& fx) {
  HYTASK_ASSERT(n->task != nullptr && n->rank == self_,
                "a local access completes once, with its task (which is cleared then)");
  n->task = nullptr;
  n->ended = ended;
  finish(n, fx);
}

void home::complete_remote(int rank, std::uint64_t id, std::uint16_t ended, effects& fx) {
  const std::uint64_t rk = remote_key(rank, id);
  auto it = remote_.find(rk);
  if (it == remote_.end()) {
    [[maybe_unused]] const bool fresh = early_complete_.emplace(rk, ended).second;
    HYTASK_ASSERT(fresh, "a C record is handled once: an access completes once");
    return;
  }
  it->second->ended |= ended;
  release_hold(it, fx);
}

void home::push_sent(int rank, std::uint64_t id, effects& fx) {
  auto it = remote_.find(remote_key(rank, id));
  if (it == remote_.end())
    throw std::logic_error("hytask: internal error: a copyin sent to rank " + std::to_string(rank) +
                           " that no access waits for");
  release_hold(it, fx);
}

void home::release_hold(std::unordered_map<std::uint64_t, node*>::iterator it, effects& fx) {
  node* n = it->second;
  HYTASK_ASSERT(n->holds > 0, "a remote access's holds (its C record, a copyin's send) are "
                              "released once each: never below zero");
  if (--n->holds != 0) return;
  remote_.erase(it);
  finish(n, fx);
}

// A remote access whose predecessors here have completed: its B record, and for a copyin its
// data.
void home::released(node* n, effects& fx) {
  if (n->b) fx.releases.push_back(release_order{n->rank, n->id, n->inherited});
  if (n->push) fx.pushes.push_back(push_order{n->rank, n->id, n->key});
}

// succ follows an access of another rank that was cancelled or failed: it will be skipped.
void home::inherit(node* succ, std::uint16_t ended) {
  if (succ->task) succ->task->inherited |= ended;
  else succ->inherited |= ended;
}

// n's task completed: its successors on other ranks lose a predecessor.
void home::finish(node* n, effects& fx) {
  HYTASK_ASSERT(!n->complete, "an access completes once: its successors lose it once");
  n->complete = true;
  if (!n->matched) return;  // matching will find it complete
  for (node* s : n->succ) {
    HYTASK_ASSERT(s->matched && !s->complete,
                  "a chain link leads to a matched access that waits for its predecessor");
    if (n->ended) inherit(s, n->ended);
    if (s->task) {
      HYTASK_ASSERT(s->task->gate > 0, "a predecessor on another rank opens one share of a "
                                       "task's gate: never below zero");
      if (--s->task->gate == 0) fx.ready.push_back(s->task);
    } else {
      HYTASK_ASSERT(s->waiting > 0, "a remote access waits for each of its predecessors here "
                                    "once: never below zero");
      if (--s->waiting == 0) released(s, fx);
    }
  }
  n->succ.clear();
  if (!n->in_chain) {
    free_node(n);
    return;
  }
  chain* c = n->where;
  HYTASK_ASSERT(c->incomplete > 0, "a chain counts its nodes not completed: never below zero");
  if (n->ended) ++c->ended_badly;  // kept: later accesses inherit how it ended
  if (--c->incomplete == 0 && c->ended_badly == 0) {
    drop_chain(c->key, *c);
    return;
  }
  // Readers only wait for the writer before them, and a later writer skips completed nodes:
  // once half the readers are done, free them (amortised O(1) per reader).
  if (n->kind == dep_kind::in && 2 * ++c->done_readers > c->readers.size()) prune_readers(*c);
}

void home::prune_readers(chain& c) {
  std::size_t kept = 0;
  for (node* r : c.readers) {
    if (r->complete && !r->ended) free_node(r);  // resets the node, its chain fields too
    else c.readers[kept++] = r;
  }
  c.readers.resize(kept);
  c.done_readers = 0;
}

void home::enter(chain& c, node* n) {
  HYTASK_ASSERT(!n->in_chain && n->matched, "an access enters a chain once, when matched");
  n->in_chain = true;
  n->where = &c;
  if (!n->complete) ++c.incomplete;
  else if (n->kind == dep_kind::in) ++c.done_readers;
  if (n->complete && n->ended) ++c.ended_badly;
}

void home::leave(node* n) {
  chain* c = n->where;
  HYTASK_ASSERT(n->in_chain && c != nullptr, "only a node in a chain leaves it");
  HYTASK_ASSERT(n->complete || c->incomplete > 0,
                "a chain counts its nodes not completed: never below zero");
  n->in_chain = false;
  n->where = nullptr;
  if (n->complete && n->ended) --c->ended_badly;
  if (n->complete) free_node(n);
  else --c->incomplete;
}

void home::drop_chain(std::uint64_t key, chain& c) {
  // Every node in it has completed: later accesses have nothing to wait for here.
#if defined(HYTASK_ASSERTIONS)
  HYTASK_ASSERT(c.incomplete == 0 && (c.last_out == nullptr || c.last_out->complete),
                "a chain is dropped only when every node in it has completed");
  for (node* r : c.readers)
    HYTASK_ASSERT(r->complete, "a chain is dropped only when every node in it has completed");
#endif
  if (c.last_out) free_node(c.last_out);
  for (node* r : c.readers) free_node(r);
  chains_.erase(key);
}

std::string home::conflict(std::uint64_t key, std::uint32_t phase, const entry* b, const entry* e) const {
  // Name a writer and a rank other than it.
  const entry* w = nullptr;
  for (const entry* p = b; p != e; ++p)
    if (p->n->kind == dep_kind::out) {
      w = p;
      break;
    }
  const entry* o = nullptr;
  for (const entry* p = b; p != e; ++p)
    if (p->rank != w->rank) {
      o = p;
      break;
    }
  auto kind = [](const entry* x) { return x->n->kind == dep_kind::out ? "out/inout" : "in"; };
  return std::string(
      "hytask: conflicting accesses to " + describe_(key) + " in phase " +
      std::to_string(phase) + ": rank " + std::to_string(w->rank) + " declares " + kind(w) +
      " and rank " + std::to_string(o->rank) + " declares " + kind(o) +
      "; within one phase, accesses of different ranks to one location must all be "
      "reads. Separate the write from the other rank's access with hytask::fence() on "
      "every rank. The tasks of those accesses, and their successors, were skipped");
}

void home::match(std::uint32_t phase, bool first, effects& fx) {
  auto it = unmatched_.find(phase);
  if (it == unmatched_.end()) return;
  std::vector<entry> list = std::move(it->second);
  unmatched_.erase(it);
  std::stable_sort(list.begin(), list.end(), [](const entry& a, const entry& b) {
    if (a.key != b.key) return a.key < b.key;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.seq < b.seq;
  });

  for (std::size_t i = 0; i < list.size();) {
    std::size_t j = i;
    bool write = false, ranks = false;
    for (; j < list.size() && list[j].key == list[i].key; ++j) {
      write |= list[j].n->kind == dep_kind::out;
      ranks |= list[j].rank != list[i].rank;
    }
    // A write and another rank's access in one phase: reported, and the accesses skipped.
    const std::uint16_t bad = write && ranks ? flag_failed | flag_conflict : 0;
    if (bad) conflicts_.push_back(conflict(list[i].key, phase, &list[i], &list[j - 1] + 1));

    chain& c = chains_[list[i].key];
    c.key = list[i].key;
    for (std::size_t k = i; k < j; ++k) {
      node* g = list[k].n;
      HYTASK_ASSERT(!g->matched, "an access is matched once, with its phase");
      g->matched = true;
      if (g->task == nullptr && g->rank != self_) g->b = !first;
      auto edge = [&](node* p) {
        if (p->rank == g->rank && !g->push) return;  // the accessing rank's tracker orders them
        // A first phase's tasks are not gated (they may have run): a conflict among them adds
        // no edges, it is only reported.
        if (first && bad) return;
        if (p->complete) {
          if (p->ended) inherit(g, p->ended);
          return;
        }
        p->succ.push_back(g);
        if (p->task != nullptr && !p->task->remote_succ) {
          p->task->remote_succ = true;
          fx.remote_succ.push_back(p->task);
        }
        if (g->task) ++g->task->gate;
        else ++g->waiting;
      };
      if (c.last_out) edge(c.last_out);
      if (bad) inherit(g, bad);
      if (g->kind == dep_kind::out) {
        for (node* r : c.readers) edge(r);
        for (node* r : c.readers) leave(r);
        c.readers.clear();
        c.done_readers = 0;
        if (c.last_out) leave(c.last_out);
        c.last_out = g;
      } else {
        c.readers.push_back(g);
      }
      enter(c, g);
    }
    // Remote accesses with nothing to wait for are released now (a first phase's need no B,
    // but a copyin's needs its data).
    for (std::size_t k = i; k < j; ++k) {
      node* g = list[k].n;
      if (g->task == nullptr && g->rank != self_ && g->waiting == 0 && !g->complete) released(g, fx);
    }
    if (c.incomplete == 0 && c.ended_badly == 0) drop_chain(c.key, c);
    else if (2 * c.done_readers > c.readers.size()) prune_readers(c);
    i = j;
  }
}

void home::end_epoch() {
  std::vector<std::uint64_t> keys;
  for (const auto& [key, c] : chains_) {
    HYTASK_ASSERT(c.incomplete == 0, "an epoch ends once every access has completed");
    keys.push_back(key);
  }
  for (std::uint64_t key : keys) drop_chain(key, chains_.at(key));
}

}  // namespace hytask::global::detail
