// fulfill_when: an OpenMP 5.0 detached task whose successors wait for MPI requests, with no
// thread blocked while they are in flight.
//
// ```cpp context=omp
// omp_event_handle_t ev;
// #pragma omp task detach(ev) depend(out: halo)
// {
//   MPI_Request r;
//   MPI_Irecv(halo.data(), n, MPI_DOUBLE, left, tag, MPI_COMM_WORLD, &r);
//   hytask::omp::fulfill_when(ev, r);  // returns at once; the task ends, its event waits
// }
// #pragma omp task depend(in: halo)
// use(halo);  // starts once the message is in
// ```
//
// The requests are handed to the session's progress engine (hytask::mpi::adopt): from then
// on hytask tests them, and the program must not test, wait for or free them. When the last
// one completes, omp_fulfill_event(ev) is called on the thread that polled — an OpenMP
// thread at a scheduling point (OMPT) or hytask's progress thread; both runtimes accept a
// fulfilment from either. A request that fails ends the job with a message naming it: the
// task's successors would read data that never came. Needs a hytask::omp::session; called
// without one, throws hytask::usage_error (inside a task, an exception ends the program).
#pragma once

#include <mpi.h>
#include <omp.h>

#include <initializer_list>
#include <span>

#include "hytask/comm/request.hpp"

namespace hytask::omp {

void fulfill_when(omp_event_handle_t event, MPI_Request request);
// When all of them have completed.
void fulfill_when(omp_event_handle_t event, std::span<const MPI_Request> requests);
inline void fulfill_when(omp_event_handle_t event, std::initializer_list<MPI_Request> requests) {
  fulfill_when(event, std::span<const MPI_Request>(requests.begin(), requests.size()));
}
// A request posted through hytask (hytask::mpi::isend, ...) or adopted with a description
// for errors (hytask::mpi::adopt(r, "MPI_Irecv", left, tag, comm)).
void fulfill_when(omp_event_handle_t event, hytask::mpi::request&& request);

}  // namespace hytask::omp
