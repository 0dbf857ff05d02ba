// The C functions behind the Fortran module hytask_omp (src/omp/hytask_omp.f90): the
// session, fulfill_when and commtask with Fortran MPI handles (MPI_Fint, converted with
// MPI_Request_f2c; `use mpi_f08` programs pass a request's MPI_VAL) and an OpenMP event
// handle as GCC's omp_lib gives it (integer(omp_event_handle_kind), the width of a
// pointer, as omp_event_handle_t is in C).
//
// A request handed over is hytask's (hytask::mpi::adopt): each function sets the Fortran
// handles it took to MPI_REQUEST_NULL, so that the program cannot wait for them again (and
// leaves them alone when it failed: they are still the program's). An
// exception cannot cross into Fortran: each function prints it ("hytask: ...") and returns
// a nonzero status, which the module turns into an ierr or an `error stop`.
#include <mpi.h>
#include <omp.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include "platform/messages.hpp"
#include "hytask/errors.hpp"
#include "hytask/omp/commtask.hpp"
#include "hytask/omp/fulfill.hpp"
#include "hytask/omp/session.hpp"

namespace {

std::unique_ptr<hytask::omp::session>& the_session() {
  static std::unique_ptr<hytask::omp::session> s;
  return s;
}

// In a catch block: the error said (callers without an ierr argument stop the program).
int report(const char* what) {
  hytask::core::message_current_exception(what);
  return 1;
}

// The C requests of `count` Fortran handles.
std::vector<MPI_Request> c_requests(int count, const MPI_Fint* requests) {
  std::vector<MPI_Request> rs;
  rs.reserve(static_cast<std::size_t>(count > 0 ? count : 0));
  for (int i = 0; i < count; ++i) rs.push_back(MPI_Request_f2c(requests[i]));
  return rs;
}

// Handed over: the program's handles become MPI_REQUEST_NULL. Not when the hand-over
// failed: the requests are still the program's, to wait for.
void handed_over(int count, MPI_Fint* requests) {
  const MPI_Fint null = MPI_Request_c2f(MPI_REQUEST_NULL);
  for (int i = 0; i < count; ++i) requests[i] = null;
}

}  // namespace

extern "C" {

int hytask_omp_f_session_start() {
  try {
    if (the_session())
      throw hytask::usage_error("hytask: hytask_session_start called twice: one session at a "
                                "time; call hytask_session_end first");
    the_session() = std::make_unique<hytask::omp::session>();
    return 0;
  } catch (...) {
    return report("hytask_session_start");
  }
}

int hytask_omp_f_session_end() {
  try {
    if (!the_session())
      throw hytask::usage_error("hytask: hytask_session_end without hytask_session_start");
    the_session().reset();
    return 0;
  } catch (...) {
    return report("hytask_session_end");
  }
}

int hytask_omp_f_fulfill_when(std::uintptr_t event, int count, MPI_Fint* requests) {
  try {
    hytask::omp::fulfill_when(static_cast<omp_event_handle_t>(event), c_requests(count, requests));
    handed_over(count, requests);
    return 0;
  } catch (...) {
    return report("hytask_fulfill_when");
  }
}

void* hytask_omp_f_commtask_new() {
  try {
    return new hytask::omp::commtask;
  } catch (...) {
    report("hytask_commtask_add");
    return nullptr;
  }
}

void hytask_omp_f_commtask_delete(void* ct) { delete static_cast<hytask::omp::commtask*>(ct); }

int hytask_omp_f_commtask_add(void* ct, int count, MPI_Fint* requests) {
  try {
    static_cast<hytask::omp::commtask*>(ct)->add(c_requests(count, requests));
    handed_over(count, requests);
    return 0;
  } catch (...) {
    return report("hytask_commtask_add");
  }
}

// *flag: 1 once every request added has completed. test polls once, done does not.
int hytask_omp_f_commtask_test(void* ct, int poll, int* flag) {
  try {
    auto* c = static_cast<hytask::omp::commtask*>(ct);
    *flag = (poll != 0 ? c->test() : c->done()) ? 1 : 0;
    return 0;
  } catch (...) {
    return report("hytask_commtask_test");
  }
}

int hytask_omp_f_commtask_finalize(void* ct) {
  try {
    static_cast<hytask::omp::commtask*>(ct)->finalize();
    return 0;
  } catch (...) {
    return report("hytask_commtask_finalize");
  }
}

// Events fulfilled by fulfill_when in this session; -1 without one.
std::int64_t hytask_omp_f_fulfilled() {
  if (!the_session()) return -1;
  return static_cast<std::int64_t>(the_session()->stats().fulfilled);
}

}  // extern "C"
