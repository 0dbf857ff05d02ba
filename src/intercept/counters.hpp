// The interception library's counters (hytask/intercept.hpp): relaxed atomics, process-wide.
// in_tasks grows in the gate, once per call taken inside a task; the Fortran counters in
// the Fortran bindings (fortran.cpp).
#pragma once

#include <atomic>
#include <cstdint>

namespace hytask::intercept::detail {

inline constinit std::atomic<std::uint64_t> g_in_tasks{0};
inline constinit std::atomic<std::uint64_t> g_fortran_calls{0};
inline constinit std::atomic<std::uint64_t> g_fortran_in_tasks{0};

}  // namespace hytask::intercept::detail
