// A worker's ready queues for ordinary tasks (key 0): one FIFO per nesting depth.
//
// Order: the deepest non-empty level first, and within a level the oldest task first.
//   - Among the tasks one parent spawns (one level), spawn order: a program that spawns a
//     transfer and then its compute starts the transfer first, as with nanos6's FIFO policy
//     or StarPU's eager scheduler.
//   - Across levels, depth first: a task that spawns children and waits for them has its
//     children run before its older siblings, so a recursive program unfolds depth-first and
//     keeps as few tasks suspended as a LIFO work-stealing deque would (a single FIFO would
//     run it breadth-first: exponentially many tasks suspended in wait_all).
// Thieves take the oldest task of the shallowest level: the largest piece of work.
//
// Contract: push and take are called by the owning worker only, steal by any thread. Each
// level is a ws_deque used only at its FIFO end (push + take_oldest). The owner keeps the set
// of non-empty levels as a bit mask and publishes it (a plain store: only the owner writes it)
// for thieves; only the owner clears a bit, after seeing the level empty — as only the owner
// pushes, an empty level stays empty until its next push, which sets the bit again.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/sched/deque.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

class fifo_levels {
 public:
  static constexpr unsigned levels = detail::max_depth + 1;
  static_assert(levels <= 64, "the level mask is one 64-bit word");
  using queue = ws_deque<detail::task*>;

  fifo_levels() = default;
  fifo_levels(const fifo_levels&) = delete;
  fifo_levels& operator=(const fifo_levels&) = delete;
  ~fifo_levels() {
    for (auto& q : q_) delete q.load(std::memory_order_relaxed);
  }

  void push(detail::task* t, unsigned level) {
    queue* q = q_[level].load(std::memory_order_relaxed);
    if (q == nullptr) {
      q = new queue(64);
      q_[level].store(q, std::memory_order_release);
    }
    q->push(t);
    const std::uint64_t bit = std::uint64_t{1} << level;
    if (!(mask_ & bit)) {
      mask_ |= bit;
      published_.store(mask_, std::memory_order_release);
    }
  }

  // Owner: the oldest task of the deepest non-empty level.
  detail::task* take() {
    while (mask_ != 0) {
      const unsigned level = 63u - static_cast<unsigned>(__builtin_clzll(mask_));
      queue* q = q_[level].load(std::memory_order_relaxed);
      if (detail::task* t = q->take_oldest()) {
        // The next one's record was probably written on another core (spawned there, or
        // stolen from there): start fetching it while this one runs.
        if (detail::task* n = q->peek_oldest()) {
          prefetch_for_write(n);
          prefetch_for_write(reinterpret_cast<char*>(n) + 64);
        }
        return t;
      }
      if (!q->maybe_nonempty()) {  // thieves emptied it (a failed race retries)
        mask_ &= ~(std::uint64_t{1} << level);
        published_.store(mask_, std::memory_order_release);
      }
    }
    return nullptr;
  }

  // Thief: the oldest task of the shallowest level that has one. On success `level` is its
  // level, and `from` the queue, for taking more of the same level (take_more).
  detail::task* steal(unsigned& level, queue*& from) {
    std::uint64_t m = published_.load(std::memory_order_acquire);
    while (m != 0) {
      const unsigned l = static_cast<unsigned>(__builtin_ctzll(m));
      queue* q = q_[l].load(std::memory_order_acquire);
      // take_oldest fails when another taker won the race: try again while tasks are left.
      while (q != nullptr && q->maybe_nonempty())
        if (detail::task* t = q->take_oldest()) {
          level = l;
          from = q;
          return t;
        }
      m &= m - 1;
    }
    return nullptr;
  }

  bool maybe_nonempty() const noexcept { return published_.load(std::memory_order_relaxed) != 0; }
  // Any thread: whether some level holds a task now (a published bit can be stale until the
  // owner looks again, which a sleeping owner does not).
  bool has_ready() const noexcept {
    for (std::uint64_t m = published_.load(std::memory_order_acquire); m != 0; m &= m - 1) {
      const queue* q = q_[__builtin_ctzll(m)].load(std::memory_order_acquire);
      if (q != nullptr && q->maybe_nonempty()) return true;
    }
    return false;
  }
  // Owner: the deepest level that holds a task, -1 when none (drops levels thieves emptied).
  int deepest() noexcept {
    while (mask_ != 0) {
      const unsigned level = 63u - static_cast<unsigned>(__builtin_clzll(mask_));
      if (q_[level].load(std::memory_order_relaxed)->maybe_nonempty()) return static_cast<int>(level);
      mask_ &= ~(std::uint64_t{1} << level);
      published_.store(mask_, std::memory_order_release);
    }
    return -1;
  }
  // Owner's view: whether any level may hold a task.
  bool owner_nonempty() const noexcept { return mask_ != 0; }

 private:
  std::uint64_t mask_ = 0;  // owner's copy of the non-empty levels
  alignas(64) std::atomic<std::uint64_t> published_{0};
  std::atomic<queue*> q_[levels] = {};
};

}  // namespace hytask::core
