// apps/hpl's update width (apps/hpl/granularity.hpp): the tasks variant's default update
// tasks are as narrow as the measured packing cost allows, one per worker at least.
#include <gtest/gtest.h>

#include <algorithm>

#include "granularity.hpp"

using hpl::update_overhead;
using hpl::update_width;

namespace {

// The packing's share of a task `w` columns wide, at `pack` columns' cost.
double packing_share(double pack, long w) { return pack / (pack + double(w)); }

long tasks_for(long cols, long w) { return (cols + w - 1) / w; }

}  // namespace

TEST(HplGranularity, WidthIsWholeBlocksAndKeepsPackingWithinTheOverhead) {
  for (double pack : {1.0, 5.0, 14.0, 22.0, 60.0})
    for (long cols : {128L, 1000L, 2929L, 3905L, 12000L})
      for (int workers : {1, 2, 4}) {
        const long w = update_width(cols, 128, workers, pack);
        EXPECT_EQ(w % 128, 0) << pack << " " << cols << " " << workers;
        EXPECT_GE(w, 128);
        const long blocks = (cols + 127) / 128;
        // Packing within the overhead unless the workers need more, narrower tasks.
        const double narrowest = std::max(128.0, pack * (1 - update_overhead) / update_overhead);
        if (static_cast<long>(double(cols) / narrowest) >= workers) {
          EXPECT_LE(packing_share(pack, w), update_overhead * 1.0001) << pack << " " << cols << " " << workers;
        }
        // A worker without a task only when there are fewer blocks than workers.
        EXPECT_GE(tasks_for(cols, w), std::min<long>(workers, blocks)) << pack << " " << cols << " " << workers;
      }
}

TEST(HplGranularity, NarrowestWidthThatMeetsTheOverhead) {
  // Packing costs 14 columns: at most 1 % takes 1386 columns or more; 2929 columns make two
  // tasks of 12 blocks (1536), not one, and not the 4-block tasks of the fixed default.
  EXPECT_EQ(update_width(2929, 128, 1, 14.0), 1536);
  EXPECT_EQ(update_width(2929, 128, 2, 14.0), 1536);
  // Four workers get a task each at least even though packing then costs more: 23 blocks,
  // 5 per task (5 tasks).
  EXPECT_EQ(update_width(2929, 128, 4, 14.0), 640);
  // 5 blocks, 4 workers: one block per task, not 2 (3 tasks).
  EXPECT_EQ(update_width(5 * 128, 128, 4, 14.0), 128);
  // Cheaper packing, narrower tasks: 5 columns -> 495 at least -> 5 tasks of 5 blocks.
  EXPECT_EQ(update_width(2929, 128, 1, 5.0), 640);
  // Dearer packing: one task for everything on one worker.
  EXPECT_EQ(update_width(2929, 128, 1, 60.0), 2944);
}

TEST(HplGranularity, DegenerateInputs) {
  EXPECT_EQ(update_width(0, 128, 1, 14.0), 128);    // nothing to update
  EXPECT_EQ(update_width(50, 128, 2, 14.0), 128);   // less than a block
  EXPECT_EQ(update_width(960, 16, 1, 0.0), 16);     // a failed measurement: one block per task
  EXPECT_EQ(update_width(960, 16, 1, -3.0), 16);    // (never negative widths)
  EXPECT_EQ(update_width(300, 20, 2, 1e9), 140);    // absurd cost: a share per worker (7 blocks)
}
