// stall_watch: the watchdog's judgement of a rank in which nothing has progressed (no task
// started or finished, no operation completed) while work is pending.
//
// After HYTASK_WATCHDOG_S of that, the rank is hung, unless it could not run for a quarter of
// that time or more. The watchdog thread measures that itself: it looks every 100 ms, and the
// time by which its looks come late is time in which the rank's threads did not get a CPU
// (the process was stopped, or the node so oversubscribed that the scheduler kept the rank
// off it: measured, under three 2-rank jobs on 2 cores, a rank that made no poll for 5 s and
// whose watchdog did not run for 6.6 s). The window then starts again, at most
// `max_extensions` times in a row, so that even a hang that looks starved is reported, late.
// A hung rank's watchdog is not late: it sleeps and wakes like any thread that sleeps.
#pragma once

#include <cstdint>

namespace hytask::mpi::detail {

class stall_watch {
 public:
  enum class verdict {
    fine,     // progress, or nothing to wait for
    stalled,  // no progress, for less than the limit so far
    starved,  // the limit passed, but the rank mostly could not run: the window restarts
    hung,     // the limit passed: report
  };

  // `now`: when watching starts (counts as progress).
  stall_watch(std::int64_t limit_ns, std::int64_t now, int max_extensions = 4) noexcept
      : limit_(limit_ns), max_extensions_(max_extensions), since_(now) {}
  // `unrun` at construction is taken as 0.

  // One look at time `now`. `progressed`: something progressed since the previous look, or
  // the rank has no work. `unrun`: a running total of the time the rank could not run (ns;
  // the watchdog's lateness).
  verdict look(bool progressed, std::int64_t now, std::int64_t unrun) noexcept {
    if (progressed) {
      since_ = now;
      unrun_at_ = unrun;  // the window starts here: lateness seen by later looks is in it
      stalled_ = false;
      extensions_ = 0;
      starved_ns_ = 0;
      return verdict::fine;
    }
    stalled_ = true;
    if (now - since_ <= limit_) return verdict::stalled;
    last_window_ = now - since_;
    last_unrun_ = unrun - unrun_at_;
    if (4 * last_unrun_ >= last_window_ && extensions_ < max_extensions_) {
      ++extensions_;
      starved_ns_ += last_window_;
      since_ = now;
      unrun_at_ = unrun;
      return verdict::starved;
    }
    return verdict::hung;
  }

  // Of the window the last starved or hung verdict judged: its length, and how much of it the
  // rank could not run.
  std::int64_t window_ns() const noexcept { return last_window_; }
  std::int64_t unrun_ns() const noexcept { return last_unrun_; }
  // Windows restarted since the last progress, and the time they covered.
  int extensions() const noexcept { return extensions_; }
  int max_extensions() const noexcept { return max_extensions_; }
  std::int64_t starved_ns() const noexcept { return starved_ns_; }
  // Whether the looks since the last progress found none.
  bool stalled() const noexcept { return stalled_; }

 private:
  std::int64_t limit_;
  int max_extensions_;
  std::int64_t since_;        // the last look with progress, or the last restart
  bool stalled_ = false;      // a look without progress since then
  std::int64_t unrun_at_ = 0; // `unrun` at the window's start (the last progress)
  int extensions_ = 0;
  std::int64_t starved_ns_ = 0;
  std::int64_t last_window_ = 0, last_unrun_ = 0;
};

}  // namespace hytask::mpi::detail
