#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

TEST(Suspend, SuspendedTaskDoesNotBlockItsWorker) {
  // One worker: the waiting task must step aside for the task that sets the event.
  hytask_test::hang_guard guard(20s, "Suspend.SuspendedTaskDoesNotBlockItsWorker");
  hytask::runtime rt(hytask::config{.threads = 1});
  hytask::event e;
  std::vector<int> order;
  hytask::spawn([&] {
    order.push_back(1);
    e.wait();
    order.push_back(3);
  });
  hytask::spawn([&] {
    order.push_back(2);
    e.set();
  });
  hytask::wait_all();
  // Ordinary tasks start in spawn order on one worker (docs/design/core.md, "Ready order"): the waiter
  // starts first and suspends, the setter runs, then the waiter resumes.
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(Suspend, WaitingParentLetsChildrenRunOnTheSameWorker) {
  hytask_test::hang_guard guard(20s, "Suspend.WaitingParentLetsChildrenRunOnTheSameWorker");
  hytask::runtime rt(hytask::config{.threads = 1});
  std::atomic<int> sum{0};
  hytask::spawn([&sum] {
    for (int i = 0; i < 100; ++i) hytask::spawn([&sum] { sum++; });
    hytask::wait_all();
    EXPECT_EQ(sum.load(), 100);
    sum += 1000;
  });
  hytask::wait_all();
  EXPECT_EQ(sum.load(), 1100);
}

class SuspendP : public ::testing::TestWithParam<unsigned> {};

TEST_P(SuspendP, YieldLetsOthersRun) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::atomic<bool> flag{false}, got{false};
  std::atomic<long> yields{0};
  hytask::spawn([&] {
    // Bounded: a yield that lets nothing else run fails here instead of spinning forever.
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!flag.load() && std::chrono::steady_clock::now() < end) {
      hytask::this_task::yield();
      yields++;
    }
    got = flag.load();
  });
  hytask::spawn([&] { flag = true; });
  hytask::wait_all();
  EXPECT_TRUE(got.load()) << "the other task did not run while this one yielded (" << yields.load()
                          << " yields)";
  // One worker: the yielder starts first (spawn order), so the setter ran in one of its yields.
  if (GetParam() == 1) {
    EXPECT_GE(yields.load(), 1);
  }
}

TEST_P(SuspendP, ManyTasksWaitOnOneEvent) {
  hytask_test::hang_guard guard(30s, "SuspendP.ManyTasksWaitOnOneEvent");
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  hytask::event e;
  std::atomic<int> woke{0}, early{0};
  const int n = 500;  // more than the fiber pool keeps: stacks are created on demand
  for (int i = 0; i < n; ++i)
    hytask::spawn([&] {
      e.wait();
      if (e.is_set()) woke++;
      else early++;
    });
  hytask::spawn([&] {
    std::this_thread::sleep_for(5ms);
    e.set();
  });
  hytask::wait_all();
  EXPECT_EQ(early.load(), 0) << "wait() returned before the event was set";
  EXPECT_EQ(woke.load(), n);
}

TEST_P(SuspendP, EventSetFromForeignThread) {
  hytask_test::hang_guard guard(20s, "SuspendP.EventSetFromForeignThread");
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  hytask::event e;
  std::atomic<int> waiter_saw{-1}, after_saw{-1};  // e.is_set() where each task went on
  hytask::spawn([&] {
    e.wait();
    waiter_saw = e.is_set();
  });
  hytask::spawn([&] { after_saw = e.is_set(); }, hytask::after(e));
  std::thread setter([&] {
    std::this_thread::sleep_for(20ms);
    e.set();
  });
  hytask::wait_all();
  setter.join();
  EXPECT_EQ(waiter_saw.load(), 1) << "-1: it never resumed; 0: it resumed before the set";
  EXPECT_EQ(after_saw.load(), 1) << "-1: it never ran; 0: it ran before the set";
}

TEST_P(SuspendP, MainWaitsOnEventWhileRunningTasks) {
  hytask_test::hang_guard guard(20s, "SuspendP.MainWaitsOnEventWhileRunningTasks");
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  hytask::event e;
  hytask::spawn([&e] {
    std::this_thread::sleep_for(2ms);
    e.set();
  });
  e.wait();  // main runs the task itself when it is the only worker
  EXPECT_TRUE(e.is_set());
  hytask::wait_all();
}

TEST_P(SuspendP, TasksMigrateAcrossSuspensions) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::atomic<long> total{0};
  for (int t = 0; t < 64; ++t)
    hytask::spawn([&total] {
      long local = 0;
      for (int k = 0; k < 200; ++k) {
        local += k;
        hytask::this_task::yield();
      }
      total += local;
    });
  hytask::wait_all();
  EXPECT_EQ(total.load(), 64L * (199 * 200 / 2));
}

TEST_P(SuspendP, YieldFromMainIsHarmless) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  std::atomic<int> ran{0};
  hytask::spawn([&ran] { ran++; });
  hytask::this_task::yield();
  hytask::this_task::yield();
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, SuspendP, ::testing::Values(1u, 2u, 4u));
