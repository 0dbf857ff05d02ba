// The program initialises MPI itself: the runtime adopts it (and leaves finalising to the
// program), and refuses modes the provided thread level cannot support, naming one that can.
//   adopt_mpi [funneled|serialized|multiple]   the thread level the program asks for
// Every mode the level allows runs point-to-point and collective operations from tasks.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

namespace {

// Runs a runtime in `mode` on the adopted MPI: a barrier, an exchange with the neighbours and
// an allreduce, from tasks. A guard fails the test with a message if it does not finish.
bool exercise(hytask::mpi_mode mode, const char* name, int rank) {
  std::atomic<bool> done{false};
  std::thread guard([&] {
    for (int i = 0; i < 300 && !done.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!done.load()) {
      std::fprintf(stderr, "adopt: rank %d: mode %s on an adopted MPI hung for 30 s\n", rank, name);
      std::_Exit(3);
    }
  });
  bool ok = true;
  {
    hytask::runtime rt(hytask::config{.mpi_mode = mode});
    const int n = mpi::size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
    int v = rank, sum = -1, got = -1;
    hytask::spawn([] { mpi::barrier(); }, mpi::collective());
    hytask::spawn([&] { mpi::send(std::span(&v, 1), right, 5); }, mpi::send_channel(right, 5));
    hytask::spawn([&] { mpi::recv(std::span(&got, 1), left, 5); }, mpi::recv_channel(left, 5));
    hytask::spawn([&] { mpi::allreduce(std::span(&v, 1), std::span(&sum, 1), MPI_SUM); },
                  mpi::collective());
    hytask::wait_all();
    if (sum != n * (n - 1) / 2 || got != left) {
      ok = false;
      std::fprintf(stderr, "adopt: mode %s: sum %d got %d\n", name, sum, got);
    }
  }
  done.store(true);
  guard.join();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string level = argc > 1 ? argv[1] : "funneled";
  const int wanted = level == "multiple"     ? MPI_THREAD_MULTIPLE
                     : level == "serialized" ? MPI_THREAD_SERIALIZED
                                             : MPI_THREAD_FUNNELED;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, wanted, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  bool ok = true;
  // funneled: hytask's MPI thread makes the calls, which SERIALIZED allows.
  if (provided >= MPI_THREAD_SERIALIZED)
    ok = exercise(hytask::mpi_mode::funneled, "funneled", rank) && ok;
  if (provided >= MPI_THREAD_MULTIPLE)
    ok = exercise(hytask::mpi_mode::multiple, "multiple", rank) && ok;
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
  // masteronly works on the thread that initialised MPI, at every level.
  ok = exercise(hytask::mpi_mode::masteronly, "masteronly", rank) && ok;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) ok = false;  // the runtime must leave an adopted MPI initialised
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf(ok ? "adopt %s: all checks passed\n" : "adopt %s: FAILED\n", level.c_str());
  MPI_Finalize();
  return ok ? 0 : 1;
}
