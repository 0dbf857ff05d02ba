// The watchdog's judgement (src/comm/stall_watch.hpp) and what it reads
// (src/core/cpu_wait.hpp): a rank whose threads could not run is not hung.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "comm/stall_watch.hpp"
#include "platform/cpu_wait.hpp"

namespace {

using hytask::mpi::detail::stall_watch;
using verdict = stall_watch::verdict;
constexpr std::int64_t s = 1'000'000'000;

TEST(StallWatch, ProgressIsFine) {
  stall_watch w(10 * s, 0);
  EXPECT_EQ(w.look(true, 20 * s, 0), verdict::fine);
}

TEST(StallWatch, ARankThatRanPastTheLimitIsHung) {
  stall_watch w(10 * s, 0);
  EXPECT_EQ(w.look(false, 1 * s, 0), verdict::stalled);
  EXPECT_EQ(w.look(false, 10 * s, 0), verdict::stalled);
  EXPECT_EQ(w.look(false, 10 * s + 1, 0), verdict::hung);
  EXPECT_EQ(w.unrun_ns(), 0);
  EXPECT_EQ(w.window_ns(), 10 * s + 1);
}

TEST(StallWatch, ARankThatDidNotRunRestartsTheWindow) {
  stall_watch w(10 * s, 0);
  EXPECT_EQ(w.look(false, 1 * s, 0), verdict::stalled);
  // 3 s of the 11 s window not run: a quarter or more.
  EXPECT_EQ(w.look(false, 11 * s, 3 * s), verdict::starved);
  EXPECT_EQ(w.unrun_ns(), 3 * s);
  EXPECT_EQ(w.extensions(), 1);
  // The new window starts at the verdict: not judged again before the limit.
  EXPECT_EQ(w.look(false, 20 * s, 3 * s), verdict::stalled);
  // It ran the whole new window: hung.
  EXPECT_EQ(w.look(false, 21 * s + 1, 3 * s), verdict::hung);
  EXPECT_EQ(w.unrun_ns(), 0);
  EXPECT_EQ(w.starved_ns(), 11 * s);
}

TEST(StallWatch, ALittleTimeNotRunIsStillAHang) {
  stall_watch w(10 * s, 0);
  EXPECT_EQ(w.look(false, 1 * s, 0), verdict::stalled);
  EXPECT_EQ(w.look(false, 11 * s, 2 * s), verdict::hung);  // under a quarter of 11 s
}

TEST(StallWatch, OnlyTheTimeSinceTheStallBeganCounts) {
  // The rank did not run for 5 s while it progressed: that excuses no later stall.
  stall_watch w(10 * s, 0);
  EXPECT_EQ(w.look(true, 1 * s, 5 * s), verdict::fine);
  EXPECT_EQ(w.look(false, 2 * s, 5 * s), verdict::stalled);
  EXPECT_EQ(w.look(false, 12 * s, 5 * s), verdict::hung);
}

TEST(StallWatch, TheLatenessSeenByTheFirstLookWithoutProgressCounts) {
  // A process stopped right after a look with progress: the next look, 6 s later, is the
  // first to see the stall and the first to see the lateness.
  stall_watch w(2 * s, 0);
  EXPECT_EQ(w.look(true, 1 * s, 0), verdict::fine);
  EXPECT_EQ(w.look(false, 7 * s, 5 * s + s / 2), verdict::starved);
  EXPECT_EQ(w.unrun_ns(), 5 * s + s / 2);
}

TEST(StallWatch, AStarvedHangIsStillReportedAfterTheExtensions) {
  stall_watch w(10 * s, 0, 2);
  std::int64_t unrun = 0, now = 0;
  EXPECT_EQ(w.look(false, now += s, unrun), verdict::stalled);
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(w.look(false, now += 11 * s, unrun += 10 * s), verdict::starved);
  EXPECT_EQ(w.look(false, now += 11 * s, unrun += 10 * s), verdict::hung);
  EXPECT_EQ(w.starved_ns(), 23 * s);
}

TEST(StallWatch, ProgressEndsTheExtensions) {
  stall_watch w(10 * s, 0, 1);
  EXPECT_EQ(w.look(false, 1 * s, 0), verdict::stalled);
  EXPECT_EQ(w.look(false, 11 * s, 11 * s), verdict::starved);
  EXPECT_EQ(w.look(true, 12 * s, 11 * s), verdict::fine);
  EXPECT_EQ(w.look(false, 13 * s, 11 * s), verdict::stalled);
  EXPECT_EQ(w.look(false, 23 * s, 22 * s), verdict::starved);  // a fresh allowance
}

bool run_delay_known() { return hytask::core::process_run_delay_ns() >= 0; }

TEST(RunDelay, SleepingAccruesNone) {
  if (!run_delay_known()) GTEST_SKIP() << "no /proc/self/task/*/schedstat on this kernel";
  const std::int64_t before = hytask::core::process_run_delay_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::int64_t after = hytask::core::process_run_delay_ns();
  EXPECT_LT(after - before, 50'000'000) << "a sleeping process waited for a CPU";
}

TEST(RunDelay, ThreadsSharingOneCpuWaitForIt) {
  if (!run_delay_known()) GTEST_SKIP() << "no /proc/self/task/*/schedstat on this kernel";
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) ++cpu;
  ASSERT_LT(cpu, CPU_SETSIZE);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // Three threads spin for 300 ms on one CPU: together they stand in its run queue for about
  // 600 ms (each runs a third of the time).
  std::atomic<bool> stop{false};
  std::atomic<int> pinned{0};
  const std::int64_t before = hytask::core::process_run_delay_ns();
  std::vector<std::thread> spinners;
  for (int k = 0; k < 3; ++k)
    spinners.emplace_back([&] {
      if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) pinned.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::int64_t during = hytask::core::process_run_delay_ns();
  stop.store(true);
  for (auto& t : spinners) t.join();
  ASSERT_EQ(pinned.load(), 3);
  EXPECT_GT(during - before, 150'000'000) << "three threads on one CPU for 300 ms waited "
                                          << (during - before) / 1'000'000 << " ms for it";
}

// The first line's avg10, read here without sscanf's pattern; -1 if there is no such file.
double pressure_avg10_from_proc() {
  std::ifstream f("/proc/pressure/cpu");
  std::string line;
  if (!f || !std::getline(f, line) || line.rfind("some ", 0) != 0) return -1;
  const std::string key = "avg10=";
  const std::size_t at = line.find(key);
  if (at == std::string::npos) return -1;
  return std::stod(line.substr(at + key.size()));
}

TEST(CpuPressure, IsTheKernelsTenSecondShare) {
  const double before = pressure_avg10_from_proc();
  const double p = hytask::core::node_cpu_pressure_pct();
  const double after = pressure_avg10_from_proc();
  if (before < 0) {
    EXPECT_EQ(p, -1.0) << "no /proc/pressure/cpu here, yet a pressure was reported";
    GTEST_SKIP() << "no /proc/pressure/cpu on this kernel";
  }
  ASSERT_GE(after, 0.0);
  EXPECT_GE(p, 0.0);
  EXPECT_LE(p, 100.0);
  // The kernel updates avg10 every 2 s: the three reads agree but for an update between them.
  EXPECT_GE(p, std::min(before, after) - 0.5) << "read " << before << " and " << after;
  EXPECT_LE(p, std::max(before, after) + 0.5) << "read " << before << " and " << after;
}

}  // namespace
