#include <hytask/hytask.hpp>

#include <atomic>
#include <cstdio>

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  std::atomic<int> sum{0};
  hytask::parallel_for(0, 100, [&sum](int i) { sum += i; });
  int x = 0;
  hytask::spawn([&x] { x = 1; }, hytask::out(x));
  hytask::spawn([&x, &sum] { sum += x - 1; }, hytask::in(x));
  hytask::wait_all();
  std::printf("hytask %s: sum %d\n", hytask::version, sum.load());
  return sum.load() == 4950 ? 0 : 1;
}
