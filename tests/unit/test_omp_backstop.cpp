// How long hytask_omp's session thread sleeps beside wrapped libgomp tasks (src/omp/layer.hpp):
// one longest period b without a boundary, or a quarter past the team's typical long task
// when that runs up to 1.6 b, so that the thread does not wake a moment before each task's
// own end polls.
#include <gtest/gtest.h>

#include <cstdint>

#include "omp/layer.hpp"

namespace {

using hytask::omp::detail::beside_tasks_backstop;
using hytask::omp::detail::layer;
using hytask::omp::detail::note_long_task;

constexpr std::int64_t us_ns = 1000, ms_ns = 1000 * us_ns;

// The team ran `n` tasks of `length` while the thread's backstop was `b`.
void tasks(layer& L, std::int64_t b, int n, std::int64_t length) {
  L.thread_backstop_ns.store(b);
  for (int i = 0; i < n; ++i) note_long_task(L, length);
}

TEST(OmpBackstop, OnePeriodBeforeAnyTaskWasSeen) {
  layer L;
  EXPECT_EQ(beside_tasks_backstop(L, 1300 * us_ns), 1300 * us_ns);
}

// After 20 tasks of one length, with b = 1.3 ms_ns: a quarter past tasks as long as b; b for
// tasks that end before it (counted, at least half of b) and for tasks longer than 1.6 b,
// which still get the thread's polls every b.
TEST(OmpBackstop, FollowsTheTasksLength) {
  struct {
    std::int64_t length, expected;
  } const cases[] = {{1300 * us_ns, 1625 * us_ns}, {800 * us_ns, 1300 * us_ns}, {5 * ms_ns, 1300 * us_ns}};
  for (const auto& c : cases) {
    layer L;
    tasks(L, 1300 * us_ns, 20, c.length);
    EXPECT_EQ(beside_tasks_backstop(L, 1300 * us_ns), c.expected) << "tasks of " << c.length << " ns";
  }
}

TEST(OmpBackstop, ShortTasksDoNotMoveTheTypicalLongOne) {
  layer L;
  tasks(L, 1300 * us_ns, 20, 1300 * us_ns);
  tasks(L, 1625 * us_ns, 200, 50 * us_ns);  // halo posts, packs: far below half the backstop
  EXPECT_EQ(beside_tasks_backstop(L, 1300 * us_ns), 1625 * us_ns);
}

TEST(OmpBackstop, TheAverageFollowsAChange) {
  layer L;
  tasks(L, 1300 * us_ns, 20, 1300 * us_ns);
  tasks(L, 1625 * us_ns, 60, 4 * ms_ns);  // the tasks grew past 1.6 b: back to polls every b
  EXPECT_EQ(beside_tasks_backstop(L, 1300 * us_ns), 1300 * us_ns);
}

}  // namespace
