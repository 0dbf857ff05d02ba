// The owner's matcher of global dependencies (src/global/home.hpp), one dependency kind at a
// time: which B records a matching or a completion causes, and when.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "global/home.hpp"
#include "hytask/errors.hpp"

namespace gd = hytask::global::detail;

namespace {

constexpr std::uint64_t loc = 42;

gd::home make_home(int self = 0) {
  return gd::home(self, [](std::uint64_t key) { return "location " + std::to_string(key); });
}

gd::record announce(gd::dep_kind k, std::uint32_t phase, std::uint64_t id, std::uint64_t seq,
                    std::uint64_t key = loc) {
  return gd::record{gd::msg_type::announce, k, 0, phase, key, id, seq};
}

using releases = std::vector<gd::release_order>;

}  // namespace

TEST(GlobalHome, ReadAfterRemoteWriteWaitsForTheWritersCompletion) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::out, 0, 7, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 1, 9, 1));
  gd::effects fx;
  h.match(0, true, fx);
  EXPECT_TRUE(fx.releases.empty());  // a first phase's accesses get no B
  h.match(1, false, fx);
  EXPECT_TRUE(fx.releases.empty()) << "the reader was released before the writer completed";
  h.complete_remote(1, 7, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 9, 0}}));
}

TEST(GlobalHome, LocalTaskAfterRemoteWriteIsGatedUntilTheWriterCompletes) {
  gd::home h = make_home();
  gd::task_record t;
  t.gate = 1;  // its phase's matching, as the engine sets it
  h.add_remote(1, announce(gd::dep_kind::out, 0, 7, 1));
  gd::node* n = h.add_local(&t, loc, gd::dep_kind::in, 1, 1);
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_EQ(t.gate, 2);  // matching share + the remote writer
  h.complete_remote(1, 7, 0, fx);
  EXPECT_EQ(t.gate, 1);
  EXPECT_TRUE(fx.ready.empty());
  h.complete_local(n, 0, fx);
}

TEST(GlobalHome, WriteAfterRemoteReadsWaitsForEveryReader) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::in, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 0, 2, 1));
  h.add_remote(3, announce(gd::dep_kind::out, 1, 3, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_TRUE(fx.releases.empty());
  h.complete_remote(2, 2, 0, fx);
  EXPECT_TRUE(fx.releases.empty()) << "the writer ran before rank 1's reader completed";
  h.complete_remote(1, 1, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{3, 3, 0}}));
}

TEST(GlobalHome, WriteAfterRemoteWriteWaits) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::out, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::out, 1, 2, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_TRUE(fx.releases.empty());
  h.complete_remote(1, 1, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 2, 0}}));
}

TEST(GlobalHome, TheLastWriteOfAPhaseIsDominant) {
  gd::home h = make_home();
  // Rank 1 writes, reads and writes again in phase 0; rank 2 reads in phase 1.
  h.add_remote(1, announce(gd::dep_kind::out, 0, 1, 1));
  h.add_remote(1, announce(gd::dep_kind::in, 0, 2, 2));
  h.add_remote(1, announce(gd::dep_kind::out, 0, 3, 3));
  h.add_remote(2, announce(gd::dep_kind::in, 1, 4, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_TRUE(fx.releases.empty());
  h.complete_remote(1, 1, 0, fx);
  h.complete_remote(1, 2, 0, fx);
  EXPECT_TRUE(fx.releases.empty()) << "the reader waited for the first write, not the last";
  h.complete_remote(1, 3, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 4, 0}}));
}

TEST(GlobalHome, OneRanksOrderIsItsDiscoveryOrderWhateverTheArrivalOrder) {
  gd::home h = make_home();
  // Rank 1's write (seq 1) then read (seq 2) arrive in the opposite order.
  h.add_remote(1, announce(gd::dep_kind::in, 0, 2, 2));
  h.add_remote(1, announce(gd::dep_kind::out, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::out, 1, 3, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  h.complete_remote(1, 1, 0, fx);
  EXPECT_TRUE(fx.releases.empty()) << "rank 1's read was taken for the older access";
  h.complete_remote(1, 2, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 3, 0}}));
}

