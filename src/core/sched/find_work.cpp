// Finding work: the order in which a worker takes ready tasks, and stealing.
//
// A worker takes, in this order:
//   1. the task suspend gave back (`first`), then a task another worker handed it while it
//      spun idle (`handoff`), then its mailbox (loop participants);
//   2. tasks of a positive key: its own heap or the injection queue, whichever has the higher;
//      if neither has one but another worker's heap does, it steals the highest there;
//   3. every inject_check_period steps, an injected task of any key (fairness);
//   4. the next slot: the successor the task that just finished released (cache reuse);
//   5. its resumed key-0 tasks (oldest first: finishing started tasks keeps few fibers
//      parked), its FIFOs of key-0 tasks (deepest level first, oldest first), injected ones;
//   6. key-0 tasks of other workers: resumed ones, then the shallowest level's oldest (in
//      batches);
//   7. tasks of a negative key: its own, injected, then other workers';
//   8. yielded tasks, its own then others' (oldest first).
// So on one worker a ready task never starts while one of a higher key waits, and among equal
// keys the order is FIFO but for the next slot.
#include "core/sched/scheduler.hpp"

#include <algorithm>

#include "core/sched/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

task* scheduler::pop_prio(worker* w, std::int64_t min) {
  std::int64_t key;
  task* t = w->prio.pop(min, key);
  if (t != nullptr && key > 0) positive_ready_.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

task* scheduler::steal_prio(worker* w, std::int64_t min) {
  for (;;) {
    worker* best = nullptr;
    std::int64_t best_key = ready_heap::empty_key;
    for (unsigned v : w->victims) {
      const std::int64_t k = workers_[v]->prio.top_key();
      if (k >= min && k > best_key) {
        best_key = k;
        best = workers_[v];
      }
    }
    if (best == nullptr) return nullptr;
    std::int64_t key;
    if (task* t = best->prio.pop(min, key)) {
      if (key > 0) positive_ready_.fetch_sub(1, std::memory_order_relaxed);
      return t;
    }
    // Taken meanwhile: look again (the heaps only shrink while this worker looks, unless
    // their owners push, which is progress too).
  }
}

task* scheduler::steal_levels(worker* w) {
  // Announced before the first take: a batch in transit is in no worker's queue, and a worker
  // must not conclude from that that no ordinary task is left (and start a negative one).
  bool any = false;
  for (unsigned v : w->victims) any = any || workers_[v]->levels.maybe_nonempty();
  if (!any) return nullptr;
  in_transit_.fetch_add(1, std::memory_order_seq_cst);
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (!o->levels.maybe_nonempty()) continue;
    unsigned level = 0;
    fifo_levels::queue* q = nullptr;
    task* t = o->levels.steal(level, q);
    if (t == nullptr) continue;
    // A steal costs a few cache-line transfers; take a batch of the same level while the
    // victim has plenty (the lines are now in this core's cache, so the next steals are
    // cheap). They keep their order: the oldest is run, the rest queued behind it.
    const std::int64_t batch = std::min<std::int64_t>(steal_batch_max, q->size_estimate() / 2);
    std::int64_t moved = 0;
    for (; moved < batch; ++moved) {
      task* more = q->take_oldest();
      if (more == nullptr) break;
      w->levels.push(more, level);
    }
    if (moved != 0) notify_pushed();
    in_transit_.fetch_sub(1, std::memory_order_seq_cst);
    return t;
  }
  in_transit_.fetch_sub(1, std::memory_order_seq_cst);
  return nullptr;
}

task* scheduler::steal_oldest(worker* w, ws_deque<task*> worker::*fifo) {
  for (unsigned v : w->victims) {
    ws_deque<task*>& q = workers_[v]->*fifo;
    while (q.maybe_nonempty())  // take_oldest fails when another taker won: try again
      if (task* t = q.take_oldest()) return t;
  }
  return nullptr;
}

