// Aligning the clocks of a job's ranks (the arithmetic; the exchange of messages that
// measures it belongs to the MPI layer, comm/clock_exchange.cpp).
//
// A rank sends a ping to the reference rank at t0 on its own clock, the reference answers
// with its clock's reading, and the answer arrives at t1: the reference read its clock at
// about the middle of the round trip, so offset = remote - (t0 + t1) / 2, within half the
// round trip. Of several ping-pongs the one with the smallest round trip is kept (the one
// least disturbed). Measured again at the end of the run, the difference of the two offsets
// is the drift between the clocks, spread linearly over the run by the merge.
#pragma once

#include <cstdint>
#include <span>

namespace hytask::trace {

// The process's steady clock, in nanoseconds (what the trace's clock is built on).
std::int64_t local_clock_ns() noexcept;

// One ping-pong: t0 and t1 on the local clock, remote on the reference clock.
struct clock_sample {
  std::int64_t t0 = 0;
  std::int64_t remote = 0;
  std::int64_t t1 = 0;
};

struct clock_estimate {
  std::int64_t offset_ns = 0;  // reference clock - local clock
  std::int64_t rtt_ns = 0;     // the round trip of the sample it comes from (its error is half)
};

// The estimate from the sample with the smallest round trip; {0, 0} for no samples.
clock_estimate estimate_offset(std::span<const clock_sample> samples) noexcept;

// What the trace's clock is: `aligned` when the offset to the reference was measured; the
// trace's time t then reads (local clock + offset_ns) - origin_ns, i.e. nanoseconds since
// origin_ns on the reference clock.
struct clock_alignment {
  bool aligned = false;
  std::int64_t offset_ns = 0;
  std::int64_t rtt_ns = 0;
  std::int64_t origin_ns = 0;  // on the reference clock
};

// The second measurement: how far the offset moved between the start and `at_ns` (trace
// time). A time t of the trace is corrected to t + drift_ns * t / at_ns.
struct clock_drift {
  bool measured = false;
  std::int64_t drift_ns = 0;
  std::int64_t at_ns = 0;
};

// The correction of the trace time t (ns) for the drift.
inline double corrected_ns(double t, const clock_drift& d) noexcept {
  if (!d.measured || d.at_ns <= 0) return t;
  return t + static_cast<double>(d.drift_ns) * t / static_cast<double>(d.at_ns);
}

}  // namespace hytask::trace
