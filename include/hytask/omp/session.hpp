// session: hytask's progress for an OpenMP program. Create one in main, after MPI is
// initialised with MPI_THREAD_MULTIPLE and before the parallel regions that hand it requests;
// keep it alive while they run.
//
// ```cpp
// #include <mpi.h>
// #include <hytask/omp.hpp>
//
// int main(int argc, char** argv) {
//   int provided = 0;
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
//   {
//     hytask::omp::session hs;  // adopts the program's MPI
//     // ... OpenMP parallel regions whose tasks call hytask::omp::fulfill_when ...
//   }                           // waits for the requests handed to it
//   MPI_Finalize();
// }
// ```
//
// A session is a hytask::runtime with no workers besides main (OpenMP's threads own the
// cores) that adopts the program's MPI, plus the progress that OpenMP programs get: polls at
// task scheduling points from OMPT callbacks where the OpenMP runtime offers OMPT (Clang's
// libomp; HYTASK_OMPT), and a progress thread that sleeps between polls and stands aside
// while the OMPT callbacks poll (HYTASK_PROGRESS=thread, the session's default; node and
// workers run hytask's node agent or backstop instead, none relies on OMPT alone). The
// constructor throws hytask::usage_error when it cannot work: MPI initialised below
// MPI_THREAD_MULTIPLE, a session or runtime already alive, inside a parallel region,
// HYTASK_OMPT=on without OMPT, HYTASK_PROGRESS=none without OMPT. Only one may exist at a
// time, and not beside a hytask::runtime. docs/omp.md.
#pragma once

#include <cstdint>
#include <memory>

#include "hytask/config.hpp"

namespace hytask::omp {

// The OpenMP runtime this program runs on: "libomp" (Clang's, with OMPT), "libgomp" (GCC's,
// without), or "unknown". docs/omp.md says what each does with detached tasks.
const char* openmp_runtime() noexcept;

// What a session's progress did (tests and tuning).
struct session_stats {
  bool ompt = false;               // OMPT callbacks poll at scheduling points
  const char* ompt_state = "";     // why or why not, one line
  const char* progress = "";       // "thread", "node", "workers" or "none"
  std::uint64_t ompt_polls = 0;    // polls made from OMPT callbacks
  // GCC's libgomp: tasks created through hytask's GOMP_task are wrapped, and their starts and
  // ends poll (HYTASK_OMP_TASK_HOOKS, docs/omp.md).
  bool task_hooks = false;
  std::uint64_t hook_polls = 0;    // polls made at those tasks' starts and ends
  std::uint64_t thread_polls = 0;  // polls made by the session's progress thread
  // Looks of that thread that left the polling to OMPT callbacks or to the running tasks' ends.
  std::uint64_t thread_aside = 0;
  // The CPU time that thread has used (ns): its polls, the MPI progress and kernel work they
  // do (on a core shared with the compute, time the compute waits), and its wakes.
  std::uint64_t thread_cpu_ns = 0;
  std::uint64_t fulfilled = 0;     // events fulfilled by hytask::omp::fulfill_when
  const char* openmp_runtime = "";  // openmp_runtime()
  // omp_get_max_task_priority(), and where it came from: hytask_omp sets
  // OMP_MAX_TASK_PRIORITY when the environment leaves it unset, so that priority clauses take
  // effect (docs/omp.md).
  int max_task_priority = 0;
  const char* task_priority = "";
};

class session {
 public:
  // Adopts MPI if the program initialised it; otherwise initialises it (MPI_THREAD_MULTIPLE)
  // and finalises it when the session ends. `cfg` is read as hytask::runtime reads it
  // (HYTASK_* variables for unset fields), except that a session has no workers (threads,
  // HYTASK_THREADS do not apply) and needs HYTASK_MPI_MODE=multiple.
  explicit session(const config& cfg = {});
  session(int& argc, char**& argv, const config& cfg = {});
  // Waits for every request handed to hytask, then stops; must run outside parallel regions.
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  session_stats stats() const;

  // True while a session exists.
  static bool active() noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace hytask::omp
