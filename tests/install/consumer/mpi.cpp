// A user's MPI program: MPI calls of its own beside hytask's, so both must be the same MPI.
// Run it on 2 ranks; it prints the MPI library it ran with.
#include <hytask/hytask.hpp>
#include <hytask/mpi.hpp>
#include <mpi.h>

#include <cstdio>

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rank = hytask::mpi::rank();
  long mine = rank + 1, sum = 0;
  hytask::spawn([&] { hytask::mpi::allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM); });
  hytask::wait_all();
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  const bool ok = size == 2 && hytask::mpi::size() == 2 && sum == 3;
  if (rank == 0) std::printf("ranks %d, sum %ld: %s; MPI: %.40s\n", size, sum, ok ? "ok" : "WRONG", library);
  return ok ? 0 : 1;
}
