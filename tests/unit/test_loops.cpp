#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "platform/topology.hpp"
#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

namespace {

const hytask::schedule all_schedules[] = {hytask::schedule::static_, hytask::schedule::dynamic,
                                          hytask::schedule::guided, hytask::schedule::static_ws};

}  // namespace

class Loops : public ::testing::TestWithParam<unsigned> {};

TEST_P(Loops, EveryIterationExactlyOnce) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  for (auto s : all_schedules)
    for (long n : {0L, 1L, 2L, 3L, 7L, 100L, 1001L, 100000L})
      for (std::size_t chunk : {0u, 1u, 3u, 64u}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        hytask::parallel_for(0L, n, [&](long i) { hits[static_cast<std::size_t>(i)]++; }, s, chunk);
        for (long i = 0; i < n; ++i)
          ASSERT_EQ(hits[static_cast<std::size_t>(i)].load(), 1)
              << "schedule " << static_cast<int>(s) << " n " << n << " chunk " << chunk;
      }
}

TEST_P(Loops, ChunkBodiesCoverTheRange) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  for (auto s : all_schedules) {
    std::vector<std::atomic<int>> hits(5000);
    hytask::parallel_for(
        100, 5100,
        [&](int lo, int hi) {
          ASSERT_LT(lo, hi);
          for (int i = lo; i < hi; ++i) hits[static_cast<std::size_t>(i - 100)]++;
        },
        s, 17);
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST_P(Loops, OddIndexTypesAndEmptyRanges) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::atomic<long> sum{0};
  hytask::parallel_for(static_cast<unsigned char>(10), static_cast<unsigned char>(250),
                       [&](unsigned char i) { sum += i; });
  long expect = 0;
  for (int i = 10; i < 250; ++i) expect += i;
  EXPECT_EQ(sum.load(), expect);
  bool ran = false;
  hytask::parallel_for(10, 10, [&](int) { ran = true; });
  hytask::parallel_for(10, 5, [&](int) { ran = true; });
  EXPECT_FALSE(ran);
  sum = 0;
  hytask::parallel_for(-50, 50, [&](int i) { sum += i; }, hytask::schedule::static_ws);
  EXPECT_EQ(sum.load(), -50);
}

TEST_P(Loops, ExceptionIsRethrownAndStopsTheLoop) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  const long n = 200000;
  for (auto s : all_schedules) {
    // The tenth iteration to run throws (which index that is depends on the schedule and on
    // stealing). Chunks already running finish, but no new one starts once the exception
    // is caught: with each iteration taking ~1 us, the rest of the loop is far longer than
    // an unwind or a scheduler time slice, so only part of the iterations run.
    std::atomic<long> ran{0};
    EXPECT_THROW(hytask::parallel_for(
                     0L, n,
                     [&](long) {
                       if (ran++ == 10) throw std::runtime_error("tenth iteration");
                       auto until = std::chrono::steady_clock::now() + 1us;
                       while (std::chrono::steady_clock::now() < until) {
                       }
                     },
                     s, 1),
                 std::runtime_error);
    // guided's first chunks are remaining / workers each (half the range with two).
    const long bound = s == hytask::schedule::guided ? n : n / 2;
    EXPECT_LT(ran.load(), bound) << "schedule " << static_cast<int>(s);
  }
  hytask::parallel_for(0, 10, [](int) {});  // the runtime is still usable
}

TEST_P(Loops, NestedLoopsAndTasksInBodies) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::atomic<long> cells{0}, spawned{0};
  hytask::parallel_for(0, 16, [&](int) {
    hytask::parallel_for(0, 32, [&](int) { cells++; }, hytask::schedule::dynamic);
    hytask::spawn([&spawned] {
      std::this_thread::sleep_for(100us);
      spawned++;
    });
  });
  EXPECT_EQ(cells.load(), 16 * 32);
  EXPECT_EQ(spawned.load(), 16);  // tasks spawned by the body completed before the return
}

TEST_P(Loops, LoopInsideTasks) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::vector<long> results(8);
  for (int t = 0; t < 8; ++t)
    hytask::spawn([&results, t] {
      std::atomic<long> s{0};
      hytask::parallel_for(0, 1000, [&s](int i) { s += i; }, hytask::schedule::static_ws);
      results[static_cast<std::size_t>(t)] = s.load();
    });
  hytask::wait_all();
  for (long r : results) EXPECT_EQ(r, 999 * 1000 / 2);
}

