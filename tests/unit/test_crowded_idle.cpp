// An idle worker polling operations on a crowded core (src/core/idle.cpp): it must leave the
// core to a process of another session that computes there, by sleeping between polls,
// instead of yielding (a yield keeps the waiting session's share under the kernel's
// autogroups: measured, a computing rank ran at half speed beside a waiting one).
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>

#include "platform/cpu_wait.hpp"
#include "core/ext/progress_hooks.hpp"
#include "core/sched/scheduler.hpp"

namespace {

using namespace std::chrono_literals;

std::int64_t cpu_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// An operation that never completes: every poll finds it pending.
struct never_done {
  std::atomic<std::uint64_t> polls{0};
  static hytask::core::poll_result poll(void* self, unsigned, bool) {
    static_cast<never_done*>(self)->polls.fetch_add(1, std::memory_order_relaxed);
    return hytask::core::poll_result::pending;
  }
  static bool has_pending(void*, unsigned) { return true; }
};

struct wait_until {
  std::chrono::steady_clock::time_point end;
  static bool done(void* self, bool) {
    return std::chrono::steady_clock::now() >= static_cast<wait_until*>(self)->end;
  }
};

TEST(CrowdedIdle, AWaitingWorkerLeavesACrowdedCoreToAnotherSession) {
  if (hytask::core::thread_run_delay_ns() < 0) GTEST_SKIP() << "no /proc/thread-self/schedstat";
  cpu_set_t mine, one;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) ++cpu;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // this thread, and those it creates

  // Another session computing on the same core, as a rank of another job would.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setsid();
    const auto end = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < end) {
    }
    _exit(0);
  }

  double share = 1;
  std::uint64_t polls = 0;
  {
    never_done op;
    hytask::core::progress_hooks hooks;
    hooks.poll = &never_done::poll;
    hooks.has_pending = &never_done::has_pending;
    hooks.ctx = &op;
    hytask::core::core_settings cs;
    cs.threads = 1;
    cs.max_tasks = 1024;
    cs.stack_size = 256 * 1024;
    cs.spin_us = 50;
    hytask::core::scheduler sched(cs, hooks);
    // Main waits inside hytask, with the operation pending, for 1.2 s; the last second is
    // measured (the first 0.2 s let the child start and the worker judge its core).
    wait_until warmup{std::chrono::steady_clock::now() + 200ms};
    sched.help_until(&sched.at(0), &wait_until::done, &warmup);
    const std::int64_t wall0 = cpu_ns(CLOCK_MONOTONIC), cpu0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    const std::uint64_t polls0 = op.polls.load();
    wait_until measured{std::chrono::steady_clock::now() + 1s};
    sched.help_until(&sched.at(0), &wait_until::done, &measured);
    share = static_cast<double>(cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) /
            static_cast<double>(cpu_ns(CLOCK_MONOTONIC) - wall0);
    polls = op.polls.load() - polls0;
    sched.shutdown();
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(sched_setaffinity(0, sizeof mine, &mine), 0);

  std::printf("crowded idle: the waiting worker took %.1f %% of the core, %llu polls in 1 s\n",
              share * 100, static_cast<unsigned long long>(polls));
  // Yielding, the waiting process kept a third to a half of the core; sleeping between
  // polls (20 us to 1 ms), a few per cent.
  EXPECT_LT(share, 0.15) << "the waiting worker took " << share * 100 << " % of the crowded core";
  EXPECT_GT(polls, 100u) << "it must still poll the operation (about every millisecond)";
}

}  // namespace
