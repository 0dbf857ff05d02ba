// Making tasks ready: the ready queues, the injection queue of non-worker threads, mailboxes, and waking sleeping workers.
#include "core/scheduler.hpp"

#include "core/cpu.hpp"
#include "core/futex.hpp"
#include "core/scheduler_internal.hpp"

namespace hytask::core {

using namespace sched;

// ---- ready queues and wake-ups -------------------------------------------------------

void scheduler::push_ready(worker* w, task* t) {
  (t->priority > 0 ? w->high : w->normal).push(t);
  notify_pushed();
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
  {
    const int cls = t->priority > 0 ? 1 : 0;
    std::lock_guard<std::mutex> lock(inject_mutex_);
    injected_[cls].push_back(t);
    has_injected_.fetch_or(1u << cls, std::memory_order_relaxed);
  }
  full_fence();
  if (sleepers_.load(std::memory_order_relaxed) > 0) wake_one();
}

task* scheduler::take_injected(int cls) {
  std::lock_guard<std::mutex> lock(inject_mutex_);
  std::deque<task*>& q = injected_[cls];
  if (q.empty()) return nullptr;
  task* t = q.front();
  q.pop_front();
  if (q.empty()) has_injected_.fetch_and(~(1u << cls), std::memory_order_relaxed);
  return t;
}

void scheduler::post_to_mailbox(unsigned index, task* t) {
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
