// The monotonic clock every layer's timers read (polling periods, the throttle, the
// watchdog, the node agent), in nanoseconds, and the conversion the kernel's timed waits take.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace hytask::core {

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A duration in nanoseconds (>= 0) as the timespec that futex and timerfd take.
inline timespec to_timespec(std::int64_t ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  return ts;
}

}  // namespace hytask::core
