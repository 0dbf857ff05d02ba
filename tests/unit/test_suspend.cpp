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
  // LIFO on the owner runs the second task first; either way both must finish and the
  // waiter must resume after the setter.
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order.back(), 3);
}

TEST(Suspend, WaitingParentLetsChildrenRunOnTheSameWorker) {
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
  std::atomic<bool> flag{false};
  std::atomic<long> yields{0};
  hytask::spawn([&] {
    while (!flag.load()) {
      hytask::this_task::yield();
      yields++;
    }
  });
  hytask::spawn([&] { flag = true; });
  hytask::wait_all();
  EXPECT_TRUE(flag.load());
}

TEST_P(SuspendP, ManyTasksWaitOnOneEvent) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  hytask::event e;
  std::atomic<int> woke{0};
  const int n = 500;  // more than the fiber pool keeps: stacks are created on demand
  for (int i = 0; i < n; ++i)
    hytask::spawn([&] {
      e.wait();
      woke++;
    });
  hytask::spawn([&] {
    std::this_thread::sleep_for(5ms);
    e.set();
  });
  hytask::wait_all();
  EXPECT_EQ(woke.load(), n);
}

TEST_P(SuspendP, EventSetFromForeignThread) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  hytask::event e;
  std::atomic<bool> after{false};
  hytask::spawn([&] {
    e.wait();
    after = true;
  });
  hytask::spawn([] {}, hytask::after(e));
  std::thread setter([&] {
    std::this_thread::sleep_for(20ms);
    e.set();
  });
  hytask::wait_all();
  setter.join();
  EXPECT_TRUE(after.load());
}

TEST_P(SuspendP, MainWaitsOnEventWhileRunningTasks) {
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