TEST_P(Loops, BusyWorkerDoesNotDelayTheLoop) {
  const unsigned threads = GetParam();
  if (threads < 2) GTEST_SKIP() << "needs a second worker to keep busy";
  hytask::runtime rt(hytask::config{.threads = threads});
  // The long tasks end on their own after 10 s: a loop that waited for them fails the bound
  // below instead of hanging. Leaving the test (an ASSERT included) releases them.
  std::atomic<bool> release{false};
  struct releaser {
    std::atomic<bool>& r;
    ~releaser() { r.store(true, std::memory_order_release); }
  } release_at_exit{release};
  std::atomic<unsigned> holding{0};
  for (unsigned w = 1; w < threads; ++w)
    hytask::spawn([&] {
      holding.fetch_add(1);
      const auto end = std::chrono::steady_clock::now() + 10s;
      while (!release.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(1ms);
    });
  // Main stays out of the runtime: the other workers take the long tasks.
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (holding.load() < threads - 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(1ms);
  ASSERT_EQ(holding.load(), threads - 1) << "the other workers did not take the long tasks";
  for (auto s : all_schedules) {
    auto t0 = std::chrono::steady_clock::now();
    std::atomic<int> n{0};
    hytask::parallel_for(0, 1000, [&n](int) { n++; }, s);
    EXPECT_EQ(n.load(), 1000);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s)
        << "schedule " << static_cast<int>(s) << ": the loop waited for the busy workers";
  }
  release = true;
  hytask::wait_all();
}

INSTANTIATE_TEST_SUITE_P(Threads, Loops, ::testing::Values(1u, 2u, 4u));

TEST(LoopSchedule, StaticGivesBlockPToWorkerP) {
  hytask::runtime rt(hytask::config{.threads = 2});
  // Each iteration is long enough that the second worker is awake before the first
  // finishes its block, so nobody takes over a block.
  std::vector<int> who(2, -1);
  for (int rep = 0; rep < 5; ++rep) {
    hytask::parallel_for(0, 2, [&who](int i) {
      std::this_thread::sleep_for(20ms);
      who[static_cast<std::size_t>(i)] = hytask::worker_index();
    });
    EXPECT_EQ(who[0], 0);
    EXPECT_EQ(who[1], 1);
  }
}

TEST(LoopSchedule, StaticWsOwnersRunPrefixesThievesSuffixes) {
  const unsigned P = 4;
  hytask::runtime rt(hytask::config{.threads = P});
  const int n = 2000, chunk = 10;
  const int block = n / static_cast<int>(P);
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<std::atomic<int>> hits(n);
    std::vector<int> who(n, -1);
    hytask::parallel_for(
        0, n,
        [&](int lo, int hi) {
          int me = hytask::worker_index();
          for (int i = lo; i < hi; ++i) {
            hits[static_cast<std::size_t>(i)]++;
            who[static_cast<std::size_t>(i)] = me;
          }
          // Worker 1 is slow, so its block gets stolen; the others take long enough that
          // every owner starts on its block before the thieves could empty it.
          std::this_thread::sleep_for(me == 1 ? 4ms : 200us);
        },
        hytask::schedule::static_ws, chunk);
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    for (int b = 0; b < static_cast<int>(P); ++b) {
      // Block b is [b * block, (b + 1) * block): its owner ran a prefix, thieves the rest.
      int i = b * block;
      while (i < (b + 1) * block && who[static_cast<std::size_t>(i)] == b) ++i;
      for (int j = i; j < (b + 1) * block; ++j)
        ASSERT_NE(who[static_cast<std::size_t>(j)], b) << "block " << b << " index " << j;
      if (b == 1) {
        EXPECT_GT(i, b * block) << "the slow owner ran none of its own block";
        EXPECT_LT(i, (b + 1) * block) << "nobody stole from the slow worker";
      }
    }
  }
}

TEST(LoopSchedule, StealOrderPrefersSamePackage) {
  // Workers 0..3 on package 0, 4..7 on package 1.
  std::vector<int> pkg = {0, 0, 0, 0, 1, 1, 1, 1};
  auto order = hytask::core::steal_order(pkg, 1);
  std::vector<unsigned> expect = {2, 3, 0, 4, 5, 6, 7};
  EXPECT_EQ(order, expect);
  auto single = hytask::core::steal_order({0, 0, 0}, 2);
  EXPECT_EQ(single, (std::vector<unsigned>{0, 1}));
}
