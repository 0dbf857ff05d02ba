// The order in which ready tasks start: integer priorities, spawn order among equals, the
// next slot, depth-first recursion, and the learned communication class.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <atomic>
#include <chrono>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "platform/fiber.hpp"
#include "core/sched/scheduler.hpp"
#include "hytask/hytask.hpp"
#include "test_util.hpp"

namespace {

struct start {
  int priority;
  int spawned;  // spawn index
  int worker;
};

// 200 tasks with 20 priority levels (-10..9), in shuffled order.
std::vector<int> shuffled_priorities(unsigned seed) {
  std::vector<int> p(200);
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<int>(i % 20) - 10;
  std::shuffle(p.begin(), p.end(), std::mt19937(seed));
  return p;
}

}  // namespace

TEST(Priority, OneWorkerRunsHigherPrioritiesFirstAndEqualOnesInSpawnOrder) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (unsigned seed : {1u, 2u, 3u}) {
    const std::vector<int> prio = shuffled_priorities(seed);
    std::vector<start> order;
    for (int i = 0; i < static_cast<int>(prio.size()); ++i)
      hytask::spawn({.priority = prio[static_cast<std::size_t>(i)]},
                    [&order, i, p = prio[static_cast<std::size_t>(i)]] { order.push_back({p, i, 0}); });
    hytask::wait_all();
    ASSERT_EQ(order.size(), prio.size());
    for (std::size_t k = 1; k < order.size(); ++k) {
      ASSERT_GE(order[k - 1].priority, order[k].priority) << "position " << k << ", seed " << seed;
      if (order[k - 1].priority == order[k].priority) {
        ASSERT_LT(order[k - 1].spawned, order[k].spawned)
            << "equal priorities out of spawn order at position " << k << ", seed " << seed;
      }
    }
  }
}

TEST(Priority, ExtremePrioritiesAreOrdered) {
  hytask::runtime rt(hytask::config{.threads = 1});
  const int p[] = {0, INT_MIN, INT_MAX, -1, 1, INT_MAX - 1, INT_MIN + 1};
  std::vector<int> order;
  for (int v : p) hytask::spawn({.priority = v}, [&order, v] { order.push_back(v); });
  hytask::wait_all();
  EXPECT_EQ(order, (std::vector<int>{INT_MAX, INT_MAX - 1, 1, 0, -1, INT_MIN + 1, INT_MIN}));
}

// Also the program of the scheduling issue: a transfer spawned before its compute starts
// first, without hints.
TEST(Priority, OneWorkerRunsOrdinaryTasksInSpawnOrder) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<int> order;
  for (int i = 0; i < 500; ++i) hytask::spawn([&order, i] { order.push_back(i); });
  hytask::wait_all();
  std::vector<int> expect(500);
  std::iota(expect.begin(), expect.end(), 0);
  EXPECT_EQ(order, expect);
}

TEST(Priority, ChildrenOfATaskStartInSpawnOrder) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<int> order;
  hytask::spawn([&order] {
    for (int i = 0; i < 100; ++i) hytask::spawn([&order, i] { order.push_back(i); });
    hytask::wait_all();
  });
  hytask::wait_all();
  std::vector<int> expect(100);
  std::iota(expect.begin(), expect.end(), 0);
  EXPECT_EQ(order, expect);
}

TEST(Priority, ReleasedSuccessorRunsNextOnTheSameWorker) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::string> order;
  int x = 0;
  hytask::spawn([&order] { order.push_back("producer"); }, hytask::out(x));
  for (int i = 0; i < 5; ++i) hytask::spawn([&order] { order.push_back("other"); });
  hytask::spawn([&order] { order.push_back("consumer"); }, hytask::in(x));
  hytask::wait_all();
  ASSERT_EQ(order.size(), 7u);
  EXPECT_EQ(order[0], "producer");
  EXPECT_EQ(order[1], "consumer") << "the successor released by the task that just finished";
}

