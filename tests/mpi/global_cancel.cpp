// A cancelled or failed task passes that on to its successors on other ranks, as it does to
// local ones: they are skipped, without a collective. One scenario per run, on 2 or more
// ranks; element e of the array belongs to rank 1, element f to rank 0:
//   cancel   phase 1: rank 0 writes e in a task_group it cancels at once; phase 2: every
//            other rank reads e; phase 3: the last rank writes e; phase 4: rank 0 reads e.
//            All of them are skipped (transitively, across three ranks and a write after
//            reads); rank 1's write of f in phase 1 runs. No rank's wait_all throws
//            (cancellation is no failure).
//   control  the same without the cancel: every task runs and reads what was written.
//   fail     the same, but rank 0's writer throws: rank 0's wait_all throws its exception,
//            every other rank's throws the "failed on another rank" error.
// After the wait_all, a new epoch starts clean on every scenario: rank 0 writes e, the others
// read it, and must see the value (nothing of the cancellation is left).
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>

#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

int failures = 0;

void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "global_cancel: rank %d: FAILED: %s\n", rank, what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const std::string what = argc > 1 ? argv[1] : "";
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  if (size < 2 || (what != "cancel" && what != "control" && what != "fail")) {
    if (rank == 0) std::fprintf(stderr, "usage: global_cancel cancel|control|fail on 2 or more ranks\n");
    return 2;
  }
  hytask::global_array<int> a(static_cast<std::size_t>(2 * size));
  const std::size_t e = 2, f = 0;  // owned by rank 1 and rank 0 (blocks of two)
  check(a.owner(e) == 1 && a.owner(f) == 0, rank, "the elements' owners are not ranks 1 and 0");
  const int last = size - 1;
  std::atomic<int> ran{0}, read_right{0};
  int other_ran = 0;

  hytask::fence();  // not a first phase: every task waits for matching
  {
    hytask::task_group g;
    if (rank == 0)
      hytask::spawn({.name = "writer", .group = &g}, [&] {
        if (what == "fail") throw std::runtime_error("boom on rank 0");
        a[e].put(99);
        ++ran;
      }, hytask::out(a[e]));
    if (rank == 1) hytask::spawn([&] { a[f].put(5), ++other_ran; }, hytask::out(a[f]));
    if (what == "cancel") g.cancel();  // before matching: the writer has not started
    hytask::fence();
    if (rank != 0)
      hytask::spawn({.name = "reader"}, [&] {
        ++ran;
        if (a[e].get() == 99) ++read_right;
      }, hytask::in(a[e]));
    hytask::fence();
    if (rank == last) hytask::spawn({.name = "second writer"}, [&] { a[e].put(100), ++ran; }, hytask::out(a[e]));
    hytask::fence();
    if (rank == 0)
      hytask::spawn({.name = "late reader"}, [&] {
        ++ran;
        if (a[e].get() == 100) ++read_right;
      }, hytask::in(a[e]));
    std::string caught;
    try {
      hytask::wait_all();
    } catch (const std::exception& x) {
      caught = x.what();
    }
    // Tasks this rank spawned on e: rank 0 the writer and the late reader, the last rank a
    // reader (unless it is rank 0) and the second writer, the others a reader.
    const int mine = rank == 0 || rank == last ? 2 : 1;
    const int readers = 1;  // each rank reads e once
    if (what == "control") {
      check(caught.empty(), rank, "wait_all threw: " + caught);
      check(ran == mine, rank, std::to_string(ran.load()) + " of this rank's " + std::to_string(mine) + " tasks ran");
      check(read_right == readers, rank, "a reader read a value it should not have");
    } else {
      check(ran == 0, rank, std::to_string(ran.load()) + " tasks ran after the writer on rank 0 was " +
                                (what == "cancel" ? "cancelled" : "failed"));
      if (what == "cancel")
        check(caught.empty(), rank, "wait_all threw after a cancellation, which is no failure: " + caught);
      else if (rank == 0)
        check(caught == "boom on rank 0", rank, "wait_all threw '" + caught + "', not the writer's exception");
      else
        check(caught.find("failed on another rank") != std::string::npos, rank,
              "wait_all threw '" + caught + "', not the skipped task's error");
    }
    if (rank == 1) check(other_ran == 1, rank, "the unrelated write of f did not run");
  }

  // A new epoch: nothing of the cancellation is left.
  read_right = 0;
  if (rank == 0) hytask::spawn([&] { a[e].put(7); }, hytask::out(a[e]));
  hytask::fence();
  if (rank != 0) hytask::spawn([&] { read_right += a[e].get() == 7; }, hytask::in(a[e]));
  hytask::wait_all();
  if (rank != 0) check(read_right == 1, rank, "the next epoch's reader did not see its writer's value");

  int bad = failures;
  hytask::mpi::allreduce(std::span(&bad, 1), MPI_SUM);
  if (rank == 0 && bad == 0) std::printf("global_cancel %s: ok\n", what.c_str());
  return bad == 0 ? 0 : 1;
}
