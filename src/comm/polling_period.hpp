// An adaptive polling period (seed 001's and TAMPI's slow start): halved by a poll that
// completed something, doubled by one that did not, within [min, max]. Resetting to the
// minimum on every completion instead would wake a poller tens of thousands of times a
// second in a steady exchange, each wake taking a core from a worker.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/face.hpp"

namespace hytask::mpi::detail {

class polling_period {
 public:
  polling_period(std::int64_t min_ns, std::int64_t max_ns)
      : min_(min_ns), max_(std::max(min_ns, max_ns)), now_(min_ns) {}

  // The period after a poll that returned r.
  std::int64_t after(core::poll_result r) noexcept {
    now_ = r == core::poll_result::progressed ? std::max(min_, now_ / 2) : std::min(max_, 2 * now_);
    return now_;
  }
  std::int64_t current() const noexcept { return now_; }
  void reset() noexcept { now_ = min_; }
  std::int64_t min() const noexcept { return min_; }
  std::int64_t max() const noexcept { return max_; }
  // A new maximum (at least the minimum); the current period is kept within it.
  void set_max(std::int64_t max_ns) noexcept {
    max_ = std::max(min_, max_ns);
    now_ = std::min(now_, max_);
  }

 private:
  std::int64_t min_, max_, now_;
};

}  // namespace hytask::mpi::detail
