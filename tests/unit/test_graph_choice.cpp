// The placement a recorded graph's runs learn (src/core/graph_choice.hpp): trials first,
// then the faster placement, with an exploring run now and then against the runs on either
// side of it.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/graph/graph_choice.hpp"

namespace {

using hytask::detail::graph_choice;
using hytask::detail::placement;

// Runs the next placement, taking `steal_ns` or `owner_ns`; returns the placement run.
placement run(graph_choice& c, std::int64_t steal_ns, std::int64_t owner_ns) {
  const placement p = c.next();
  c.record(p, p == placement::steal ? steal_ns : owner_ns);
  return p;
}

// Runs `runs` times; returns how many ran placement p.
unsigned count_runs(graph_choice& c, unsigned runs, std::int64_t steal_ns, std::int64_t owner_ns,
                    placement p) {
  unsigned n = 0;
  for (unsigned k = 0; k < runs; ++k) n += run(c, steal_ns, owner_ns) == p ? 1 : 0;
  return n;
}

}  // namespace

TEST(GraphChoice, TheTrialAlternatesAndPicksTheFaster) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k)
    EXPECT_EQ(run(c, 1000, 600), k % 2 == 0 ? placement::steal : placement::owner) << k;
  EXPECT_EQ(c.chosen(), placement::owner);
  graph_choice d;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(d, 600, 1000);
  EXPECT_EQ(d.chosen(), placement::steal);
}

TEST(GraphChoice, TheFirstTwoRunsDoNotCount) {
  // Both first runs are slow (paging in); the later ones decide.
  graph_choice c;
  c.record(c.next(), 100);     // steal, warm-up: would win if it counted
  c.record(c.next(), 90000);   // owner, warm-up
  for (unsigned k = 2; k < graph_choice::trial_runs; ++k) run(c, 1000, 500);
  EXPECT_EQ(c.chosen(), placement::owner);
}

TEST(GraphChoice, ExploresNowAndThenAndSwitchesWhenTheOtherIsFaster) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(c, 500, 1000);
  ASSERT_EQ(c.chosen(), placement::steal);
  // The same costs: one exploring run per explore_every, and no switch.
  EXPECT_EQ(count_runs(c, 4 * graph_choice::explore_every + 4, 500, 1000, placement::owner), 4u);
  EXPECT_EQ(c.chosen(), placement::steal);
  // The bodies changed: owner placement is now the faster; the next exploring run finds it
  // (and the run after it confirms).
  for (unsigned k = 0; k < graph_choice::explore_every + 2; ++k) run(c, 500, 300);
  EXPECT_EQ(c.chosen(), placement::owner);
  EXPECT_EQ(c.next(), placement::owner);
}

TEST(GraphChoice, ASlowerRunMakesTheNextOneExplore) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(c, 1000, 500);
  ASSERT_EQ(c.chosen(), placement::owner);
  run(c, 1000, 500);
  run(c, 1000, 500);
  // Twice the time with the chosen placement (bigger tasks, or a busier machine): the next
  // run tries the other one, and stealing is kept only if it is clearly faster.
  EXPECT_EQ(run(c, 1000, 1000), placement::owner);
  EXPECT_EQ(run(c, 950, 1000), placement::steal);
  EXPECT_EQ(run(c, 950, 1000), placement::owner);
  EXPECT_EQ(c.chosen(), placement::owner) << "5 % faster is within the noise";
  EXPECT_EQ(run(c, 1000, 3000), placement::owner);
  EXPECT_EQ(run(c, 1000, 3000), placement::steal);
  EXPECT_EQ(run(c, 1000, 3000), placement::owner);
  EXPECT_EQ(c.chosen(), placement::steal);
  EXPECT_EQ(c.next(), placement::steal);
}

// Owner placement is kept on a tie and taken on any gain: it is the one that pulls ahead
// as tasks shrink.
TEST(GraphChoice, OwnerPlacementWinsTies) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(c, 1000, 1050);
  EXPECT_EQ(c.chosen(), placement::owner) << "stealing 5 % faster: a tie";
  graph_choice d;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(d, 1000, 1200);
  ASSERT_EQ(d.chosen(), placement::steal);
  // Owner placement 2 % faster when tried: taken.
  for (unsigned k = 0; k < graph_choice::explore_every + 2; ++k) run(d, 1000, 980);
  EXPECT_EQ(d.chosen(), placement::owner);
}

// A sweep from big tasks to small ones (Task Bench's): an exploring run that comes first
// after the tasks shrank is faster than the bigger run before it, whichever placement it
// uses; only the run after it, of its own size, tells whether the placement made it so.
TEST(GraphChoice, TasksThatShrankBeforeAnExploringRunDoNotDecideIt) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(c, 1500, 1000);
  ASSERT_EQ(c.chosen(), placement::owner);
  // Big tasks up to the exploring run; the exploring run is the first of half the size.
  for (unsigned k = 0; k < graph_choice::explore_every; ++k) run(c, 1500, 1000);
  ASSERT_EQ(c.next(), placement::steal);
  run(c, 750, 500);  // stealing, small tasks: 3/4 of the big run before
  run(c, 750, 500);  // owner placement, small tasks: the judge
  EXPECT_EQ(c.chosen(), placement::owner);
  // The same with the sizes unchanged and stealing really faster: it switches. (That
  // judgement spanned a change of size, so the next exploring run comes explore_close runs
  // later, the judge counting as one of them.)
  for (unsigned k = 0; k + 1 < graph_choice::explore_close; ++k) run(c, 750, 500);
  ASSERT_EQ(c.next(), placement::steal);
  run(c, 400, 500);
  run(c, 400, 500);
  EXPECT_EQ(c.chosen(), placement::steal);
}

// Placements that tie (big tasks) are tried again every few runs, so that the choice
// follows the tasks as they shrink and one placement pulls ahead; a clear loser is tried
// only every explore_every runs.
TEST(GraphChoice, ACloseCallIsTriedAgainSoon) {
  graph_choice c;
  for (unsigned k = 0; k < graph_choice::trial_runs; ++k) run(c, 1050, 1000);
  ASSERT_EQ(c.chosen(), placement::owner);
  EXPECT_EQ(count_runs(c, 2 * graph_choice::explore_close + 2, 1050, 1000, placement::steal), 2u)
      << "a tie is tried again every explore_close runs";
  // The tasks changed: stealing now clearly faster; found within a few runs.
  for (unsigned k = 0; k < graph_choice::explore_close + 2; ++k) run(c, 300, 500);
  EXPECT_EQ(c.chosen(), placement::steal);
  // Now a clear winner: the other is tried once in explore_every runs only.
  EXPECT_LE(count_runs(c, 2 * graph_choice::explore_every, 300, 500, placement::owner), 2u);
}