TEST(GlobalHome, ReadsOfDifferentRanksAreIndependent) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::in, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 0, 2, 1));
  h.add_remote(3, announce(gd::dep_kind::in, 1, 3, 1));
  gd::effects fx;
  h.match(0, true, fx);
  EXPECT_TRUE(fx.releases.empty());
  h.match(1, false, fx);
  // Nothing was written: rank 3's read waits for nobody, although ranks 1 and 2 still read.
  EXPECT_EQ(fx.releases, (releases{{3, 3, 0}}));
}

TEST(GlobalHome, SameRankEdgesAreLeftToThatRanksTracker) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::out, 0, 1, 1));
  h.add_remote(1, announce(gd::dep_kind::in, 1, 2, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_EQ(fx.releases, (releases{{1, 2, 0}}));
}

TEST(GlobalHome, ACompletionMayArriveBeforeItsAnnouncement) {
  gd::home h = make_home();
  gd::effects fx;
  h.complete_remote(1, 1, 0, fx);  // a first phase's task ran and completed at once
  h.add_remote(1, announce(gd::dep_kind::out, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 1, 2, 1));
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 2, 0}}));
  h.complete_remote(2, 2, 0, fx);
  EXPECT_TRUE(h.idle()) << h.nodes() << " nodes, " << h.chains() << " chains left";
}

