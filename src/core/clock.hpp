// The monotonic clock every layer's timers read (polling periods, the throttle, the
// watchdog, the node agent), in nanoseconds.
#pragma once

#include <chrono>
#include <cstdint>

namespace hytask::core {

inline std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace hytask::core
