// The idle meter (src/core/idle_meter.hpp): whether the process left a core of its workers
// idle between two looks, from its CPU time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "platform/idle_meter.hpp"

namespace {

using namespace std::chrono_literals;

// A thread that keeps one core busy until the object goes.
struct spinner {
  std::atomic<bool> stop{false};
  std::thread t{[this] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  }};
  ~spinner() {
    stop.store(true);
    t.join();
  }
};

TEST(IdleMeter, TheFirstLookHasNoIntervalToJudge) {
  hytask::core::idle_meter m(1);
  EXPECT_FALSE(m.idle());
}

TEST(IdleMeter, SleepingWorkersAreIdle) {
  hytask::core::idle_meter m(1);
  (void)m.idle();
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(m.idle());
}

TEST(IdleMeter, ABusyWorkerIsNotIdle) {
  hytask::core::idle_meter m(1);
  spinner busy;
  (void)m.idle();
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(m.idle());
}

TEST(IdleMeter, OneBusyWorkerOfTwoLeavesACoreIdle) {
  hytask::core::idle_meter m(2);
  spinner busy;
  (void)m.idle();
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(m.idle());
}

TEST(IdleMeter, TheLookersOwnTimeCounts) {
  // A looker that spins itself (a progress thread polling back to back) takes the core a
  // woken worker needs: that is not idle.
  hytask::core::idle_meter m(1);
  (void)m.idle();
  const auto end = std::chrono::steady_clock::now() + 100ms;
  while (std::chrono::steady_clock::now() < end) {
  }
  EXPECT_FALSE(m.idle());
}

}  // namespace