// A task resumed after a suspension starts before the unstarted tasks of its priority:
// finishing started tasks keeps few of them parked (a task per message would otherwise start
// every receive of a window before it finishes any). For key 0 and for a positive priority.
TEST(Priority, ResumedTasksGoBeforeUnstartedOnesOfTheirPriority) {
  for (int prio : {0, 3}) {
    hytask::runtime rt(hytask::config{.threads = 1});
    std::vector<std::string> order;
    hytask::event e;
    hytask::spawn({.priority = prio}, [&] {
      order.push_back("waiter");
      e.wait();
      order.push_back("waiter resumed");
    });
    hytask::spawn({.priority = prio}, [&] {
      order.push_back("setter");
      e.set();
    });
    for (int i = 0; i < 3; ++i)
      hytask::spawn({.priority = prio}, [&order] { order.push_back("other"); });
    hytask::wait_all();
    EXPECT_EQ(order, (std::vector<std::string>{"waiter", "setter", "waiter resumed", "other",
                                               "other", "other"}))
        << "priority " << prio;
  }
}

TEST(Priority, DeeperTasksFirstSoRecursionUnfoldsDepthFirst) {
  // A parent's children run before the parent's older siblings.
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::string> order;
  hytask::spawn([&order] {
    order.push_back("a");
    hytask::spawn([&order] { order.push_back("a.1"); });
    hytask::spawn([&order] { order.push_back("a.2"); });
    hytask::wait_all();
    order.push_back("a done");
  });
  hytask::spawn([&order] { order.push_back("b"); });
  hytask::wait_all();
  EXPECT_EQ(order, (std::vector<std::string>{"a", "a.1", "a.2", "a done", "b"}));
}

// No ready task of lower priority starts on a worker while one of higher priority waits
// there: the other workers are held in blockers until main has spawned everything, then every
// worker takes the highest task it can see (its own queue is empty; stealing takes the top).
class PriorityP : public ::testing::TestWithParam<unsigned> {};

TEST_P(PriorityP, NoWorkerStartsALowerPriorityWhileAHigherOneWaits) {
  const unsigned n = GetParam();
  hytask::runtime rt(hytask::config{.threads = n});
  for (unsigned seed : {7u, 8u}) {
    std::atomic<unsigned> blocked{0};
    std::atomic<bool> go{false};
    for (unsigned b = 1; b < n; ++b)
      hytask::spawn({.priority = INT_MAX}, [&] {
        blocked++;
        while (!go.load()) std::this_thread::yield();
      });
    // The other workers take them (bounded: a failure, not a hang, if they do not).
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (blocked.load() != n - 1 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    if (const unsigned took = blocked.load(); took != n - 1) {
      go = true;
      hytask::wait_all();
      FAIL() << "the other workers took " << took << " of " << n - 1 << " blockers in 10 s (seed "
             << seed << ")";
    }
    const std::vector<int> prio = shuffled_priorities(seed);
    std::mutex m;
    std::vector<start> order;
    for (int i = 0; i < static_cast<int>(prio.size()); ++i) {
      const int p = prio[static_cast<std::size_t>(i)];
      hytask::spawn({.priority = p}, [&m, &order, p, i] {
        std::lock_guard<std::mutex> lock(m);
        order.push_back({p, i, hytask::worker_index()});
      });
    }
    go = true;
    hytask::wait_all();
    ASSERT_EQ(order.size(), prio.size());
    for (unsigned w = 0; w < n; ++w) {
      int last = INT_MAX;
      for (const start& s : order)
        if (s.worker == static_cast<int>(w)) {
          ASSERT_LE(s.priority, last) << "worker " << w << " started priority " << s.priority
                                      << " after " << last << " (seed " << seed << ")";
          last = s.priority;
        }
    }
  }
}

TEST_P(PriorityP, RecursionKeepsFewTasksSuspended) {
  // fib unfolds depth-first: the fibers held by suspended parents stay near the depth of
  // the recursion per worker, not the width of the tree.
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  static std::size_t bound;
  bound = 64u * GetParam() + 64u;
  struct fib {
    static long run(int k, std::atomic<std::size_t>& peak) {
      if (k < 2) return k;
      // Past the bound the test has failed: stop unfolding (a breadth-first order would
      // otherwise take minutes to finish the tree).
      if (peak.load(std::memory_order_relaxed) >= bound) return 0;
      long a = 0, b = 0;
      hytask::spawn([&a, &peak, k] { a = run(k - 1, peak); });
      hytask::spawn([&b, &peak, k] { b = run(k - 2, peak); });
      std::size_t live = hytask::core::live_fibers(), seen = peak.load();
      while (live > seen && !peak.compare_exchange_weak(seen, live)) {
      }
      hytask::wait_all();
      return a + b;
    }
  };
  std::atomic<std::size_t> peak{0};
  const int k = hytask_test::sanitized() ? 16 : 22;
  long r = 0;
  hytask::spawn([&r, &peak, k] { r = fib::run(k, peak); });
  hytask::wait_all();
  EXPECT_EQ(r, hytask_test::sanitized() ? 987 : 17711) << "wrong only if the bound was passed";
  // Depth 22: a depth-first unfolding holds about one fiber per level per worker (plus the
  // pools); breadth-first would hold thousands (the tree has 57 313 calls).
  EXPECT_LT(peak.load(), bound) << "fibers alive at the peak";
}

INSTANTIATE_TEST_SUITE_P(Threads, PriorityP, ::testing::Values(2u, 4u));

// ---- the learned communication class (through the core's interface; the MPI tests check it
// end to end) -----------------------------------------------------------------------------

namespace {

// A task type that "communicates": its body reports itself to the scheduler, as the MPI
// layer does when a task posts an operation.
struct talker {
  std::vector<std::string>* order;
  void operator()() const {
    order->push_back("talker");
    auto* w = hytask::core::current_worker();
    hytask::core::scheduler::instance()->learn_comm(w->current_task);
  }
};

std::vector<std::string> round_of_talk(int computes) {
  std::vector<std::string> order;
  for (int i = 0; i < computes; ++i) hytask::spawn([&order] { order.push_back("compute"); });
  hytask::spawn(talker{&order});
  hytask::wait_all();
  return order;
}

}  // namespace

TEST(CommClass, ATypeThatCommunicatedStartsAheadOfOrdinaryTasks) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::string> first = round_of_talk(10);
  EXPECT_EQ(first.back(), "talker") << "first instance: spawn order";
  std::vector<std::string> second = round_of_talk(10);
  EXPECT_EQ(second.front(), "talker") << "learned: the communication class";
  EXPECT_EQ(hytask::core::scheduler::instance()->comm_types_learned(), 1u);
}

