// Renaming (hytask/core/versioned.hpp): the versions of hytask::versioned objects, the pool
// they come from, and what the scheduler calls about them.
//
// A version is a buffer holding one value of an object: the program's memory (home) or a
// buffer from the pool. Its reference count is the tasks that hold it plus one while it is
// the object's current version; a pooled version goes back to the pool when the count
// falls to zero. A writer is renamed (given a fresh version) only when the current one has
// holders, and only within HYTASK_RENAME_MAX_BYTES of buffers (in use or pooled).
//
// Tasks hold their versions until they complete (children and bound requests included), so
// a version with a pending MPI operation is not reused. The parent whose children renamed an
// object copies its latest version back home when its children are done: at its wait_all,
// or when it completes (main: at the runtime's end).
#pragma once

#include <cstddef>

#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"

namespace hytask::core {

// For a completing task with flag_versions, once its failure status is final and before its
// successors are released: records whether the versions it wrote hold good values, and drops
// the older values they kept for a failed writer. Before the successors: a successor writing
// the same version in place (over the cap) would settle it too, concurrently.
void settle_written_versions(detail::task* t) noexcept;

// For a completing task with flag_versions (after settle_written_versions): releases the versions it holds and, as a parent,
// copies back the objects its children renamed. Before its parent counts it done.
void complete_versions(detail::task* t) noexcept;

// At the end of t's wait_all (all of t's children have completed): copies back the objects
// t's children renamed; from main, also returns the versions of failed tasks to the pool.
// Main's root task always has a versions state (start_versions), so its wait_all comes here.
void wait_versions(detail::task* t) noexcept;

// The runtime's start and end: counters start from zero; at the end every task has completed,
// main's latest versions are copied back and the pooled buffers are freed.
void start_versions(detail::task* root);
void end_versions(detail::task* root) noexcept;

// Whether some hytask::versioned object's latest version is a renamed writer's, not the
// program's memory (a relaxed load: the plain accesses' fast path).
bool renamed_objects() noexcept;
// A plain access (in/out/inout on the program's memory) of task t: throws usage_error when it
// overlaps a versioned object's memory while a newer version of that object is in flight —
// the memory is stale then, and the copy-back would overwrite what the access writes.
void check_plain_access(detail::task* t, const void* addr, std::size_t bytes, access_mode mode);

}  // namespace hytask::core
