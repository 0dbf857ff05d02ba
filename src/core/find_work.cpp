// Finding work: the order in which a worker takes ready tasks, and stealing.
#include "core/scheduler.hpp"

#include <algorithm>

#include "core/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

// ---- finding work --------------------------------------------------------------------

task* scheduler::steal(worker* w) {
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->high.maybe_nonempty())
      if (task* t = o->high.steal()) return t;
  }
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (!o->normal.maybe_nonempty()) continue;
    task* t = o->normal.steal();
    if (t == nullptr) continue;
    // A steal costs a few cache-line transfers; take a batch while the victim has plenty
    // (the lines are now in this core's cache, so the next steals are cheap).
    std::int64_t batch = std::min<std::int64_t>(steal_batch_max, o->normal.size_estimate() / 2);
    for (std::int64_t k = 0; k < batch; ++k) {
      task* more = o->normal.steal();
      if (more == nullptr) break;
      w->normal.push(more);
    }
    return t;
  }
  return nullptr;
}

task* scheduler::steal_yielded(worker* w) {
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->yielded.maybe_nonempty())
      if (task* t = o->yielded.take_oldest()) return t;
  }
  return nullptr;
}

task* scheduler::find_work(worker* w) {
  task* t = nullptr;
  if (w->mailbox_local == nullptr && w->mailbox.load(std::memory_order_relaxed) != nullptr)
    w->mailbox_local = w->mailbox.exchange(nullptr, std::memory_order_acquire);
  const unsigned injected = has_injected_.load(std::memory_order_relaxed);
  if ((t = w->mailbox_local) != nullptr) {
    w->mailbox_local = t->link;
  } else if ((t = w->high.pop()) != nullptr) {
  } else if ((injected & 2u) && (t = take_injected(1)) != nullptr) {
  } else if ((injected & 1u) && ++w->inject_tick >= inject_check_period &&
             (t = take_injected(0)) != nullptr) {
    w->inject_tick = 0;
  } else if ((t = w->next) != nullptr) {
    w->next = nullptr;
    return t;
  } else if ((t = w->normal.pop()) == nullptr) {
    if (injected & 1u) t = take_injected(0);
    if (t == nullptr) t = steal(w);
    if (t == nullptr && w->yielded.maybe_nonempty()) t = w->yielded.take_oldest();
    if (t == nullptr) t = steal_yielded(w);
  }
  // The next-slot task must not sit unstealable behind other work.
  if (t != nullptr && w->next != nullptr) {
    push_ready(w, w->next);
    w->next = nullptr;
  }
  return t;
}

bool scheduler::work_visible(worker* w) {
  if (w->mailbox_local || w->mailbox.load(std::memory_order_relaxed) || w->next ||
      w->yielded.maybe_nonempty() || w->high.maybe_nonempty() || w->normal.maybe_nonempty() ||
      has_injected_.load(std::memory_order_relaxed))
    return true;
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (o->high.maybe_nonempty() || o->normal.maybe_nonempty() || o->yielded.maybe_nonempty())
      return true;
  }
  return false;
}

}  // namespace hytask::core
