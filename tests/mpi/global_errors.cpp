// Misuse of global dependencies must end with a message that names the problem and the fix
// (issue 17), never a hang or a silent wrong answer. One scenario per run:
//   conflict       ranks 0 and 1 both write element 0 in one phase (not a first one: the
//                  writers, and rank 0's reader of the next phase, must not run); then the
//                  next epoch must work (a write, a fence, a read)
//   missing_fence  rank 0 writes element 1, rank 1 reads it in the same phase (a first
//                  phase: they may run, but the conflict is reported all the same)
//   in_task        a task declares a global dependency (only main's tasks may)
//   tile_grid      a tiled_matrix on a P x Q grid that is not the number of ranks
//   index          an element past the end
//   sub_comm       a global_array on a communicator of half the ranks: refused at once
//   extra_fence    rank 0 calls fence() twice, the others once, then wait_all(): the job
//                  ends with a message giving each rank's fences and wait_alls
//   lone_wait_all  rank 0 calls wait_all() where the others call fence(): the same
//   fence_first    fences before any PGAS object, differently often per rank, do nothing:
//                  wait_all stays local (rank 0 calls it twice), then an array works
// The last three, and conflict, missing_fence, in_task, tile_grid, sub_comm and index, throw a
// hytask::usage_error on every rank: rank 0 prints "caught: <message>" once every rank caught
// one.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string what = argc > 1 ? argv[1] : "";
  const int rank = hytask::mpi::rank();
  if (what == "fence_first") {
    for (int k = 0; k <= rank; ++k) hytask::fence();
    hytask::spawn([] {});
    hytask::wait_all();
    if (rank == 0) hytask::wait_all();
    hytask::global_array<int> b(4);
    if (rank == 0) hytask::spawn([&] { b[3].put(42); }, hytask::out(b[3]));
    hytask::fence();
    int got = 0;
    hytask::spawn([&] { got = b[3].get(); }, hytask::in(b[3]));
    hytask::wait_all();
    int bad = got == 42 ? 0 : 1;
    if (bad) std::fprintf(stderr, "global_errors fence_first: rank %d: FAILED: read %d, not 42\n", rank, got);
    hytask::mpi::allreduce(std::span(&bad, 1), MPI_SUM);
    if (rank == 0 && bad == 0) std::printf("global_errors fence_first: ok\n");
    return bad == 0 ? 0 : 1;
  }
  hytask::global_array<int> a(8);
  std::string caught;  // the usage_error's message, for the cases every rank must catch
  if (what == "conflict") {
    hytask::fence();  // not the first phase: the tasks are gated, nothing runs
    int ran = 0;
    if (rank <= 1) hytask::spawn([&] { a[0].put(rank), ++ran; }, hytask::out(a[0]));
    hytask::fence();
    if (rank == 0) hytask::spawn([&] { ran += 1 + a[0].get(); }, hytask::in(a[0]));
    try {
      hytask::wait_all();
    } catch (const hytask::usage_error& e) {
      caught = e.what();
    }
    if (ran != 0) std::fprintf(stderr, "global_errors conflict: rank %d: FAILED: a skipped task ran\n", rank);
    // The program goes on: MPI and the global layer work in the next epoch.
    if (rank == 1) hytask::spawn([&] { a[0].put(41); }, hytask::out(a[0]));
    hytask::fence();
    int got = 0;
    hytask::spawn([&] { got = a[0].get(); }, hytask::in(a[0]));
    hytask::wait_all();
    if (got != 41 || ran != 0) {
      std::fprintf(stderr, "global_errors conflict: rank %d: FAILED: after the conflict, read %d, not 41\n", rank, got);
      caught.clear();  // counted as a failure below
    }
  } else if (what == "missing_fence") {
    if (rank == 0) hytask::spawn([&] { a[1].put(1); }, hytask::out(a[1]));
    if (rank == 1) hytask::spawn([&] { std::printf("%d\n", a[1].get()); }, hytask::in(a[1]));
    try {
      hytask::wait_all();
    } catch (const hytask::usage_error& e) {
      caught = e.what();
    }
  } else if (what == "extra_fence") {
    hytask::fence();
    if (rank == 0) hytask::fence();
    hytask::wait_all();
    std::fprintf(stderr, "global_errors extra_fence: rank %d: FAILED: the wait_all returned\n", rank);
    return 1;
  } else if (what == "lone_wait_all") {
    if (rank == 0) hytask::wait_all();
    else hytask::fence();
    hytask::wait_all();
    std::fprintf(stderr, "global_errors lone_wait_all: rank %d: FAILED: the wait_all returned\n", rank);
    return 1;
  } else if (what == "in_task") {
    hytask::spawn([&] {
      try {
        hytask::spawn([&] { a[2].put(1); }, hytask::out(a[2]));
      } catch (const hytask::usage_error& e) {
        caught = e.what();
      }
    });
    hytask::wait_all();
  } else if (what == "tile_grid") {
    try {
      hytask::tiled_matrix<double> m(10, 10, 5, 5, 3, 7);
    } catch (const hytask::usage_error& e) {
      caught = e.what();
    }
  } else if (what == "sub_comm") {
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm_split(hytask::mpi::comm_world(), rank % 2, rank, &half);
    try {
      hytask::global_array<int> b(6, half);
    } catch (const hytask::usage_error& e) {
      caught = e.what();
    }
    MPI_Comm_free(&half);
  } else if (what == "index") {
    try {
      a[8].get();
    } catch (const hytask::usage_error& e) {
      caught = e.what();
    }
  } else {
    std::fprintf(stderr, "global_errors: unknown scenario '%s'\n", what.c_str());
    return 2;
  }
  hytask::wait_all();
  // The cases that throw a usage_error on every rank: rank 0 prints "caught: <message>" (what
  // the test looks for) only when every rank caught one; a rank that did not says so.
  const char* expected = what == "conflict"        ? "conflicting accesses to element 0 of global_array 1 in phase 1"
                         : what == "missing_fence" ? "conflicting accesses to element 1 of global_array 1 in phase 0"
                         : what == "in_task"     ? "hytask::in/out/inout on a global reference in a task"
                         : what == "tile_grid" ? "hytask::tiled_matrix: a grid of 3x7 ranks for a communicator of"
                         : what == "sub_comm"  ? "ranks: global dependencies are the whole job's"
                                               : "hytask: index 8 out of range for a global_array of 8";
  if (caught.empty())
    std::fprintf(stderr, "global_errors %s: rank %d: FAILED: no usage_error\n", what.c_str(), rank);
  else if (caught.find(expected) == std::string::npos)
    std::fprintf(stderr, "global_errors %s: rank %d: FAILED: the message does not say '%s': %s\n",
                 what.c_str(), rank, expected, caught.c_str());
  int missing = caught.find(expected) == std::string::npos ? 1 : 0;
  hytask::mpi::allreduce(std::span(&missing, 1), MPI_SUM);
  if (missing != 0) {
    if (rank == 0)
      std::fprintf(stderr, "global_errors %s: FAILED: %d rank(s) caught no usage_error, or one "
                   "with another message\n", what.c_str(), missing);
    return 1;
  }
  if (rank == 0) std::printf("caught: %s\n", caught.c_str());
  return 0;
}
