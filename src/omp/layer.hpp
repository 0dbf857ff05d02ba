// The omp layer's process-wide state: what the OMPT callbacks (ompt_tool.cpp), the session's
// progress thread (progress_thread.hpp), fulfill_when and commtask share. It is a static
// object that outlives every session, because OMPT callbacks exist for the whole process:
// they look at `ompt_engine` and return at once while no session polls through them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "comm/engine.hpp"
#include "comm/operation.hpp"

namespace hytask::omp::detail {

class progress_thread;

struct layer {
  // Requests handed over (fulfill_when, commtask) and not completed yet: what a callback
  // looks at first, without touching the session.
  std::atomic<std::int64_t> outstanding{0};
  // The session's progress engine while OMPT callbacks should poll it, else null, and the
  // callbacks using it. The session clears the pointer, then waits until `users` is 0 before
  // the engine goes: OpenMP threads outside the program's regions (libomp's pool and helper
  // threads) may be in a callback at any time.
  std::atomic<mpi::detail::engine*> ompt_engine{nullptr};
  std::atomic<int> users{0};
  // The engine while a session exists (fulfill_when, commtask), else null.
  std::atomic<mpi::detail::engine*> engine{nullptr};
  // The session's progress thread (HYTASK_PROGRESS=thread), else null; read by callbacks
  // under `users`.
  std::atomic<progress_thread*> thread{nullptr};
  std::int64_t ompt_poll_ns = 0;                   // HYTASK_OMPT_POLL_US
  std::atomic<std::int64_t> last_ompt_poll_ns{0};  // the rank's last poll from a callback

  std::atomic<std::uint64_t> ompt_polls{0};
  std::atomic<std::uint64_t> fulfilled{0};
};

layer& the_layer() noexcept;

// The engine of the live session; throws hytask::usage_error naming `what` without one.
mpi::detail::engine& need_session(const char* what);

// A request handed over: counts it as outstanding until it completes (a waiter on its
// completion), and wakes the session's progress thread if it is parked.
void hand_over(mpi::detail::operation* op);

// Prints "hytask: rank R: <message>" and ends the job (MPI_Abort): an error that arises on
// the polling thread, where nobody can catch it.
[[noreturn]] void fatal(const std::string& message);

// The OMPT tool (ompt_tool.cpp).
bool ompt_tool_running() noexcept;    // the OpenMP runtime started hytask's tool
const char* ompt_tool_state() noexcept;  // why it runs or not, one line

}  // namespace hytask::omp::detail
