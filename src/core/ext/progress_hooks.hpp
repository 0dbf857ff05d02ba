// How the core lets an upper layer (the MPI progress engine) run at scheduling points,
// without knowing what it does.
#pragma once

#include <cstdint>

namespace hytask::core {

enum class poll_result {
  nothing_pending,  // nothing to wait for: an idle worker may sleep
  progressed,       // something completed (work may have been released): look again
  pending,          // operations are outstanding, none completed: poll again soon
  delegated,        // operations are outstanding, and another thread polls them while this
                    // worker idles: it may sleep (a completion that releases work wakes it)
};

struct progress_hooks {
  // Called with idle = true by a worker that found no task (again and again while it returns
  // `pending`), and with idle = false by a busy worker every `every` task switches (0:
  // never). Must be cheap when nothing is pending.
  poll_result (*poll)(void* ctx, unsigned worker, bool idle) = nullptr;
  // Whether this worker should keep polling (operations outstanding that it may poll or ask
  // for). Checked after a worker announced it sleeps, unless poll returned `delegated`:
  // registering an operation and then looking for sleepers, against announcing and then
  // checking this, loses no wake-up.
  bool (*has_pending)(void* ctx, unsigned worker) = nullptr;
  void* ctx = nullptr;
  unsigned every = 0;      // busy workers call poll every this many task switches
  // ... and also at a switch when has_pending and this long has passed since the worker's
  // last poll (0: never).
  std::int64_t every_ns = 0;
};

}  // namespace hytask::core
