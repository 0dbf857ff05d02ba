// Draining at shutdown: every operation completes before MPI_Finalize (sends whose requests the
// program dropped, collectives other ranks have not reached yet); a warning after 10 s.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "comm/comm.hpp"
#include "core/face.hpp"
#include "platform/messages.hpp"

namespace hytask::mpi::detail {

void comm_system::drain() {
  // Every operation must complete before MPI_Finalize. Pending ones are normally sends whose
  // requests the program dropped, or collectives other ranks have not reached yet.
  const std::int64_t start = core::now_ns();
  bool warned = false;
  while (engine_.pending() != 0 || commands_.any()) {
    if (may_call_mpi()) {
      run_commands();
      engine_.poll();
    } else {
      nudge();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (!warned && core::now_ns() - start > 10'000'000'000LL) {
      core::messagef(core::verbosity::warning,
                     "%zu MPI operation(s) still pending at shutdown; waiting for them before "
                     "MPI_Finalize (HYTASK_WATCHDOG_S makes hytask abort instead of waiting "
                     "forever)",
                     engine_.pending());
      warned = true;
    }
  }
  stop_watchdog();  // it reads the scheduler, which the runtime destroys next
}

}  // namespace hytask::mpi::detail
