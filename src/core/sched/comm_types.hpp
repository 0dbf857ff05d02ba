// The task types that have communicated: the communication class learned by the runtime.
//
// A task's type is the type of its callable, which the task record carries as its invoke
// function (one per callable type: emplace_callable instantiates it per type). When a task
// posts a communication (the MPI layer calls learn), its type is remembered, and every later
// task of that type is spawned in the communication class, ahead of ordinary tasks of the
// same priority. The type, not the spawn call site: it costs nothing to obtain (no source
// location threaded through spawn's variadic signature) and it names what the task does
// wherever it is spawned from; a wrapper that erases types (std::function) puts all its tasks
// in one type, which an explicit priority or HYTASK_COMM_PRIORITY=0 overrides.
//
// Lookups are lock-free (an open-addressing table of pointers that only grows); learning a
// new type takes a lock, and the table is replaced by a larger copy when half full (old
// tables are kept until the runtime ends, for lookups still reading them).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "hytask/core/detail/task.hpp"

namespace hytask::core {

class comm_types {
 public:
  comm_types();
  comm_types(const comm_types&) = delete;
  comm_types& operator=(const comm_types&) = delete;

  // Whether tasks of this type have communicated. Cheap when nothing was learned.
  bool contains(detail::invoke_fn f) const noexcept {
    if (count_.load(std::memory_order_relaxed) == 0 || f == nullptr) return false;
    const table* tb = table_.load(std::memory_order_acquire);
    const auto key = reinterpret_cast<std::uintptr_t>(f);
    for (std::size_t i = hash(key, tb->mask);; i = (i + 1) & tb->mask) {
      const std::uintptr_t k = tb->slots[i].load(std::memory_order_relaxed);
      if (k == key) return true;
      if (k == 0) return false;
    }
  }
  // Remembers the type; true when it was new.
  bool learn(detail::invoke_fn f);
  std::size_t size() const noexcept { return count_.load(std::memory_order_relaxed); }

 private:
  struct table {
    explicit table(std::size_t n) : mask(n - 1), slots(new std::atomic<std::uintptr_t>[n]) {
      for (std::size_t i = 0; i < n; ++i) slots[i].store(0, std::memory_order_relaxed);
    }
    std::size_t mask;
    std::unique_ptr<std::atomic<std::uintptr_t>[]> slots;
  };
  static std::size_t hash(std::uintptr_t key, std::size_t mask) {
    return static_cast<std::size_t>((key >> 4) * 0x9E3779B97F4A7C15ull >> 32) & mask;
  }
  static void insert(table& tb, std::uintptr_t key);

  std::atomic<std::size_t> count_{0};
  std::atomic<table*> table_{nullptr};
  std::mutex mutex_;
  std::vector<std::unique_ptr<table>> tables_;  // every table made, the current one last
};

}  // namespace hytask::core
