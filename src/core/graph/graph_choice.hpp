// graph_choice: which placement a recorded graph's next run uses, learnt from its runs
// (HYTASK_GRAPH_PLACEMENT=auto).
//
// Neither placement wins everywhere. Stealing balances any graph, and pays several
// cache-line transfers for each task that moves between workers; owner placement (a worker
// fixed per task, predecessors announced by message) pays one transfer per message, and
// balances only as well as its fixed partition does. So the graph's own runs decide:
//   - the first six runs alternate, stealing first; owner placement is chosen unless
//     stealing's fastest run among the last four took less than 9/10 of owner placement's
//     (the first two warm the caches and page in);
//   - now and then a run tries the other placement; the run after it (the chosen placement
//     again) judges it against the faster of the chosen runs on either side of it: owner
//     placement is taken when its run was faster, stealing when its run took less than
//     9/10. The bias: when they tie (big tasks), owner placement is the one that pulls
//     ahead as the tasks shrink (it moves fewer cache lines between cores), and stealing
//     shows its worth (balance) by clear margins;
//   - how often: every `explore_every` runs when the last comparison (the trial's, or a
//     judgement's) found the other placement clearly slower (by 1/10 or more), and every
//     `explore_close` runs when it was within that of the chosen one, or when the judging
//     runs themselves differed by more (the tasks changed size meanwhile). A close call is
//     cheap to try again and may turn as the program's tasks change; a clear one is costly
//     to try (the slower placement's whole run);
//   - a run that took more than 3/2 of the one before (the bodies or the machine changed)
//     makes the next run try the other placement too.
// Runs are compared only with their neighbours, so a program whose tasks grow or shrink
// from one phase to the next compares like with like: when the tasks shrink just before an
// exploring run, the run after it, of the same size, is the one it must beat (compared
// with the bigger run before it alone, it would win by the change of size). Task Bench's
// sweep, from big tasks (where the placements tie) to small ones (where owner placement is
// up to 1.3x faster), needs both rules: with the choice left to a tie for 16 runs, five of
// its points ran with the slower placement. Not thread-safe: one run at a time reports
// (graph::run skips the choice when runs overlap).
#pragma once

#include <algorithm>
#include <cstdint>

namespace hytask::detail {

enum class placement : std::uint8_t { steal, owner };

class graph_choice {
 public:
  static constexpr unsigned explore_every = 16;
  static constexpr unsigned explore_close = 4;
  static constexpr unsigned trial_runs = 6;

  // The placement for the next run.
  placement next() const noexcept {
    if (runs_ < trial_runs) return (runs_ % 2) == 0 ? placement::steal : placement::owner;
    return explore_ ? other(chosen_) : chosen_;
  }

  // A run with placement p took ns nanoseconds.
  void record(placement p, std::int64_t ns) noexcept {
    ++runs_;
    if (runs_ <= trial_runs) {
      if (runs_ > 2 && (best_[index(p)] == 0 || ns < best_[index(p)])) best_[index(p)] = ns;
      if (runs_ == trial_runs) {
        chosen_ = wins(placement::steal, best_[0], best_[1]) ? placement::steal : placement::owner;
        close_ = close(best_[0], best_[1]);
      }
      prev_ = ns;
      return;
    }
    if (p != chosen_) {  // an exploring run: judged by the next run (prev_ is kept)
      explored_ = ns;
      judging_ = true;
      explore_ = false;
      since_ = 0;
      return;
    }
    if (judging_) {  // the chosen placement again, just after an exploring run
      const std::int64_t chosen_ns = std::min(prev_, ns);
      if (wins(other(chosen_), explored_, chosen_ns)) chosen_ = other(chosen_);
      // Close: within 1/10, or the two neighbours themselves differ by more (the tasks
      // changed size around the exploring run, and the comparison says little).
      close_ = close(explored_, chosen_ns) || !close(prev_, ns);
      judging_ = false;
    }
    explore_ = ++since_ >= (close_ ? explore_close : explore_every) ||
               (prev_ > 0 && 2 * ns > 3 * prev_);
    prev_ = ns;
  }

  placement chosen() const noexcept { return chosen_; }

 private:
  // Whether p, taking ns, should replace the other placement, taking other_ns.
  static bool wins(placement p, std::int64_t ns, std::int64_t other_ns) noexcept {
    return p == placement::owner ? ns < other_ns : 10 * ns < 9 * other_ns;
  }
  // Whether two runs' times are within 1/10 of each other.
  static bool close(std::int64_t a, std::int64_t b) noexcept {
    return 10 * std::max(a, b) < 11 * std::min(a, b);
  }
  static placement other(placement p) noexcept {
    return p == placement::steal ? placement::owner : placement::steal;
  }
  static unsigned index(placement p) noexcept { return p == placement::steal ? 0 : 1; }

  unsigned runs_ = 0;
  placement chosen_ = placement::steal;
  bool explore_ = false;
  unsigned since_ = 0;
  std::int64_t prev_ = 0;      // the last run of the chosen placement (or of the trial)
  std::int64_t explored_ = 0;  // the exploring run's time, while judging_
  bool judging_ = false;       // the next run of the chosen placement judges it
  bool close_ = false;         // the last comparison was within 1/10
  std::int64_t best_[2] = {0, 0};  // the trial's fastest run of each, past the first two
};

}  // namespace hytask::detail
