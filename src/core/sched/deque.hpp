// Work-stealing deque (Chase & Lev, with the C11 memory orders of Lê et al., PPoPP 2013).
// Contract: push and pop are called only by the owning worker; steal by any thread.
// The buffer grows by doubling; retired buffers are kept until the deque dies, so a
// thief that read an old buffer pointer still reads valid memory. Growth is bounded
// because the number of tasks in flight is (HYTASK_MAX_TASKS).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "platform/cpu.hpp"

namespace hytask::core {

template <class T>
class ws_deque {
  static_assert(std::is_pointer_v<T>, "ws_deque holds pointers");

  struct ring {
    explicit ring(std::int64_t cap) : mask(cap - 1), slots(new std::atomic<T>[cap]) {}
    std::int64_t capacity() const { return mask + 1; }
    T get(std::int64_t i) const {
      return slots[i & mask].load(fences_visible ? std::memory_order_relaxed
                                                 : std::memory_order_acquire);
    }
    void put(std::int64_t i, T v) {
      slots[i & mask].store(v, fences_visible ? std::memory_order_relaxed
                                              : std::memory_order_release);
    }
    std::int64_t mask;
    std::unique_ptr<std::atomic<T>[]> slots;
  };

 public:
  explicit ws_deque(std::int64_t capacity = 256) {
    auto r = std::make_unique<ring>(capacity);
    ring_.store(r.get(), std::memory_order_relaxed);
    rings_.push_back(std::move(r));
  }
  ws_deque(const ws_deque&) = delete;
  ws_deque& operator=(const ws_deque&) = delete;

  void push(T v) {
    std::int64_t b = bottom_.load(std::memory_order_relaxed);
    ring* r = ring_.load(std::memory_order_relaxed);
    // top only grows, so a stale copy overestimates the size: re-read the line thieves
    // write only when the ring looks full.
    if (b - top_cache_ > r->capacity() - 1) {
      top_cache_ = top_.load(std::memory_order_acquire);
      if (b - top_cache_ > r->capacity() - 1) r = grow(r, top_cache_, b);
    }
    r->put(b, v);
    if constexpr (fences_visible) {
      std::atomic_thread_fence(std::memory_order_release);
      bottom_.store(b + 1, std::memory_order_relaxed);
    } else {
      bottom_.store(b + 1, std::memory_order_seq_cst);
    }
  }

  // Owner end: last in, first out.
  T pop() {
    // Cheap emptiness test first: an empty pop must not write bottom (thieves read that
    // line) nor pay for the fence. A stale top is smaller than the real one, so
    // "bottom <= top" seen here means empty.
    if (bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed))
      return nullptr;
    std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    ring* r = ring_.load(std::memory_order_relaxed);
    std::int64_t t;
    if constexpr (fences_visible) {
      bottom_.store(b, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      t = top_.load(std::memory_order_relaxed);
    } else {
      bottom_.store(b, std::memory_order_seq_cst);
      t = top_.load(std::memory_order_seq_cst);
    }
    if (t > b) {  // empty
      bottom_.store(b + 1, std::memory_order_relaxed);
      return nullptr;
    }
    T v = r->get(b);
    if (t == b) {  // last element: race with thieves
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                        std::memory_order_relaxed))
        v = nullptr;
      bottom_.store(b + 1, std::memory_order_relaxed);
    }
    return v;
  }

  // Thief end: first in, first out.
  T steal() {
    std::int64_t t = top_.load(fences_visible ? std::memory_order_acquire
                                              : std::memory_order_seq_cst);
    if constexpr (fences_visible) std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t b = bottom_.load(fences_visible ? std::memory_order_acquire
                                                 : std::memory_order_seq_cst);
    if (t >= b) return nullptr;
    ring* r = ring_.load(std::memory_order_acquire);
    T v = r->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst,
                                      std::memory_order_relaxed))
      return nullptr;
    return v;
  }

  // Takes the oldest element, for deques whose owner never pops (a FIFO of yielded tasks).
  // Without owner pops bottom only grows, so the fence that orders top and bottom in steal()
  // is not needed: the CAS on top arbitrates between takers.
  T take_oldest() {
    std::int64_t t = top_.load(std::memory_order_acquire);
    std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return nullptr;
    T v = ring_.load(std::memory_order_acquire)->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_acq_rel,
                                      std::memory_order_relaxed))
      return nullptr;
    return v;
  }

  // The element take_oldest would return next, or null; racy (another taker may win it), for
  // prefetching only: the pointer may already be taken, or its object reused.
  T peek_oldest() const {
    const std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t >= bottom_.load(std::memory_order_relaxed)) return nullptr;
    return ring_.load(std::memory_order_acquire)->get(t);
  }

  // Racy size estimate, good enough to decide whether to look closer.
  bool maybe_nonempty() const {
    return bottom_.load(std::memory_order_relaxed) > top_.load(std::memory_order_relaxed);
  }
  std::int64_t size_estimate() const {
    return std::max<std::int64_t>(
        0, bottom_.load(std::memory_order_relaxed) - top_.load(std::memory_order_relaxed));
  }

 private:
  ring* grow(ring* old, std::int64_t t, std::int64_t b) {
    auto bigger = std::make_unique<ring>(old->capacity() * 2);
    for (std::int64_t i = t; i < b; ++i) bigger->put(i, old->get(i));
    ring* r = bigger.get();
    rings_.push_back(std::move(bigger));  // old rings stay alive for racing thieves
    ring_.store(r, std::memory_order_release);
    return r;
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::int64_t top_cache_ = 0;  // owner's last view of top_
  alignas(64) std::atomic<ring*> ring_{nullptr};
  std::vector<std::unique_ptr<ring>> rings_;
};

}  // namespace hytask::core