task* scheduler::find_work(worker* w) {
  task* t = nullptr;
  if ((t = w->first) != nullptr) {
    w->first = nullptr;
    note_taken(t);
    return t;
  }
  if (w->handoff.load(std::memory_order_relaxed) != nullptr &&
      (t = w->handoff.exchange(nullptr, std::memory_order_acquire)) != nullptr) {
    note_taken(t);
    return t;
  }
  if (w->mailbox_local == nullptr && w->mailbox.load(std::memory_order_relaxed) != nullptr)
    w->mailbox_local = w->mailbox.exchange(nullptr, std::memory_order_acquire);
  if ((t = w->mailbox_local) != nullptr) {
    w->mailbox_local = t->link;
  } else {
    const std::int64_t own = w->prio.top_key(), injected = injected_.top_key();
    if (own > 0 || injected > 0) {
      t = injected > own ? take_injected(1) : pop_prio(w, 1);
      if (t == nullptr) t = own > injected ? take_injected(1) : pop_prio(w, 1);
    }
    if (t == nullptr && positive_ready_.load(std::memory_order_relaxed) > 0) t = steal_prio(w, 1);
    // Children completed here are counted out of their parent in batches; once no sibling of
    // theirs is left on this worker, count them now: if they were the parent's last, it
    // resumes in the next slot, before this worker climbs to shallower (older) work.
    if (t == nullptr && w->done_parent != nullptr && w->next == nullptr &&
        w->levels.deepest() <= static_cast<int>(w->done_parent->depth))
      flush_children(w);
    if (t != nullptr) {
    } else if (injected != ready_heap::empty_key && ++w->inject_tick >= inject_check_period &&
               (t = take_injected(ready_heap::empty_key)) != nullptr) {
      w->inject_tick = 0;
    } else if ((t = w->next) != nullptr) {
      w->next = nullptr;
      note_taken(t);
      return t;
    } else if (w->resumed.maybe_nonempty() && (t = w->resumed.take_oldest()) != nullptr) {
    } else if ((t = w->levels.take()) != nullptr) {
    } else if (injected >= 0 && (t = take_injected(0)) != nullptr) {
    } else if ((t = steal_oldest(w, &worker::resumed)) != nullptr) {
    } else if ((t = steal_levels(w)) != nullptr) {
    } else if (in_transit_.load(std::memory_order_seq_cst) != 0) {
      // Ordinary tasks may be on their way between two workers: look again before taking a
      // task of negative priority (returning null costs an idle round, not a sleep: the
      // thief's pushes are visible work).
    } else if (w->prio.maybe_nonempty() && (t = pop_prio(w, ready_heap::empty_key)) != nullptr) {
    } else if (injected != ready_heap::empty_key &&
               (t = take_injected(ready_heap::empty_key)) != nullptr) {
    } else if ((t = steal_prio(w, ready_heap::empty_key)) != nullptr) {
    } else if (w->yielded.maybe_nonempty() && (t = w->yielded.take_oldest()) != nullptr) {
    } else {
      t = steal_oldest(w, &worker::yielded);
    }
  }
  // The next-slot task must not sit unstealable behind other work.
  if (t != nullptr) {
    spill_slot(w, w->next);
    note_taken(t);
  }
  return t;
}

bool scheduler::has_work_before(worker* w, unsigned depth) {
  // find_work's order, up to w's own FIFOs: the slots, the mailbox, a positive key anywhere,
  // resumed tasks, a deeper level.
  if (w->first != nullptr || w->next != nullptr || w->mailbox_local != nullptr ||
      w->handoff.load(std::memory_order_relaxed) != nullptr ||
      w->mailbox.load(std::memory_order_relaxed) != nullptr)
    return true;
  if (w->prio.top_key() > 0 || injected_.top_key() > 0 ||
      positive_ready_.load(std::memory_order_relaxed) > 0)
    return true;
  if (w->resumed.maybe_nonempty() || w->levels.deepest() > static_cast<int>(depth)) return true;
  // Main helping while it waits (help_until): what it waits for has happened.
  return w->help_pred != nullptr && w->help_pred(w->help_arg, false);
}

bool scheduler::work_visible(worker* w) {
  if (w->handoff.load(std::memory_order_relaxed) || w->first || w->mailbox_local ||
      w->mailbox.load(std::memory_order_relaxed) || w->next ||
      w->yielded.maybe_nonempty() || w->prio.maybe_nonempty() || w->levels.owner_nonempty() ||
      w->resumed.maybe_nonempty() || injected_.maybe_nonempty())
    return true;
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->prio.maybe_nonempty() || o->levels.has_ready() || o->resumed.maybe_nonempty() ||
        o->yielded.maybe_nonempty())
      return true;
  }
  return false;
}

}  // namespace hytask::core
