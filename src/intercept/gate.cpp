#include "intercept/gate.hpp"

#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "intercept/counters.hpp"
#include "runtime_settings.hpp"

namespace hytask::intercept::detail {

bool taken_in_task() noexcept {
  const hytask::settings* s = hytask::detail::runtime_settings();
  const bool taken = s != nullptr && s->intercept &&
                     mpi::detail::comm_system::instance() != nullptr &&
                     !mpi::detail::in_hytask_call();
  if (taken) g_in_tasks.fetch_add(1, std::memory_order_relaxed);  // hytask/intercept.hpp
  return taken;
}

}  // namespace hytask::intercept::detail

namespace {
// As the library loads (before main): the program calls MPI, so the runtime initialises it
// even without a launcher (HYTASK_MPI=auto). In gate.cpp because every intercepted call
// uses the gate: a static link keeps this object, and so this initialiser.
[[maybe_unused]] const bool g_noted = (hytask::mpi::detail::note_program_calls_mpi(), true);
}  // namespace
