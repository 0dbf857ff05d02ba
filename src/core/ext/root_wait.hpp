// Root-wait hooks: for a layer above the core whose wait_all from main is more than waiting
// for main's children (the global dependencies: a collective that closes the phase before
// and drains the ranks' messages after). One layer owns them.
#pragma once

namespace hytask::core {

struct root_wait_hooks {
  void* ctx = nullptr;
  // Before main's wait_all waits for its children. May throw: the wait does not happen.
  void (*before)(void* ctx) = nullptr;
  // After it, also when a child failed (its exception is rethrown after this returns).
  // May throw when the wait itself succeeded.
  void (*after)(void* ctx) = nullptr;
};

// Installs (or, with {} , removes) the hooks; call on main, while no wait_all runs.
void set_root_wait_hooks(root_wait_hooks h) noexcept;

}  // namespace hytask::core
