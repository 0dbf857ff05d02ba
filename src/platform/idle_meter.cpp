// The idle meter (core/idle_meter.hpp): two clock reads per look.
#include "platform/idle_meter.hpp"

#include <time.h>

#include <algorithm>

namespace hytask::core {

namespace {
std::int64_t read_ns(clockid_t clock) noexcept {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

idle_meter::idle_meter(int workers) noexcept : workers_(std::max(1, workers)) {}

bool idle_meter::idle() noexcept {
  const std::int64_t wall = read_ns(CLOCK_MONOTONIC);
  const std::int64_t process = read_ns(CLOCK_PROCESS_CPUTIME_ID);
  const bool first = wall_ < 0;
  const std::int64_t span = wall - wall_, used = process - process_;
  wall_ = wall;
  process_ = process;
  if (first || span <= 0) return false;
  return 2 * used <= (2 * workers_ - 1) * span;  // used <= (workers - 1/2) * span
}

}  // namespace hytask::core
