#include "trace/clock_sync.hpp"

#include <chrono>

namespace hytask::trace {

std::int64_t local_clock_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

clock_estimate estimate_offset(std::span<const clock_sample> samples) noexcept {
  clock_estimate best{};
  bool any = false;
  for (const clock_sample& s : samples) {
    const std::int64_t rtt = s.t1 - s.t0;
    if (rtt < 0) continue;  // not a sample of one clock
    if (!any || rtt < best.rtt_ns) {
      // The midpoint without overflow: t0 + rtt / 2.
      best = {s.remote - (s.t0 + rtt / 2), rtt};
      any = true;
    }
  }
  return best;
}

}  // namespace hytask::trace
