// Seed 001's Listing 2.2 on hytask: one int in the global address space, written by a task
// on the rank that owns it and then halved by a task on another rank. Nobody sends a
// message: the fence orders the two tasks, the runtimes connect them (the owner releases the
// reader once the writer has completed), and the data moves by MPI-3 RMA (get and put).
//
//   mpiexec -n 2 shared_int [x]      (x defaults to 12: prints 72)
#include <cstdio>
#include <cstdlib>

#include "example_args.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  const int x = argc > 1 ? static_cast<int>(example::integer("shared_int", "x", argv[1], -40000, 40000)) : 12;
  hytask::runtime rt(argc, argv);
  hytask::global_array<int> shared(1);  // one element, on rank 0
  hytask::global_ref<int> res = shared[0];

  if (res.is_local())
    hytask::spawn([res, x] { res.put(x * x); }, hytask::out(res));
  hytask::fence();  // every rank: the next tasks come after the ones above
  // The seed writes `if (!res.is_local())`, which on three ranks or more makes two ranks
  // write res in one phase: hytask stops such a program with the conflict's location, phase
  // and ranks. One other rank does it here (rank 0 itself when alone).
  const int second = hytask::mpi::size() > 1 ? 1 : 0;
  if (hytask::mpi::rank() == second)
    hytask::spawn([res] { res.put(res.get() / 2); }, hytask::inout(res));
  hytask::wait_all();  // collective: every rank's tasks have completed

  if (res.is_local()) std::printf("shared_int: %d * %d / 2 = %d\n", x, x, res.get());
  return 0;
}
