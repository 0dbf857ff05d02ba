// Task priorities: the OpenMP runtimes ignore `priority` clauses unless the max-task-priority
// ICV is above 0, and its default, when OMP_MAX_TASK_PRIORITY is unset, is 0. A program that
// hands requests to hytask writes priorities on its communication tasks so that receives and
// sends are posted before the compute that overlaps them (docs/omp.md); with the clauses
// ignored, GCC's libgomp runs a thread's ready tasks newest first and nothing overlaps.
//
// So a program linked with hytask_omp runs with OMP_MAX_TASK_PRIORITY=1000000 when its
// environment leaves the variable unset (OMP_MAX_TASK_PRIORITY=0 keeps OpenMP's default):
//   - libomp reads its settings when the first OpenMP construct runs: a constructor sets the
//     variable before main.
//   - libgomp reads them in its own constructor, which runs before any constructor of a
//     library or program that depends on it, and glibc's environment is not set up yet when
//     the only earlier code runs (the executable's .preinit_array). There, before any library
//     is initialised, hytask_omp re-executes the program (/proc/self/exe, the same argv, pid
//     and file descriptors) with the variable added, about 1 ms at start. Not under valgrind,
//     and only from a static hytask_omp (a shared library cannot add to .preinit_array).
#pragma once

namespace hytask::omp::detail {

// How the max-task-priority ICV came to be, one line: the environment's, set by hytask_omp,
// or left at OpenMP's default and why. Also what links the setter into the program.
const char* task_priority_state() noexcept;

}  // namespace hytask::omp::detail
