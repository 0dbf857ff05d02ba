// Each rank sends a vector to the next one (on 2 ranks, to the other). The receive, spawned
// first, suspends only its task: this rank's fill and send run while it waits.
#include <cstdio>
#include <vector>

#include <hytask/hytask.hpp>
#include <hytask/mpi.hpp>

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);  // starts the workers; initialises MPI under mpiexec
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  std::vector<double> mine(1000), theirs(1000);
  double sum = 0;
  hytask::spawn([&] { hytask::mpi::recv(theirs, left, 0); }, hytask::out(theirs));
  hytask::spawn([&] { for (int i = 0; i < 1000; ++i) mine[i] = rank + i; }, hytask::out(mine));
  hytask::spawn([&] { hytask::mpi::send(mine, right, 0); }, hytask::in(mine));  // after the fill
  hytask::spawn([&] { for (double& x : theirs) x *= 2; }, hytask::inout(theirs));  // after recv
  hytask::spawn([&] { for (double x : theirs) sum += x; }, hytask::in(theirs), hytask::out(sum));
  hytask::wait_all();  // waits for the five tasks; rethrows the first exception one threw
  const double expected = 2 * (1000 * left + 499500.0);  // 2 * ((left + 0) + ... + (left + 999))
  std::printf("rank %d: got rank %d's vector, doubled it, sum %.0f: %s\n", rank, left, sum,
              sum == expected ? "ok" : "wrong");
  return sum == expected ? 0 : 1;
}