// A conflict is reported (take_conflicts) and both accesses are released to be skipped: the
// protocol goes on, so that every rank reaches its wait_all, which throws it.
TEST(GlobalHome, ConflictingAccessesOfTwoRanksInOnePhaseAreReportedAndSkipped) {
  gd::home h = make_home();
  h.add_remote(2, announce(gd::dep_kind::in, 3, 1, 1));
  h.add_remote(1, announce(gd::dep_kind::out, 3, 2, 1));
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  h.match(2, false, fx);
  h.match(3, false, fx);
  const std::vector<std::string> found = h.take_conflicts();
  ASSERT_EQ(found.size(), 1u);
  const std::string& m = found[0];
  EXPECT_NE(m.find("location 42"), std::string::npos) << m;
  EXPECT_NE(m.find("phase 3"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 1 declares out"), std::string::npos) << m;
  EXPECT_NE(m.find("rank 2 declares in"), std::string::npos) << m;
  EXPECT_NE(m.find("hytask::fence()"), std::string::npos) << m;
  EXPECT_TRUE(h.take_conflicts().empty()) << "a conflict is reported once";
  constexpr std::uint16_t skip = gd::flag_failed | gd::flag_conflict;
  EXPECT_EQ(fx.releases, (releases{{1, 2, skip}})) << "the writer (rank order first) is released to be skipped";
  h.complete_remote(1, 2, gd::flag_failed, fx);
  EXPECT_EQ(fx.releases.back(), (gd::release_order{2, 1, skip}));
  h.complete_remote(2, 1, gd::flag_failed, fx);
  h.end_epoch();
  EXPECT_TRUE(h.idle());
}

TEST(GlobalHome, ReadsOfTwoRanksBesideTheOwnersReadAreNoConflict) {
  gd::home h = make_home();
  gd::task_record t;
  gd::node* n = h.add_local(&t, loc, gd::dep_kind::in, 0, 1);
  h.add_remote(1, announce(gd::dep_kind::in, 0, 1, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 0, 2, 1));
  gd::effects fx;
  EXPECT_NO_THROW(h.match(0, true, fx));
  h.complete_local(n, 0, fx);
  h.complete_remote(1, 1, 0, fx);
  h.complete_remote(2, 2, 0, fx);
  EXPECT_TRUE(h.idle());
}

TEST(GlobalHome, ChainsOfCompletedAccessesAreDropped) {
  gd::home h = make_home();
  gd::effects fx;
  std::uint64_t id = 1;
  for (std::uint32_t phase = 0; phase < 1000; ++phase) {
    for (std::uint64_t key = 0; key < 10; ++key) {
      const int rank = 1 + static_cast<int>((phase + key) % 3);
      h.add_remote(rank, announce(phase % 2 ? gd::dep_kind::in : gd::dep_kind::out, phase, id,
                                  id, key));
      ++id;
    }
    h.match(phase, phase == 0, fx);
    // Complete the previous phase's accesses.
    if (phase > 0)
      for (std::uint64_t k = 0; k < 10; ++k) {
        const std::uint64_t done = id - 20 + k;
        h.complete_remote(1 + static_cast<int>((phase - 1 + k) % 3), done, 0, fx);
      }
    EXPECT_LE(h.nodes(), 20u);
  }
}

// A location that is only read never sees the writer that would supersede its readers, and
// while reads overlap the chain never empties: completed readers must still be freed.
TEST(GlobalHome, ALocationReadForeverKeepsOnlyTheReadsInFlight) {
  gd::home h = make_home();
  gd::effects fx;
  std::uint64_t id = 1;
  for (std::uint32_t phase = 0; phase < 1000; ++phase) {
    // Ranks 1 and 2 take turns, four reads a phase; one read of the previous phase is
    // always still running when the next phase is matched.
    for (int k = 0; k < 4; ++k, ++id)
      h.add_remote(1 + static_cast<int>(phase % 2), announce(gd::dep_kind::in, phase, id, id));
    const std::size_t before = fx.releases.size();
    h.match(phase, phase == 0, fx);
    ASSERT_EQ(fx.releases.size() - before, phase == 0 ? 0u : 4u) << "phase " << phase;
    if (phase > 0)
      for (std::uint64_t done = id - 8; done < id - 4; ++done)
        h.complete_remote(1 + static_cast<int>((phase - 1) % 2), done, 0, fx);
    ASSERT_LE(h.nodes(), 16u) << "after phase " << phase << ": completed reads pile up";
  }
  EXPECT_EQ(h.chains(), 1u);
  // Every read after the first phase was released at its matching: none waited for a read.
  EXPECT_EQ(fx.releases.size(), 999u * 4);
}

// Seed 001 L1292: a task with a successor on another rank communicates; matching reports it
// once, while it has not completed, and not for successors on its own rank.
TEST(GlobalHome, MatchingReportsALocalTaskThatGainsARemoteSuccessor) {
  gd::home h = make_home();
  gd::task_record w, local_reader;
  gd::node* nw = h.add_local(&w, loc, gd::dep_kind::out, 0, 1);
  gd::node* nr = h.add_local(&local_reader, loc, gd::dep_kind::in, 1, 2);
  gd::effects fx;
  h.match(0, true, fx);
  h.match(1, false, fx);
  EXPECT_TRUE(fx.remote_succ.empty()) << "a successor on the same rank is not remote";
  h.add_remote(1, announce(gd::dep_kind::in, 2, 5, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 2, 6, 1));
  h.match(2, false, fx);
  EXPECT_EQ(fx.remote_succ, (std::vector<gd::task_record*>{&w}));
  EXPECT_TRUE(w.remote_succ);
  h.complete_local(nr, 0, fx);
  h.complete_local(nw, 0, fx);
  EXPECT_EQ(fx.releases, (releases{{1, 5, 0}, {2, 6, 0}}));
  gd::effects after;
  h.add_remote(1, announce(gd::dep_kind::in, 3, 7, 2));
  h.match(3, false, after);
  EXPECT_TRUE(after.remote_succ.empty()) << "a completed task was reported";
  h.complete_remote(1, 5, 0, after);
  h.complete_remote(2, 6, 0, after);
  h.complete_remote(1, 7, 0, after);
  EXPECT_TRUE(h.idle());
}

// A cancelled or failed task passes that on to its successors on other ranks, as the core
// does between local tasks: the B record says how the predecessor ended.
TEST(GlobalHome, ACancelledWritersRemoteReaderIsReleasedCancelled) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::out, 1, 7, 1));
  h.add_remote(2, announce(gd::dep_kind::in, 2, 9, 1));
  gd::effects fx;
  h.match(1, false, fx);
  h.match(2, false, fx);
  EXPECT_EQ(fx.releases, (releases{{1, 7, 0}}));  // the writer's own B: nothing before it
  fx.releases.clear();
  h.complete_remote(1, 7, gd::flag_cancelled, fx);
  EXPECT_EQ(fx.releases, (releases{{2, 9, gd::flag_cancelled}}));
  h.complete_remote(2, 9, gd::flag_cancelled, fx);  // skipped, so cancelled too
  EXPECT_FALSE(h.idle()) << "cancelled accesses are kept for later ones to inherit from";
  h.end_epoch();
  EXPECT_TRUE(h.idle()) << "wait_all's end of the epoch left the cancelled accesses";
}

