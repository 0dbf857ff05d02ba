#include "intercept/counters.hpp"

#include "hytask/intercept.hpp"

namespace hytask::intercept {

counters stats() noexcept {
  counters c;
  c.in_tasks = detail::g_in_tasks.load(std::memory_order_relaxed);
  c.fortran_calls = detail::g_fortran_calls.load(std::memory_order_relaxed);
  c.fortran_in_tasks = detail::g_fortran_in_tasks.load(std::memory_order_relaxed);
  return c;
}

}  // namespace hytask::intercept
