// The gate every intercepted MPI call passes first: whether this call is taken over by
// hytask (made inside a task, interception on) or goes straight to MPI (PMPI_*).
//
// Outside a task the answer must cost next to nothing, since every MPI_Recv of a program
// linked with the library pays it (the target: 50 ns over plain MPI; bench/bench_intercept
// measures it): one call that reads the thread's current worker and its running task. Only
// inside a task are the rest looked at — the switch (HYTASK_INTERCEPT), a runtime with MPI,
// and whether hytask itself is making the call (its own MPI calls, made under comm's
// calling_mpi guard, must never come back into hytask).
#pragma once

#include "hytask/core/this_task.hpp"

namespace hytask::intercept::detail {

// Inside a task: the switch is on, the runtime has MPI, and this is not hytask's own call.
bool taken_in_task() noexcept;

inline bool intercepting() noexcept {
  return hytask::this_task::inside_task() && taken_in_task();
}

}  // namespace hytask::intercept::detail
