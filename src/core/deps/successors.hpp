// A task's successor list: the edges that spawns add to it (add_edge, from the spawning
// thread) and their release when it completes (release_successors, from the completing one),
// and the overflow blocks freed with the record. The list's count (task::nsucc) is closed at
// completion with the outcome: an edge added after that sees the close and is not made, and a
// successor of a failed task inherits the failure.
#pragma once

#include <algorithm>
#include <cstdint>

#include "hytask/core/detail/task.hpp"
#include "platform/assert.hpp"
#include "platform/cpu.hpp"

namespace hytask::detail {

// Adds the edge pred -> succ unless pred has completed; returns 1 if added. A completed pred
// that failed fails succ (it is skipped).
int add_edge(task* pred, task* succ);

// Whether t completed without failing: its closed count says so, without a look at its
// other lines (written on the core that ran it).
inline bool succeeded(const task* t) {
  return t->nsucc.load(std::memory_order_acquire) == successors_closed;
}

// At t's completion: closes its list with the outcome (`failed`), then calls release(s) for
// each successor linked before the close, in the order they were added. Reads only what the
// closed count covers: an adder that lost the race with the close may still be linking a
// block after those.
template <class Release>
void release_successors(task* t, bool failed, Release&& release) {
  const std::uint32_t n =
      t->nsucc.exchange(failed ? successors_closed_failed : successors_closed, std::memory_order_acq_rel);
  HYTASK_ASSERT(!successors_are_closed(n),
                "a task's successor list is closed once, when it completes: a second close "
                "would release its successors again");
  if (n == 0) return;
  // Successors were spawned on other cores, typically: start fetching all of them before the
  // first (serialising) atomic decrement.
  const std::uint32_t inline_n = std::min(n, task_inline_successors);
  for (std::uint32_t i = 0; i < inline_n; ++i) core::prefetch_for_write(t->succ[i]);
  for (std::uint32_t i = 0; i < inline_n; ++i) release(t->succ[i]);
  std::uint32_t left = n - inline_n;
  if (left == 0) return;
  // The first block, and each next one, only while the count covers more: an adder that
  // lost the race may be linking the first block, or one after the last, right now.
  for (successor_block* b = t->succ_blocks;; b = b->next) {
    const std::uint32_t k = std::min(left, successor_block::slots);
    for (std::uint32_t i = 0; i < k; ++i) release(b->slot[i]);
    left -= k;
    if (left == 0) return;
  }
}

// Frees the overflow successor slots of a task that is being recycled.
void free_successor_blocks(task* t);

}  // namespace hytask::detail
