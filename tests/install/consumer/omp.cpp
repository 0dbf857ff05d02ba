// A user's OpenMP program with hytask::omp: a detached task whose successor waits for an
// exchange with the other rank. Run it on 2 ranks.
#include <hytask/omp.hpp>
#include <mpi.h>
#include <omp.h>

#include <cstdio>

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double in = -1, out = rank + 1, seen = -1;
  {
    hytask::omp::session hs;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
      omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out: in) shared(in, out)
      {
        MPI_Request r[2];
        MPI_Irecv(&in, 1, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&out, 1, MPI_DOUBLE, 1 - rank, 0, MPI_COMM_WORLD, &r[1]);
        hytask::omp::fulfill_when(ev, {r[0], r[1]});
      }
#pragma omp task depend(in: in) shared(in, seen)
      seen = in;
#pragma omp taskwait
    }
  }
  const bool ok = seen == 2 - rank;
  if (rank == 0) std::printf("omp consumer: %s (%s)\n", ok ? "ok" : "WRONG", hytask::omp::openmp_runtime());
  MPI_Finalize();
  return ok ? 0 : 1;
}
