#include "intercept/gate.hpp"

#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "runtime_settings.hpp"

namespace hytask::intercept::detail {

bool taken_in_task() noexcept {
  const hytask::settings* s = hytask::detail::runtime_settings();
  return s != nullptr && s->intercept && mpi::detail::comm_system::instance() != nullptr &&
         !mpi::detail::in_hytask_call();
}

}  // namespace hytask::intercept::detail
