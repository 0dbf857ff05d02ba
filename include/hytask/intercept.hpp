// hytask::intercept::stats(): what the interception library (hytask::mpi_intercept,
// docs/intercept.md) has done in this process so far. Declared here, defined in the
// interception library: a program that calls it links that library.
//
// ```cpp
// #include <hytask/intercept.hpp>
// #include <cstdio>
//
// int main() {
//   // ... tasks that make plain MPI calls ...
//   const hytask::intercept::counters c = hytask::intercept::stats();
//   std::printf("%llu MPI calls handled inside tasks, %llu through Fortran bindings\n",
//               static_cast<unsigned long long>(c.in_tasks),
//               static_cast<unsigned long long>(c.fortran_calls));
// }
// ```
//
// The counters only grow; take differences to measure a phase.
#pragma once

#include <cstdint>

namespace hytask::intercept {

struct counters {
  // MPI calls made inside hytask tasks that the library handled: the blocking ones ran
  // through hytask's engine (their task suspended), the non-blocking ones were noted for
  // cancellation. Calls outside tasks, or with HYTASK_INTERCEPT=0, are not counted.
  std::uint64_t in_tasks = 0;
  // Calls of the Fortran bindings (mpif.h, use mpi, use mpi_f08) that reached the library,
  // inside tasks or not: the bindings the library interposes (docs/intercept.md, Fortran).
  std::uint64_t fortran_calls = 0;
  // Of those, the ones made inside tasks (with HYTASK_INTERCEPT=1 also counted in in_tasks).
  std::uint64_t fortran_in_tasks = 0;
};

counters stats() noexcept;

}  // namespace hytask::intercept
