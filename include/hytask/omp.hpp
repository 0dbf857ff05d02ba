// hytask::omp: overlap for OpenMP task programs on stock OpenMP runtimes (GCC's libgomp,
// Clang's libomp), without rewriting them for hytask. Link hytask::omp (CMake) or
// -lhytask_omp besides hytask, and compile with -fopenmp. docs/omp.md.
//
//   session       hytask's progress engine beside OpenMP's threads: OMPT callbacks poll at
//                 task scheduling points (libomp), a sleeping progress thread otherwise
//   fulfill_when  a detached task (OpenMP 5.0 detach) completes when its MPI requests do
//   commtask      Büttner's commtask init / finalize for fork-join codes
//
// ```cpp
// #include <mpi.h>
// #include <omp.h>
// #include <hytask/omp.hpp>
//
// int main(int argc, char** argv) {
//   int provided = 0;
//   MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
//   int rank = 0, size = 1;
//   MPI_Comm_rank(MPI_COMM_WORLD, &rank);
//   MPI_Comm_size(MPI_COMM_WORLD, &size);
//   double in = 0, out = rank;
//   {
//     hytask::omp::session hs;
// #pragma omp parallel
// #pragma omp single
//     {
//       omp_event_handle_t ev;
// #pragma omp task detach(ev) depend(out: in) shared(in, out)
//       {
//         MPI_Request r[2];
//         MPI_Irecv(&in, 1, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &r[0]);
//         MPI_Isend(&out, 1, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &r[1]);
//         hytask::omp::fulfill_when(ev, {r[0], r[1]});  // the task returns at once
//       }
// #pragma omp task depend(in: in) shared(in)
//       in += 1;  // runs once both requests have completed
//     }
//   }
//   MPI_Finalize();
// }
// ```
#pragma once

#include "hytask/omp/commtask.hpp"
#include "hytask/omp/fulfill.hpp"
#include "hytask/omp/session.hpp"
