// The program initialises MPI itself: the runtime adopts it (and leaves finalising to the
// program), and refuses modes the provided thread level cannot support, naming one that can.
//   adopt_mpi [funneled|serialized|multiple]   the thread level the program asks for
//   adopt_mpi fatal      a bad MPI call of the program still ends the job (MULTIPLE)
// Every mode the level allows runs point-to-point and collective operations from tasks.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "hang_guard.hpp"

namespace mpi = hytask::mpi;

namespace {

// A failed check: the rank and the reason, marked FAILED.
void report(int rank, const std::string& what) {
  std::fprintf(stderr, "adopt: rank %d: FAILED: %s\n", rank, what.c_str());
}

// Runs a runtime in `mode` on the adopted MPI: a barrier, an exchange with the neighbours and
// an allreduce, from tasks. A guard fails the test with a message if it does not finish.
bool exercise(hytask::mpi_mode mode, const char* name, int rank) {
  hang_guard guard(30, [=] {
    std::fprintf(stderr, "adopt: rank %d: mode %s on an adopted MPI hung for 30 s\n", rank, name);
    std::_Exit(3);
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
      report(rank, std::string("mode ") + name + ": sum " + std::to_string(sum) + ", got " + std::to_string(got));
    }
  }
  return ok;
}

int g_handler_calls = 0;
void count_errors(MPI_Comm*, int*, ...) { ++g_handler_calls; }

// The program's own error handler on its own communicator: hytask's operations on it still
// report errors as exceptions (MPI may call the handler first), and the program's own calls
// still go to it.
bool program_handler_kept(int rank) {
  MPI_Comm mine;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(&count_errors, &eh);
  MPI_Comm_set_errhandler(mine, eh);
  bool ok = true;
  {
    hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::multiple});
    std::vector<int> four{1, 2, 3, 4}, two(2);
    if (rank == 1) mpi::send(four, 0, 9, mine);
    if (rank == 0) {
      bool thrown = false;
      hytask::spawn([&] { mpi::recv(two, 1, 9, mine); });
      try {
        hytask::wait_all();
      } catch (const mpi::error& e) {
        thrown = e.call() == "MPI_Irecv" && e.peer() == 1;
      }
      if (!thrown) {
        ok = false;
        report(rank, "truncated receive on the program's communicator: no exception");
      }
    }
  }
  int v = 0;
  const int before = g_handler_calls;
  const int rc = MPI_Send(&v, 1, MPI_INT, 99, 0, mine);  // rank 99 does not exist
  if (rc == MPI_SUCCESS || g_handler_calls != before + 1) {
    ok = false;
    report(rank, "the program's own bad call: rc " + std::to_string(rc) + ", its handler called " +
                     std::to_string(g_handler_calls - before) + " times");
  }
  MPI_Comm_free(&mine);
  MPI_Errhandler_free(&eh);
  return ok;
}

// After hytask used the program's communicator, whose handler was MPI_ERRORS_ARE_FATAL, a
// bad call of the program on it still ends the job (it must not start returning errors).
void program_errors_still_fatal(int rank) {
  MPI_Comm mine;
  MPI_Comm_dup(MPI_COMM_WORLD, &mine);
  hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::multiple});
  int v = rank, sum = 0;
  hytask::spawn([&] { mpi::allreduce(std::span(&v, 1), std::span(&sum, 1), MPI_SUM, mine); });
  hytask::wait_all();
  const int rc = MPI_Send(&v, 1, MPI_INT, 99, 0, mine);  // rank 99 does not exist
  std::printf("adopt fatal: the program's bad call returned %d instead of ending the job\n", rc);
  std::exit(0);
}

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown level";
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string level = argc > 1 ? argv[1] : "funneled";
  if (level != "funneled" && level != "serialized" && level != "multiple" && level != "fatal") {
    std::fprintf(stderr, "usage: adopt_mpi funneled|serialized|multiple|fatal\n");
    return 2;
  }
  const int wanted = level == "multiple"     ? MPI_THREAD_MULTIPLE
                     : level == "serialized" ? MPI_THREAD_SERIALIZED
                                             : MPI_THREAD_FUNNELED;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, level == "fatal" ? MPI_THREAD_MULTIPLE : wanted, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (level == "fatal") program_errors_still_fatal(rank);
  bool ok = true;
  // The checks below depend on the level MPI provides: another level than the one asked for
  // would skip some of them (the refusals at FUNNELED, multiple mode at MULTIPLE) unseen.
  if (provided != wanted) {
    ok = false;
    report(rank, std::string("asked for ") + level_name(wanted) + ", MPI provided " +
                     level_name(provided) + ": this level's checks would not run");
  }
  // funneled: hytask's MPI thread makes the calls, which SERIALIZED allows.
  if (provided >= MPI_THREAD_SERIALIZED)
    ok = exercise(hytask::mpi_mode::funneled, "funneled", rank) && ok;
  if (provided >= MPI_THREAD_MULTIPLE) {
    ok = exercise(hytask::mpi_mode::multiple, "multiple", rank) && ok;
    ok = program_handler_kept(rank) && ok;
  }
  if (provided == MPI_THREAD_FUNNELED) {
    // multiple needs MPI_THREAD_MULTIPLE: the error must say which mode works.
    try {
      hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::multiple});
      ok = false;
      report(rank, "multiple mode accepted MPI_THREAD_FUNNELED");
    } catch (const hytask::usage_error& e) {
      std::string w = e.what();
      if (w.find("MPI_THREAD_MULTIPLE") == std::string::npos || w.find("masteronly") == std::string::npos) {
        ok = false;
        report(rank, "unhelpful message for multiple mode at MPI_THREAD_FUNNELED: " + w);
      }
    }
    // funneled runs MPI on a hytask thread, which MPI_THREAD_FUNNELED forbids.
    try {
      hytask::runtime rt(hytask::config{.mpi_mode = hytask::mpi_mode::funneled});
      ok = false;
      report(rank, "funneled mode accepted MPI_THREAD_FUNNELED");
    } catch (const hytask::usage_error& e) {
      if (std::string(e.what()).find("masteronly") == std::string::npos) {
        ok = false;
        report(rank, std::string("funneled mode at MPI_THREAD_FUNNELED: the message does not name "
                                 "masteronly: ") + e.what());
      }
    }
  }
  // masteronly works on the thread that initialised MPI, at every level.
  ok = exercise(hytask::mpi_mode::masteronly, "masteronly", rank) && ok;
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (finalized) {
    ok = false;  // the runtime must leave an adopted MPI initialised
    report(rank, "the runtime finalised the MPI it adopted");
  }
  // "all checks passed" only when every rank's did (the test looks for rank 0's line).
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) std::printf(all ? "adopt %s: all checks passed\n" : "adopt %s: FAILED\n", level.c_str());
  MPI_Finalize();
  return ok ? 0 : 1;
}
