// graph_choice: which placement a recorded graph's next run uses, learnt from its runs
// (HYTASK_GRAPH_PLACEMENT=auto).
//
// Neither placement wins everywhere. Stealing balances any graph, and pays several
// cache-line transfers for each task that moves between workers; owner placement (a worker
// fixed per task, predecessors announced by message) pays one transfer per message, and
// balances only as well as its fixed partition does. So the graph's own runs decide:
//   - the first six runs alternate, stealing first; the placement whose fastest run among
//     the last four was faster is chosen (the first two warm the caches and page in);
//   - every `explore_every`-th run after that tries the other placement; the run after it
//     (the chosen placement again) judges it: the other placement is chosen when its run
//     took less than 9/10 of the faster of the chosen runs on either side of it;
//   - a run that took more than 3/2 of the one before (the bodies or the machine changed)
//     makes the next run try the other placement too.
// Runs are compared only with their neighbours, so a program whose tasks grow or shrink
// from one phase to the next compares like with like: when the tasks shrink just before an
// exploring run, the run after it, of the same size, is the one it must beat (compared
// with the bigger run before it alone, it would win by the change of size). Not
// thread-safe: one run at a time reports (graph::run skips the choice when runs overlap).
#pragma once

#include <algorithm>
#include <cstdint>

namespace hytask::detail {

enum class placement : std::uint8_t { steal, owner };

class graph_choice {
 public:
  static constexpr unsigned explore_every = 16;
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
      if (runs_ == trial_runs) chosen_ = best_[1] < best_[0] ? placement::owner : placement::steal;
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
      if (10 * explored_ < 9 * std::min(prev_, ns)) chosen_ = other(chosen_);
      judging_ = false;
    }
    explore_ = ++since_ >= explore_every || (prev_ > 0 && 2 * ns > 3 * prev_);
    prev_ = ns;
  }

  placement chosen() const noexcept { return chosen_; }

 private:
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
  std::int64_t best_[2] = {0, 0};  // the trial's fastest run of each, past the first two
};

}  // namespace hytask::detail