// The writer failed and completed before the reader's phase was matched: its chain stays, so
// the reader still inherits the failure; wait_all's end of the epoch frees it.
TEST(GlobalHome, AFailureCompletedBeforeMatchingStillReachesTheLaterReader) {
  gd::home h = make_home();
  gd::task_record t;
  t.gate = 1;
  h.add_remote(1, announce(gd::dep_kind::out, 1, 7, 1));
  gd::effects fx;
  h.match(1, false, fx);
  h.complete_remote(1, 7, gd::flag_failed, fx);
  EXPECT_FALSE(h.idle()) << "the failed writer's chain was dropped: a later reader would not know";
  h.add_remote(2, announce(gd::dep_kind::in, 2, 9, 1));
  gd::node* local = h.add_local(&t, loc, gd::dep_kind::in, 2, 2);
  h.match(2, false, fx);
  EXPECT_EQ(fx.releases.back(), (gd::release_order{2, 9, gd::flag_failed}));
  EXPECT_EQ(t.inherited, gd::flag_failed) << "this rank's own reader did not inherit the failure";
  EXPECT_EQ(t.gate, 1) << "a completed predecessor holds nothing back";
  h.complete_remote(2, 9, gd::flag_failed, fx);
  h.complete_local(local, gd::flag_failed, fx);
  EXPECT_FALSE(h.idle());
  h.end_epoch();
  EXPECT_TRUE(h.idle());
}

// A cancellation travels along the chain from rank to rank: a write after a cancelled read
// is skipped, and so is the next rank's write after that one (transitively, as locally).
TEST(GlobalHome, ACancellationTravelsAlongTheChain) {
  gd::home h = make_home();
  h.add_remote(1, announce(gd::dep_kind::in, 1, 7, 1));
  gd::effects fx;
  h.match(1, false, fx);
  h.complete_remote(1, 7, gd::flag_cancelled, fx);
  h.add_remote(2, announce(gd::dep_kind::out, 2, 8, 1));
  h.match(2, false, fx);
  EXPECT_EQ(fx.releases.back(), (gd::release_order{2, 8, gd::flag_cancelled}))
      << "a write after a cancelled read of another rank runs as a local one would not";
  h.complete_remote(2, 8, gd::flag_cancelled, fx);
  h.add_remote(1, announce(gd::dep_kind::out, 3, 10, 2));
  h.match(3, false, fx);
  h.complete_remote(1, 10, 0, fx);
  EXPECT_EQ(fx.releases.back(), (gd::release_order{1, 10, gd::flag_cancelled}));
}

#if defined(HYTASK_ASSERTIONS)
// Built with the invariant checks (the sanitizer variants, Debug builds): a bug that completes
// an access twice stops the program where it happens, naming the invariant, instead of
// opening some task's gate one share too early much later.
TEST(GlobalHomeDeathTest, ALocalAccessCompletedTwiceIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  gd::home h = make_home();
  gd::task_record t;
  gd::node* n = h.add_local(&t, loc, gd::dep_kind::out, 0, 1);
  gd::effects fx;
  h.match(0, true, fx);
  h.complete_local(n, 0, fx);
  EXPECT_TRUE(h.idle());
  EXPECT_DEATH(h.complete_local(n, 0, fx), "internal error.*a local access completes once");
}
#endif
