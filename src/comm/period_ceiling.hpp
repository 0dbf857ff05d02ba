// period_ceiling: the longest sleep of a thread that polls for others (the omp session's
// progress thread), learnt from how long its exchanges last.
//
// A fixed ceiling (HYTASK_PROGRESS_MAX_US, 500 us) is a compromise: long enough that the
// thread's wakes, each of which takes the core from the compute beside it, stay rare; short
// enough that a rendezvous is answered and a socket buffer refilled in time on a fast link.
// When an exchange lasts many ceilings the first half of that no longer holds: a 10 ms halo
// exchange over the cluster in a box cost 18-24 wakes per iteration, against the 4-32
// MPI_Test calls at which the fork-join peer is fastest. So the ceiling follows the typical
// exchange: an eighth of its length (a moving average over the last few, from the first
// request of a burst to the moment none is pending), never below the configured ceiling and
// at most four times it. Exchanges shorter than eight configured ceilings leave it as it is;
// the cap bounds the feedback (a longer period lengthens an exchange that waits for polls,
// which would lengthen the period again).
#pragma once

#include <algorithm>
#include <cstdint>

namespace hytask::mpi::detail {

class period_ceiling {
 public:
  static constexpr std::int64_t polls_per_exchange = 8;
  static constexpr std::int64_t max_stretch = 4;

  explicit period_ceiling(std::int64_t configured_ns) noexcept : base_(configured_ns), value_(configured_ns) {}

  // An exchange begins (requests became pending).
  void started(std::int64_t now_ns) noexcept { start_ = now_ns; }
  // No request is pending any more: the exchange that started() began is over. Without
  // one under way, nothing changes.
  void ended(std::int64_t now_ns) noexcept {
    if (start_ < 0) return;
    const std::int64_t length = std::max<std::int64_t>(0, now_ns - start_);
    start_ = -1;
    typical_ = typical_ < 0 ? length : (3 * typical_ + length) / 4;
    value_ = std::clamp(typical_ / polls_per_exchange, base_, max_stretch * base_);
  }
  // The ceiling for the next exchange.
  std::int64_t value() const noexcept { return value_; }

 private:
  const std::int64_t base_;
  std::int64_t value_;
  std::int64_t start_ = -1;
  std::int64_t typical_ = -1;  // the moving average of exchange lengths (-1: none yet)
};

}  // namespace hytask::mpi::detail
