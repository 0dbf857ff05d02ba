// The smallest hytask program: a producer, two readers that run concurrently, and a
// writer that waits for both — ordered by the regions they declare.
#include <cstdio>
#include <vector>

#include "hytask/hytask.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  std::vector<double> v(1000);
  double sum = 0, max = 0;

  hytask::spawn({.name = "fill"}, [&] { for (std::size_t i = 0; i < v.size(); ++i) v[i] = 0.5 * i; },
                hytask::out(v.data(), v.size()));
  hytask::spawn({.name = "sum"}, [&] { for (double x : v) sum += x; },
                hytask::in(v.data(), v.size()), hytask::out(sum));
  hytask::spawn({.name = "max"}, [&] { for (double x : v) max = x > max ? x : max; },
                hytask::in(v.data(), v.size()), hytask::out(max));
  hytask::spawn({.name = "scale"}, [&] { for (double& x : v) x *= 2; },
                hytask::inout(v.data(), v.size()));  // after both readers
  hytask::wait_all();

  std::printf("sum %.1f, max %.1f, v[999] after scaling %.1f\n", sum, max, v[999]);
  return 0;
}
