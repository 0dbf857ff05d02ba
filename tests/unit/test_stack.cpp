#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

namespace {

// Recursion the optimiser cannot turn into a loop.
[[gnu::noinline]] long burn(long depth) {
  volatile char frame[512];
  frame[0] = 1;
  frame[511] = 1;
  if (depth <= 0) return frame[0];
  return burn(depth - 1) + frame[511];
}

}  // namespace

TEST(Stack, DeepButBoundedRecursionFits) {
  // Sanitizers enlarge every frame several times over.
  const std::size_t stack = (hytask_test::sanitized() ? 16 : 1) * 1024 * 1024;
  hytask::runtime rt(hytask::config{.threads = 2, .stack_size = stack});
  long r = -1;
  hytask::spawn([&r] { r = burn(1000); });  // about 600 KiB of stack
  hytask::wait_all();
  EXPECT_EQ(r, 1001);
}

TEST(StackDeathTest, OverflowIsReportedAsStackOverflow) {
  if (hytask_test::sanitized()) GTEST_SKIP() << "sanitizers report overflows themselves";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        hytask::runtime rt(hytask::config{.threads = 1, .stack_size = 64 * 1024});
        hytask::spawn({.name = "runaway"}, [] { burn(1L << 40); });
        hytask::wait_all();
      },
      "stack overflow in task 'runaway'.*HYTASK_STACK_SIZE");
}

TEST(StackDeathTest, NoStackForASuspendingTaskIsFatalNotAnException) {
  // A task that suspends may have posted an MPI receive into its stack, or spawned children
  // that refer to it: if no fiber can be created for the worker to go on with, unwinding that
  // stack would let them write into memory that other tasks reuse (a silent wrong answer).
  // The runtime stops with a message that names the fixes instead. The fibers are made to
  // run out by a cap on the address space; sanitizers need a huge one of their own.
  if (hytask_test::sanitized()) GTEST_SKIP() << "sanitizers reserve address space beyond any cap";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        const std::size_t stack = std::size_t{256} << 20;
        hytask::runtime rt(hytask::config{.threads = 2, .max_tasks = 64, .stack_size = stack});
        rlimit cap{};
        const long vm_kib = hytask_test::status_kib("VmSize:");
        cap.rlim_cur = cap.rlim_max = static_cast<rlim_t>(vm_kib) * 1024 + 8 * stack;
        setrlimit(RLIMIT_AS, &cap);
        hytask::event e;
        std::atomic<int> waiting{0};
        for (int i = 0; i < 40; ++i)
          hytask::spawn([&] {
            waiting++;
            e.wait();
          });
        // Worker 1 runs them; each that suspends needs a new fiber. (Bounded: should the
        // runtime survive, the test fails by not dying, not by hanging.)
        for (int ms = 0; waiting.load() < 40 && ms < 10000; ++ms)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        e.set();
        hytask::wait_all();
      },
      "a task cannot suspend, no stack for a new fiber.*HYTASK_MAX_TASKS");
}
