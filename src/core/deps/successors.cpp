// The successor list (successors.hpp): adding an edge at spawn, freeing the overflow blocks.
#include "core/deps/successors.hpp"

#include "core/sched/scheduler_internal.hpp"
#include "platform/assert.hpp"

namespace hytask::detail {
namespace {

// pred completed (its count closed at `closed`) before succ could be linked to it: had it
// failed, its successors are skipped, and succ is one of them (the acquire on pred's closed
// count shows its error).
void inherit_failure(task* pred, std::uint32_t closed, task* succ) {
  if (closed == successors_closed_failed) core::sched::fail_before_start(succ, pred->error);
}

}  // namespace

void free_successor_blocks(task* t) {
  HYTASK_ASSERT(successors_are_closed(t->nsucc.load(std::memory_order_relaxed)),
                "a task's overflow blocks are freed after its completion closed its list: no "
                "adder can be linking into them any more");
  successor_block* b = t->succ_blocks;
  while (b) {
    successor_block* n = b->next;
    delete b;
    b = n;
  }
  t->succ_blocks = t->succ_tail = nullptr;
  t->succ_overflow = 0;
}

int add_edge(task* pred, task* succ) {
  if (pred == succ) return 0;
  std::uint32_t n = pred->nsucc.load(std::memory_order_acquire);
  if (successors_are_closed(n)) {
    inherit_failure(pred, n, succ);
    return 0;
  }
  // A task that communicates waits for pred: pred joins the communication class, so that what
  // other ranks wait for is produced early (seed 001, sect. 5.2: tasks with an edge leaving
  // the process are raised). Effective when pred is not ready yet.
  if (succ->comm.load(std::memory_order_relaxed) != 0 &&
      pred->comm.load(std::memory_order_relaxed) == 0)
    pred->comm.store(1, std::memory_order_relaxed);
  // Only this thread adds successors to pred, so slot n is ours until the CAS publishes it.
  if (n < task_inline_successors) {
    pred->succ[n] = succ;
  } else {
    std::uint32_t k = (n - task_inline_successors) % successor_block::slots;
    if (k == 0) {
      auto* b = new successor_block;
      b->next = nullptr;
      if (pred->succ_tail) pred->succ_tail->next = b;
      else pred->succ_blocks = b;
      pred->succ_tail = b;
      pred->succ_overflow = 1;  // read by free_task after the tracker let go of pred
    }
    pred->succ_tail->slot[k] = succ;
  }
  // Fails only if pred completed meanwhile; the written slot is then simply unused. The
  // failure must acquire: "no edge" is safe only because pred's completion (and so its
  // writes) happens before everything this spawn publishes.
  if (pred->nsucc.compare_exchange_strong(n, n + 1, std::memory_order_release,
                                          std::memory_order_acquire))
    return 1;
  HYTASK_ASSERT(successors_are_closed(n),
                "only the spawning thread adds successors to a task, so its count changes "
                "under that thread only by the close: else an edge would be lost");
  inherit_failure(pred, n, succ);  // n: the closed count the failed exchange read
  return 0;
}

}  // namespace hytask::detail
