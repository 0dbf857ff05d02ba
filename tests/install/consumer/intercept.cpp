// A user's plain MPI code inside hytask tasks, linked with the interception library
// (hytask::mpi_intercept, or -lhytask_mpi_intercept before hytask's and MPI's libraries).
// Run it on 2 ranks. One worker per rank: rank 0's first task blocks in MPI_Recv until rank
// 1 answers, and rank 1 answers only after the message rank 0's second task sends — so it
// completes only if the MPI_Recv suspended its task instead of holding the worker.
#include <hytask/hytask.hpp>
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  std::thread([] {  // a link order that leaves MPI_Recv plain hangs: say so
    std::this_thread::sleep_for(std::chrono::seconds(60));
    std::fprintf(stderr, "intercept: hung for 60 s: MPI_Recv in a task was not intercepted\n");
    std::_Exit(3);
  }).detach();
  hytask::config cfg;
  cfg.threads = 1;
  cfg.mpi = hytask::mpi_use::on;
  hytask::runtime rt(cfg);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int answer = 0;
  std::atomic<bool> second_ran{false};
  bool ok = size == 2;
  if (rank == 0) {
    hytask::spawn([&] {
      MPI_Recv(&answer, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ok = ok && second_ran && answer == 42;
    });
    hytask::spawn([&] {
      second_ran = true;
      int go = 1;
      MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    });
  } else {
    hytask::spawn([] {
      int go = 0, v = 42;
      MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    });
  }
  hytask::wait_all();
  if (rank == 0) std::printf("intercept: a blocked MPI_Recv let the next task run: %s\n", ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
