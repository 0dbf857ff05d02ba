// Direct dependencies (hytask/core/task_handle.hpp): a task that names a sibling's handle in
// after() starts only once that sibling completed (its children included), failures and
// cancellations skip it, handles mix with memory dependencies, wait() waits for one task,
// and naming a task that is not a sibling is a usage_error.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"

using namespace std::chrono_literals;

class TaskHandle : public ::testing::TestWithParam<unsigned> {
 protected:
  hytask::config cfg() const { return hytask::config{.threads = GetParam()}; }
};

// The successor starts after the predecessor and its child have finished: each records the
// order it ran in; the predecessor's child sleeps so that a missing edge would show.
TEST_P(TaskHandle, SuccessorWaitsForThePredecessorAndItsChildren) {
  hytask::runtime rt(cfg());
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> clock{0};
    std::atomic<int> child_done_at{-1}, pred_done_at{-1}, succ_started_at{-1};
    hytask::task_handle h = hytask::spawn_handle([&] {
      hytask::spawn([&] {
        std::this_thread::sleep_for(200us);
        child_done_at = clock++;
      });
      pred_done_at = clock++;
    });
    hytask::spawn([&] { succ_started_at = clock++; }, hytask::after(h));
    hytask::wait_all();
    EXPECT_TRUE(h.done());
    EXPECT_GT(succ_started_at.load(), child_done_at.load()) << "round " << round;
    EXPECT_GT(succ_started_at.load(), pred_done_at.load()) << "round " << round;
  }
}

// A chain of 1000 tasks, each after the previous one's handle (no memory named): they run in
// order.
TEST_P(TaskHandle, AChainRunsInOrder) {
  hytask::runtime rt(cfg());
  std::vector<int> order;
  order.reserve(1000);
  hytask::task_handle prev = hytask::spawn_handle([&] { order.push_back(0); });
  for (int i = 1; i < 1000; ++i)
    prev = hytask::spawn_handle([&order, i] { order.push_back(i); }, hytask::after(prev));
  hytask::wait_all();
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

// Handles and memory dependencies in one spawn; a task after a failed one is skipped and
// wait_all rethrows the failure.
TEST_P(TaskHandle, MixesWithMemoryAndSkipsAfterAFailure) {
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<int> seen{-1};
  hytask::task_handle a = hytask::spawn_handle([&] { x = 7; }, hytask::out(x));
  hytask::task_handle b = hytask::spawn_handle([] { std::this_thread::sleep_for(1ms); });
  hytask::spawn([&] { seen = x; }, hytask::in(x), hytask::after(b), hytask::after(a));
  hytask::wait_all();
  EXPECT_EQ(seen.load(), 7);

  std::atomic<bool> ran{false};
  hytask::task_handle bad = hytask::spawn_handle([] { throw std::runtime_error("broken"); });
  hytask::spawn([&] { ran = true; }, hytask::after(bad));
  EXPECT_THROW(hytask::wait_all(), std::runtime_error);
  EXPECT_FALSE(ran.load()) << "a task after a failed one ran";
}

// wait() from the spawning task (and from main) returns once that task alone has completed,
// while an unrelated sibling is still running.
TEST_P(TaskHandle, WaitWaitsForOneTask) {
  hytask::runtime rt(cfg());
  std::atomic<bool> slow_done{false}, quick_done{false};
  std::atomic<bool> release{false};
  hytask::spawn([&] {  // unrelated, runs until released
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!release.load() && std::chrono::steady_clock::now() < end) hytask::this_task::yield();
    slow_done = true;
  });
  hytask::task_handle h = hytask::spawn_handle([&] { quick_done = true; });
  h.wait();
  EXPECT_TRUE(quick_done.load());
  EXPECT_FALSE(slow_done.load()) << "wait() waited for more than its task";
  release = true;
  hytask::wait_all();
  // From a task, for a task it spawned.
  std::atomic<bool> inner{false}, after_wait_saw{false};
  hytask::spawn([&] {
    hytask::task_handle k = hytask::spawn_handle([&] {
      std::this_thread::sleep_for(1ms);
      inner = true;
    });
    k.wait();
    after_wait_saw = inner.load();
  });
  hytask::wait_all();
  EXPECT_TRUE(after_wait_saw.load());
}

// Naming a task that is not a sibling, or an empty handle, is a usage_error naming the rule.
TEST_P(TaskHandle, OnlySiblings) {
  hytask::runtime rt(cfg());
  hytask::task_handle outer = hytask::spawn_handle([] {});
  std::atomic<bool> refused{false}, waited_refused{false};
  hytask::spawn([&] {
    try {
      hytask::spawn([] {}, hytask::after(outer));
    } catch (const hytask::usage_error& e) {
      refused = std::string(e.what()).find("names a sibling") != std::string::npos;
    }
    try {
      outer.wait();
    } catch (const hytask::usage_error& e) {
      waited_refused = std::string(e.what()).find("spawned the handle's task") != std::string::npos;
    }
  });
  hytask::wait_all();
  EXPECT_TRUE(refused.load());
  EXPECT_TRUE(waited_refused.load() || outer.done()) << "wait() from a non-parent was allowed";
  hytask::task_handle empty;
  EXPECT_THROW(hytask::spawn([] {}, hytask::after(empty)), hytask::usage_error);
  hytask::wait_all();
}

// A cancelled predecessor: the task after it is skipped; wait_all returns normally.
TEST_P(TaskHandle, AfterACancelledTaskIsSkipped) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  hytask::event go;
  std::atomic<bool> ran{false};
  hytask::task_handle h = hytask::spawn_handle({.group = &g}, [&] { go.wait(); });
  hytask::spawn([&] { ran = true; }, hytask::after(h));
  g.cancel();
  go.set();
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_FALSE(ran.load());
}

INSTANTIATE_TEST_SUITE_P(Workers, TaskHandle, ::testing::Values(1u, 2u, 4u));
