// Four tasks ordered by the memory they declare, then a loop run by every worker, without
// MPI. The test example_hello runs it. (README.md's first program, with MPI, is
// examples/first_program.cpp.)
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <vector>

#include <hytask/hytask.hpp>

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);  // reads HYTASK_*, starts the workers
  std::vector<double> v(1000);
  double sum = 0, max = 0;

  // out(v), in(v), inout(v) declare v's elements. fill runs first; sum and max read what it
  // wrote, side by side; scale waits for both readers before it overwrites v.
  hytask::spawn({.name = "fill"}, [&] {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * i;
  }, hytask::out(v));
  hytask::spawn({.name = "sum"}, [&] { for (double x : v) sum += x; },
                hytask::in(v), hytask::out(sum));
  hytask::spawn({.name = "max"}, [&] { for (double x : v) max = std::max(max, x); },
                hytask::in(v), hytask::out(max));
  hytask::spawn({.name = "scale"}, [&] { for (double& x : v) x *= 2; }, hytask::inout(v));
  hytask::wait_all();  // waits for the four; rethrows the first exception one of them threw

  // A fork-join loop over every worker: static blocks first, then work stealing.
  std::atomic<int> wrong{0};
  hytask::parallel_for(0, 1000, [&](int i) { if (v[i] != i) wrong++; },
                       hytask::schedule::static_ws);

  std::printf("sum %.1f, max %.1f, v[999] after scaling %.1f, %d elements wrong\n", sum, max,
              v[999], wrong.load());
  return wrong == 0 ? 0 : 1;
}
