// The learned communication class: see comm_types.hpp.
#include "core/sched/comm_types.hpp"

namespace hytask::core {

comm_types::comm_types() {
  tables_.push_back(std::make_unique<table>(64));
  table_.store(tables_.back().get(), std::memory_order_release);
}

void comm_types::insert(table& tb, std::uintptr_t key) {
  for (std::size_t i = hash(key, tb.mask);; i = (i + 1) & tb.mask) {
    const std::uintptr_t k = tb.slots[i].load(std::memory_order_relaxed);
    if (k == key) return;
    if (k == 0) {
      tb.slots[i].store(key, std::memory_order_release);
      return;
    }
  }
}

bool comm_types::learn(detail::invoke_fn f) {
  if (f == nullptr || contains(f)) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (contains(f)) return false;
  table* tb = table_.load(std::memory_order_relaxed);
  const std::size_t n = count_.load(std::memory_order_relaxed);
  if (2 * (n + 1) > tb->mask + 1) {
    auto bigger = std::make_unique<table>(2 * (tb->mask + 1));
    for (std::size_t i = 0; i <= tb->mask; ++i)
      if (const std::uintptr_t k = tb->slots[i].load(std::memory_order_relaxed)) insert(*bigger, k);
    tb = bigger.get();
    tables_.push_back(std::move(bigger));
    table_.store(tb, std::memory_order_release);
  }
  insert(*tb, reinterpret_cast<std::uintptr_t>(f));
  count_.store(n + 1, std::memory_order_release);
  return true;
}

}  // namespace hytask::core
