// A ready queue ordered by key: the highest key first; among equal keys, tasks that already
// started (resumed after a suspension) before those that did not, each group in push order
// (FIFO). Any thread may push and take; a spin lock guards a binary heap.
//
// The scheduler keeps one per worker for tasks whose key is not 0 (a priority was given, or
// the task is in the communication class), and one for tasks that threads which are not
// workers make ready. Tasks of key 0, the common case, never come here: they use the
// cheaper per-depth FIFOs (fifo_levels.hpp), so a program without priorities pays nothing
// for this queue. The top key is published so that workers and thieves decide whether to
// look without taking the lock.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "platform/cpu.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

class ready_heap {
 public:
  static constexpr std::int64_t empty_key = std::numeric_limits<std::int64_t>::min();

  ready_heap() = default;
  ready_heap(const ready_heap&) = delete;
  ready_heap& operator=(const ready_heap&) = delete;

  // `started`: the task ran before (it is resumed): it goes before the unstarted ones of its
  // key, as finishing started tasks keeps few fibers parked (the same rule as for key 0).
  void push(detail::task* t, std::int64_t key, bool started = false) {
    lock();
    const std::uint64_t seq = seq_++;
    heap_.push_back(entry{key, started ? seq : seq | unstarted_bit, t});
    std::push_heap(heap_.begin(), heap_.end(), lower);
    top_.store(heap_.front().key, std::memory_order_relaxed);
    unlock();
  }

  // Takes the first task if its key is at least `min`; null otherwise. `key` receives its key.
  detail::task* pop(std::int64_t min, std::int64_t& key) {
    if (top_.load(std::memory_order_relaxed) < min) return nullptr;
    lock();
    detail::task* t = nullptr;
    if (!heap_.empty() && heap_.front().key >= min) {
      std::pop_heap(heap_.begin(), heap_.end(), lower);
      t = heap_.back().t;
      key = heap_.back().key;
      heap_.pop_back();
      top_.store(heap_.empty() ? empty_key : heap_.front().key, std::memory_order_relaxed);
    }
    unlock();
    return t;
  }

  // The key of the first task, empty_key when empty: a racy hint, exact under the lock.
  std::int64_t top_key() const noexcept { return top_.load(std::memory_order_relaxed); }
  bool maybe_nonempty() const noexcept { return top_key() != empty_key; }

 private:
  struct entry {
    std::int64_t key;
    std::uint64_t seq;  // push order (FIFO among equal keys), unstarted_bit for new tasks
    detail::task* t;
  };
  static constexpr std::uint64_t unstarted_bit = std::uint64_t{1} << 63;
  // std::*_heap keep the greatest element first: "a < b" when b should run first.
  static bool lower(const entry& a, const entry& b) {
    return a.key != b.key ? a.key < b.key : a.seq > b.seq;
  }
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      // Yield now and then: with more workers than cores the holder may be descheduled.
      for (unsigned spins = 0; locked_.load(std::memory_order_relaxed); ++spins)
        if (spins % 128 == 127) std::this_thread::yield();
        else cpu_relax();
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  alignas(64) std::atomic<bool> locked_{false};
  std::atomic<std::int64_t> top_{empty_key};
  std::uint64_t seq_ = 0;
  std::vector<entry> heap_;
};

}  // namespace hytask::core
