// The local dependency tracker of one parent task (a "domain": dependencies order siblings).
//
// Memory is tracked as disjoint fragments [lo, hi), each with the last task that wrote it
// and the tasks that read it since. An access to a region visits the fragments it covers,
// splitting those it covers partly and creating empty ones for gaps, so partly overlapping
// regions are ordered exactly, byte for byte. A hash index from a fragment's start address
// finds the common case — the same region again — without walking the ordered map; the
// map's nodes (which hold the fragments) come from a pool, so new regions allocate nothing
// once the pool has grown to the program's working set.
//
// Only the owner task touches its domain (spawns are sequential within a task), so the
// domain needs no lock. It keeps references to the tasks it names, released when they are
// replaced, pruned or swept; fragments whose tasks have all completed are swept so memory
// stays proportional to the tasks in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/deps/successors.hpp"
#include "platform/assert.hpp"
#include "platform/node_pool.hpp"
#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::detail {

// The readers of a fragment since its last writer: a few inline, more on the heap.
class reader_list {
 public:
  reader_list() = default;
  reader_list(const reader_list& o) { for (task* t : o) push_back(t); }
  reader_list& operator=(const reader_list&) = delete;
  ~reader_list() { delete[] heap_; }

  task** begin() { return heap_ ? heap_ : inline_; }
  task** end() { return begin() + size_; }
  task* const* begin() const { return heap_ ? heap_ : inline_; }
  task* const* end() const { return begin() + size_; }
  std::uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  task* back() const {
    HYTASK_ASSERT(size_ != 0, "back() of a reader list is asked only when it has readers");
    return begin()[size_ - 1];
  }
  void clear() { size_ = 0; }
  void truncate(std::uint32_t n) {
    HYTASK_ASSERT(n <= size_, "pruning keeps a prefix of the readers, never adds unset slots");
    size_ = n;
  }
  void push_back(task* t) {
    if (size_ == capacity_) grow();
    begin()[size_++] = t;
  }

 private:
  void grow() {
    std::uint32_t cap = capacity_ * 2;
    auto* h = new task*[cap];
    for (std::uint32_t i = 0; i < size_; ++i) h[i] = begin()[i];
    delete[] heap_;
    heap_ = h;
    capacity_ = cap;
  }
  static constexpr std::uint32_t inline_count = 3;
  task* inline_[inline_count];
  task** heap_ = nullptr;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = inline_count;
};

struct dep_domain {
  dep_domain() = default;
  dep_domain(const dep_domain&) = delete;
  dep_domain& operator=(const dep_domain&) = delete;
  ~dep_domain();

  // Registers `t`'s access to [lo, hi); returns how many predecessors it must wait for.
  int access(task* t, std::uintptr_t lo, std::uintptr_t hi, access_mode mode) {
    HYTASK_ASSERT(spawning_ == nullptr || spawning_ == t,
                  "one task is registered at a time: the previous one's spawn was finished "
                  "(finish_spawn), else its references are never settled");
    HYTASK_ASSERT(lo < hi, "an access covers at least one byte (empty regions are skipped)");
    spawning_ = t;
    // Fast path: exactly one fragment is this region.
    fragment* f = index_find(lo);
    if (f != nullptr && f->hi == hi) {
      HYTASK_ASSERT(f->lo == lo, "the index maps a fragment's start to that fragment (a stale "
                                 "entry outlived its fragment's erase or split)");
      return apply(*f, t, mode);
    }
    return access_slow(t, lo, hi, mode);
  }
  // Ends the registration of the task passed to access(): from now on its references are
  // counted like any other task's.
  void finish_spawn() { spawning_ = nullptr; }
  // Forgets everything (all tasks named here have completed, e.g. after wait_all).
  void clear();
  // Whether a task registered here on some byte of [lo, hi) has not completed (or failed).
  bool busy(std::uintptr_t lo, std::uintptr_t hi) const;

  // The regions tasks registered here touched, as disjoint [lo, hi) in address order, with
  // adjacent ones merged.
  std::vector<std::pair<std::uintptr_t, std::uintptr_t>> regions() const;

  // Recording (core/graph.cpp): the tasks registered here are placeholders that never run;
  // each edge pred -> succ is reported to fn(ctx, pred, succ) instead of being linked, and
  // counts as no predecessor to wait for. Set before the first access, never unset.
  using edge_fn = void (*)(void* ctx, task* pred, task* succ);
  void record_edges(edge_fn fn, void* ctx) {
    recorder_ = fn;
    recorder_ctx_ = ctx;
  }

  // A domain for a task's children, and its return when the task completes: a few cleared
  // domains are kept per thread with their pools and indexes, so a task that spawns with
  // dependencies does not allocate a tracker each time.
  static dep_domain* acquire();
  static void recycle(dep_domain* d);

 private:
  struct fragment {
    fragment(std::uintptr_t l, std::uintptr_t h) : lo(l), hi(h) {}
    fragment(std::uintptr_t l, std::uintptr_t h, const fragment& o)  // o's upper part
        : lo(l), hi(h), writer(o.writer), readers(o.readers) {}
    std::uintptr_t lo, hi;
    task* writer = nullptr;
    reader_list readers;  // readers since writer
  };
  using fragment_map =
      std::map<std::uintptr_t, fragment, std::less<>,
               core::pool_allocator<std::pair<const std::uintptr_t, fragment>>>;

  int access_slow(task* t, std::uintptr_t lo, std::uintptr_t hi, access_mode mode);
  int apply(fragment& f, task* t, access_mode mode);
  fragment* make_fragment(std::uintptr_t lo, std::uintptr_t hi);
  fragment* split(fragment* f, std::uintptr_t at);  // returns the upper part
  void erase(fragment* f);
  void release(task* t);
  void sweep();
  // An edge found: linked, or reported when recording. Returns the predecessors it adds.
  int link(task* pred, task* succ) {
    if (recorder_ != nullptr) [[unlikely]] {
      if (pred != succ) recorder_(recorder_ctx_, pred, succ);
      return 0;
    }
    return add_edge(pred, succ);
  }
  static bool live(const fragment& f);

  static std::size_t hash_of(std::uintptr_t key, std::size_t mask) {
    return static_cast<std::size_t>(((key >> 3) * 0x9E3779B97F4A7C15ull) >> 20) & mask;
  }
  // Open-addressing index: fragment start -> fragment.
  fragment* index_find(std::uintptr_t key) const {
    if (keys_.empty()) return nullptr;
    const std::size_t mask = keys_.size() - 1;
    for (std::size_t i = hash_of(key, mask);; i = (i + 1) & mask) {
      if (keys_[i] == key) return values_[i];
      if (keys_[i] == 0) return nullptr;
    }
  }
  void index_put(std::uintptr_t key, fragment* f);
  void index_erase(std::uintptr_t key);
  void index_grow();

  core::node_pool nodes_;  // before map_: it outlives the map's nodes
  fragment_map map_{fragment_map::allocator_type(&nodes_)};
  std::vector<std::uintptr_t> dead_;  // sweep's scratch
  std::vector<std::uintptr_t> keys_;
  std::vector<fragment*> values_;
  std::size_t index_used_ = 0;
  std::size_t sweep_at_ = 1024;
  task* spawning_ = nullptr;  // the task being registered: its references are settled at submit
  edge_fn recorder_ = nullptr;
  void* recorder_ctx_ = nullptr;
};

}  // namespace hytask::detail
