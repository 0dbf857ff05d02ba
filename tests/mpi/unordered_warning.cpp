// Two tasks that did not declare a channel post receives on the same (peer, tag) while the
// other's is pending: hytask warns (once) that MPI's matching order is then up to the
// scheduler. The program itself is written so that either order gives the same result.
#include <cstdio>
#include <span>
#include <thread>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace mpi = hytask::mpi;

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const int r = mpi::rank();
  int a = 0, b = 0;
  if (r == 0) {
    hytask::spawn({.name = "first"}, [&a] { mpi::recv(std::span(&a, 1), 1, 5); });
    hytask::spawn({.name = "second"}, [&b] { mpi::recv(std::span(&b, 1), 1, 5); });
    hytask::spawn([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      int go = 1;
      mpi::send(std::span(&go, 1), 1, 6);  // tell rank 1 to send
    });
  } else if (r == 1) {
    int go = 0;
    mpi::recv(std::span(&go, 1), 0, 6);
    int v = 7;
    mpi::send(std::span(&v, 1), 0, 5);
    mpi::send(std::span(&v, 1), 0, 5);
  }
  hytask::wait_all();
  mpi::barrier();
  if (r == 0) std::printf("unordered test done: %d %d\n", a, b);
  return 0;
}
