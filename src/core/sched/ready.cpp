// Making tasks ready: a worker's ready queues, the injection queue of threads that are not
// workers, mailboxes, and waking sleeping workers.
#include "core/sched/scheduler.hpp"

#include "platform/assert.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "core/sched/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

void scheduler::push_ready(worker* w, task* t) {
  note_queued(t);
  enqueue(w, t);
  notify_pushed();
}

void scheduler::push_ready_many(worker* w, task* const* ts, std::uint32_t n) {
  for (std::uint32_t i = 0; i < n; ++i) {
    note_queued(ts[i]);
    enqueue(w, ts[i]);
  }
  if (n != 0) notify_pushed();
}

void scheduler::enqueue(worker* w, task* t) {
  const std::int64_t key = ready_key(t);
  if (key == 0) {
    if (t->flags & detail::flag_started) w->resumed.push(t);
    else w->levels.push(t, t->depth);
  } else {
    w->prio.push(t, key, (t->flags & detail::flag_started) != 0);
    if (key > 0) positive_ready_.fetch_add(1, std::memory_order_relaxed);
  }
}

// Where a task made ready goes when its worker keeps the first one (the next slot): the
// alternative is this worker's FIFO, from which an idle worker steals it — a look at the
// victim's queues, a CAS, a batch — a few cache-line transfers in series, each over 100 ns
// between two cores. A worker that spins idle has announced that it wants work; writing the
// task into its hand-off slot costs one transfer, and the spinner, which watches that line,
// starts the task right away. Only key-0 tasks, and only while no task of a positive key is
// ready anywhere: the spinner would run those first.
bool scheduler::hand_off(worker* w, task* t) {
  if (positive_ready_.load(std::memory_order_relaxed) > 0) return false;
  for (unsigned v : w->victims) {
    worker* o = workers_[v];
    if (!o->spinning.load(std::memory_order_relaxed) ||
        o->handoff.load(std::memory_order_relaxed) != nullptr)
      continue;
    note_queued(t);
    task* empty = nullptr;
    if (o->handoff.compare_exchange_strong(empty, t, std::memory_order_seq_cst)) {
      // The spinner stops spinning (seq_cst) before it runs other work, sleeps or goes home,
      // and looks at its slot after that. Seen still spinning: it will find the task. Seen
      // stopped: it may never look again — take the task back, unless it already has.
      if (o->spinning.load(std::memory_order_seq_cst)) return true;
      task* mine = t;
      if (!o->handoff.compare_exchange_strong(mine, nullptr, std::memory_order_seq_cst))
        return true;
    }
#if defined(HYTASK_ASSERTIONS)
    t->flags &= ~detail::flag_queued;
#endif
  }
  return false;
}

void scheduler::notify_pushed() {
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

void scheduler::make_ready(task* t) {
  if (worker* w = current_worker()) push_ready(w, t);
  else inject(t);
}

void scheduler::inject(task* t) {
  note_queued(t);
  injected_.push(t, ready_key(t), (t->flags & detail::flag_started) != 0);
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

task* scheduler::take_injected(std::int64_t min) {
  std::int64_t key;
  return injected_.pop(min, key);
}

void scheduler::post_to_mailbox(unsigned index, task* t) {
  note_queued(t);
  worker* w = workers_[index];
  task* head = w->mailbox.load(std::memory_order_relaxed);
  do {
    t->link = head;
  } while (!w->mailbox.compare_exchange_weak(head, t, std::memory_order_release,
                                             std::memory_order_relaxed));
  full_fence();
  wake(w);
}

void scheduler::wake(worker* w) {
  std::uint32_t s = asleep;
  if (w->sleep_word.compare_exchange_strong(s, notified, std::memory_order_acq_rel))
    futex_wake(w->sleep_word);
}

void scheduler::wake_one() {
  const unsigned n = size();
  static std::atomic<unsigned> rotor{0};
  unsigned start = rotor.fetch_add(1, std::memory_order_relaxed);
  for (unsigned k = 0; k < n; ++k) {
    worker* w = workers_[(start + k) % n];
    std::uint32_t s = asleep;
    if (w->sleep_word.compare_exchange_strong(s, notified, std::memory_order_acq_rel)) {
      futex_wake(w->sleep_word);
      return;
    }
  }
}

}  // namespace hytask::core
