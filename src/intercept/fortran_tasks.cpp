// The C functions behind the Fortran module hytask_tasks (src/intercept/hytask_tasks.f90):
// a runtime, tasks that run a Fortran subroutine, wait_all, and the interception counters,
// so that a Fortran program's MPI calls can run inside hytask tasks and be intercepted.
//
// An exception cannot cross into Fortran as one: each function catches it, prints it
// ("hytask: ...") and returns a nonzero status, which the module turns into an ierr or an
// `error stop`. A task's own exception (an intercepted call that failed, a cancellation)
// is the task's failure, rethrown by wait_all, as in C++.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>

#include "platform/messages.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/errors.hpp"
#include "hytask/intercept.hpp"
#include "hytask/runtime.hpp"

namespace {

std::unique_ptr<hytask::runtime>& the_runtime() {
  static std::unique_ptr<hytask::runtime> rt;
  return rt;
}

// In a catch block: the error said (callers without an ierr argument stop the program).
int report(const char* what) {
  hytask::core::message_current_exception(what);
  return 1;
}

}  // namespace

extern "C" {

// hytask_start(): a hytask::runtime for the program, configured from HYTASK_* variables. It
// adopts MPI if the program initialised it (with MPI_THREAD_MULTIPLE for the default mode),
// and otherwise initialises it and finalises it in hytask_stop.
int hytask_f_start() {
  try {
    if (the_runtime())
      throw hytask::usage_error("hytask: hytask_start called twice: one runtime per program; "
                                "call hytask_stop first");
    the_runtime() = std::make_unique<hytask::runtime>();
    return 0;
  } catch (...) {
    return report("hytask_start");
  }
}

int hytask_f_stop() {
  try {
    if (!the_runtime())
      throw hytask::usage_error("hytask: hytask_stop without hytask_start");
    the_runtime()->shutdown();
    the_runtime().reset();
    return 0;
  } catch (...) {
    the_runtime().reset();
    return report("hytask_stop");
  }
}

// A task that calls body(arg): a Fortran subroutine with bind(c) and one integer(c_int)
// argument passed by value.
int hytask_f_spawn(void (*body)(int), int arg) {
  try {
    if (!the_runtime())
      throw hytask::usage_error("hytask: hytask_spawn without a runtime: call hytask_start first");
    hytask::spawn([body, arg] { body(arg); });
    return 0;
  } catch (...) {
    return report("hytask_spawn");
  }
}

int hytask_f_wait_all() {
  try {
    if (!the_runtime())
      throw hytask::usage_error("hytask: hytask_wait_all without a runtime: call hytask_start first");
    hytask::wait_all();
    return 0;
  } catch (...) {
    return report("hytask_wait_all");
  }
}

void hytask_f_intercept_counters(std::int64_t* in_tasks, std::int64_t* fortran_calls,
                                 std::int64_t* fortran_in_tasks) {
  const hytask::intercept::counters c = hytask::intercept::stats();
  *in_tasks = static_cast<std::int64_t>(c.in_tasks);
  *fortran_calls = static_cast<std::int64_t>(c.fortran_calls);
  *fortran_in_tasks = static_cast<std::int64_t>(c.fortran_in_tasks);
}

}  // extern "C"
