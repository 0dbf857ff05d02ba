// The time a rank spends inside stencil sweeps, summed over its threads: how fast the
// compute itself runs, apart from any waiting. A pass with communication beside it and one
// without give the compute's speed beside the exchange (issue 19's "compute at >= 95 % of
// its speed alone"): a progress thread that preempts the compute, or a lock it contends,
// makes the same sweeps take longer; waiting for a halo does not count.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace jacobi {

class compute_meter {
 public:
  void add(std::chrono::steady_clock::duration d) {
    ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(), std::memory_order_relaxed);
  }
  double seconds() const { return 1e-9 * static_cast<double>(ns_.load(std::memory_order_relaxed)); }
  void reset() { ns_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> ns_{0};
};

}  // namespace jacobi
