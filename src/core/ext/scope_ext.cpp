#include "core/ext/scope_ext.hpp"

#include <atomic>

#include "core/deps/dependency.hpp"
#include "core/sched/scheduler.hpp"

namespace hytask::core {

namespace {
std::atomic<scope_release_fn> g_release{nullptr};
}

void set_scope_release(scope_release_fn f) noexcept { g_release.store(f, std::memory_order_release); }

detail::task* spawning_scope() noexcept {
  worker* w = current_worker();
  if (w == nullptr) return nullptr;
  if (w->current_task != nullptr) return w->current_task;
  scheduler* s = scheduler::instance();
  return s ? s->root() : nullptr;
}

void* install_scope_ext(detail::task* t, void* fresh) noexcept {
  void* expected = nullptr;
  if (!t->scope_ext.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel))
    return expected;
  // The task installing on itself may have no children yet: mark it so that completion looks
  // at the slot (a task's own flags are written only by the thread running it).
  if (worker* w = current_worker(); w != nullptr && w->current_task == t)
    t->flags |= detail::flag_parent;
  return fresh;
}

bool scope_region_busy(detail::task* scope, const void* p, std::size_t bytes) noexcept {
  if (scope->domain == nullptr) return false;
  const auto lo = reinterpret_cast<std::uintptr_t>(p);
  return scope->domain->busy(lo, lo + bytes);
}

void release_scope_ext(detail::task* t) noexcept {
  void* s = t->scope_ext.load(std::memory_order_acquire);
  if (s == nullptr) return;
  t->scope_ext.store(nullptr, std::memory_order_relaxed);
  if (scope_release_fn f = g_release.load(std::memory_order_acquire)) f(s);
}

}  // namespace hytask::core
