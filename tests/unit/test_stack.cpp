#include <gtest/gtest.h>

#include <cstring>

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
