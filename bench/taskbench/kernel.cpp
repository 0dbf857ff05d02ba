// The work of every task in bench/taskbench: compute-bound, and the same machine code for
// every system. It is compiled once, by the project's compiler with the project's flags
// (no -march=native), into a static library that every binary links, the Clang-built
// OpenMP one included; so no system gets a better-optimised kernel than another.
//
// 24 doubles, each updated `iterations` times by a[k] = a[k] * b + c: 24 independent
// multiply-add chains, 2 flops each, so taskbench::flops_per_iteration (graph.hpp) is
// 2 x 24 = 48. Why 24 and not 32: the loop over k is unrolled and vectorised into 12 SSE2
// registers plus 2 for b and c, which fits x86-64's 16 without spilling; 32 doubles spill 3
// registers to the stack every iteration, and the kernel would then partly measure
// store-to-load forwarding. 12 chains of a multiply then an add are enough to keep the
// floating-point units busy, so the kernel is bound by floating-point throughput. Without
// -march there is no FMA (-ffp-contract cannot fuse), so the count of 2 per update is exact.
//
// b < 1 and c = 1 - b make 1 the fixed point: the values stay near 1 (no overflow, no
// denormals) whatever the number of iterations. The result is folded into a 64-bit hash,
// which the task mixes into its output, so no compiler can drop the loop.
#include <cstdint>
#include <cstring>

extern "C" std::uint64_t taskbench_kernel(long iterations, std::uint64_t seed) {
  constexpr int lanes = 24;
  double a[lanes];
  for (int k = 0; k < lanes; ++k)
    a[k] = 0.5 + static_cast<double>((seed >> (k % 48)) & 0xffff) / 65536.0;
  const double b = 0.9999999;
  const double c = 1.0 - b;
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 24
    for (int k = 0; k < lanes; ++k) a[k] = a[k] * b + c;
  }
  std::uint64_t h = seed;
  for (int k = 0; k < lanes; ++k) {
    std::uint64_t bits;
    std::memcpy(&bits, &a[k], sizeof bits);
    h = (h ^ bits) * 0x100000001b3ull;
  }
  return h;
}