TEST(CommClass, StaysBelowHigherPriorities) {
  hytask::runtime rt(hytask::config{.threads = 1});
  round_of_talk(1);
  std::vector<std::string> order;
  hytask::spawn([&order] { order.push_back("compute"); });
  hytask::spawn({.priority = 1}, [&order] { order.push_back("urgent"); });
  hytask::spawn(talker{&order});
  hytask::wait_all();
  EXPECT_EQ(order, (std::vector<std::string>{"urgent", "talker", "compute"}));
}

TEST(CommClass, OffWithCommPriorityZero) {
  hytask::runtime rt(hytask::config{.threads = 1, .comm_priority = false});
  round_of_talk(3);
  std::vector<std::string> second = round_of_talk(10);
  EXPECT_EQ(second.back(), "talker");
  EXPECT_EQ(hytask::core::scheduler::instance()->comm_types_learned(), 0u);
}

TEST(CommClass, WhatACommunicatingTaskWaitsForIsRaisedToo) {
  // The producer of what a communicating task sends becomes ready while ordinary tasks wait,
  // and starts before them (seed 001: tasks with an edge leaving the process are raised).
  for (bool comm : {true, false}) {
    hytask::runtime rt(hytask::config{.threads = 1, .comm_priority = comm});
    round_of_talk(1);
    std::vector<std::string> order;
    hytask::event gate;
    int buf = 0;
    hytask::spawn([&order] { order.push_back("producer"); }, hytask::after(gate), hytask::out(buf));
    hytask::spawn(talker{&order}, hytask::in(buf));
    hytask::spawn([&order, &gate] {
      order.push_back("gate");
      gate.set();
    });
    for (int i = 0; i < 3; ++i) hytask::spawn([&order] { order.push_back("compute"); });
    hytask::wait_all();
    if (comm)
      EXPECT_EQ(order, (std::vector<std::string>{"gate", "producer", "talker", "compute", "compute",
                                                 "compute"}));
    else
      EXPECT_EQ(order, (std::vector<std::string>{"gate", "compute", "compute", "compute", "producer",
                                                 "talker"}));
  }
}
