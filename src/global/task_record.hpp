// What the global layer keeps for one task with global accesses, on the rank that runs it:
// its gate (what still holds it back besides its local predecessors), its accesses to
// locations this rank owns (nodes of the home chains) and its accesses to other ranks'
// locations (whose owners must hear of its completion).
#pragma once

#include <cstdint>
#include <vector>

namespace hytask::global::detail {

struct node;

struct task_record {
  void* task = nullptr;       // the host's handle (the core's task)
  std::uint32_t phase = 0;
  // Held back by: the matching of its phase (1, not in a first phase), each remote access's
  // B record, each unfinished predecessor of another rank on an owned location. Guarded by
  // the engine's lock; the task is released when it reaches 0 after discovery.
  std::int32_t gate = 0;
  bool remote_succ = false;   // matching found a successor on another rank (reported once)
  // flag_cancelled / flag_failed: a predecessor on another rank ended so (B records, or the
  // owner's chain here); the task is skipped when its gate opens.
  std::uint16_t inherited = 0;
  std::vector<node*> owned;   // accesses to this rank's locations
  struct remote_access {
    int owner;
    std::uint64_t id;
  };
  std::vector<remote_access> remote;
};

}  // namespace hytask::global::detail
