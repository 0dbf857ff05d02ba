// The program initialises MPI itself: the runtime adopts it (and leaves finalising to the
// program), and refuses modes the provided thread level cannot support, naming one that can.
#include <mpi.h>

#include <cstdio>
#include <span>
#include <string>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bool ok = true;
  if (provided == MPI_THREAD_FUNNELED) {
    // multiple needs MPI_THREAD_MULTIPLE: the error must say which mode works.
    try {
      hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::multiple});
      ok = false;
      std::fprintf(stderr, "adopt: multiple mode accepted MPI_THREAD_FUNNELED\n");
    } catch (const hytask::usage_error& e) {
      std::string w = e.what();
      if (w.find("MPI_THREAD_MULTIPLE") == std::string::npos || w.find("masteronly") == std::string::npos) {
        ok = false;
        std::fprintf(stderr, "adopt: unhelpful message: %s\n", w.c_str());
      }
    }
    // funneled runs MPI on a hytask thread, which MPI_THREAD_FUNNELED forbids.
    try {
      hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::funneled});
      ok = false;
      std::fprintf(stderr, "adopt: funneled mode accepted MPI_THREAD_FUNNELED\n");
    } catch (const hytask::usage_error& e) {
      if (std::string(e.what()).find("masteronly") == std::string::npos) ok = false;
    }
  }
  {
    // masteronly works on the thread that initialised MPI, and does not finalise it.
    hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::masteronly});
    int v = rank, sum = 0;
    hytask::spawn([&] { mpi::allreduce(std::span(&v, 1), std::span(&sum, 1), MPI_SUM); },
                  mpi::collective());
    hytask::wait_all();
    if (sum != mpi::size() * (mpi::size() - 1) / 2) ok = false;
  }
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) ok = false;  // the runtime must leave an adopted MPI initialised
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf(ok ? "adopt: all checks passed\n" : "adopt: FAILED\n");
  MPI_Finalize();
  return ok ? 0 : 1;
}
