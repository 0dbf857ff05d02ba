// What a failing task does to the rest of the graph: its successors (by data, and theirs in
// turn) are skipped; independent tasks run; wait_all rethrows the first exception and says
// on stderr how many tasks failed when there was more than one.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "hytask/hytask.hpp"

class Failures : public ::testing::TestWithParam<unsigned> {
 protected:
  hytask::config cfg() const { return hytask::config{.threads = GetParam()}; }
};

TEST_P(Failures, SuccessorsOfAFailedTaskAreSkippedTransitively) {
  hytask::runtime rt(cfg());
  int x = 0, y = 0;
  std::atomic<int> ran_b{0}, ran_c{0}, ran_free{0};
  hytask::spawn([] { throw std::runtime_error("a failed"); }, hytask::out(x));
  hytask::spawn([&] { ran_b++; y = x; }, hytask::in(x), hytask::out(y));   // reads a's x
  hytask::spawn([&] { ran_c++; }, hytask::in(y));                          // reads b's y
  hytask::spawn([&] { ran_free++; });                                      // independent
  ::testing::internal::CaptureStderr();
  try {
    hytask::wait_all();
    ADD_FAILURE() << "wait_all did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a failed");
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran_b.load(), 0) << "a successor of a task that threw ran";
  EXPECT_EQ(ran_c.load(), 0) << "a successor of a skipped task ran";
  EXPECT_EQ(ran_free.load(), 1);
  EXPECT_NE(err.find("3 tasks failed (1 threw, 2 skipped"), std::string::npos) << err;
  // The failures were reported once: the next round runs normally.
  hytask::spawn([&] { x = 1; }, hytask::out(x));
  hytask::spawn([&] { y = x + 1; }, hytask::in(x), hytask::out(y));
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(y, 2);
}

TEST_P(Failures, ATaskSpawnedAfterItsPredecessorFailedAndCompletedIsSkipped) {
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<bool> threw{false};
  std::atomic<int> ran{0};
  hytask::spawn(
      [&threw] {
        threw = true;
        throw std::runtime_error("early");
      },
      hytask::out(x));
  // Main runs it, or sees a worker did (bounded: a failure, not a hang, if neither happens).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!threw.load() && std::chrono::steady_clock::now() < until) hytask::this_task::yield();
  if (!threw.load()) {
    EXPECT_THROW(hytask::wait_all(), std::runtime_error);  // collects it before the runtime ends
    FAIL() << "the failing task did not run while main yielded for 10 s";
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // ... and complete it
  hytask::spawn([&] { ran++; }, hytask::in(x));   // its predecessor is already gone
  hytask::spawn([&] { ran++; }, hytask::out(x));  // after the reader: skipped in turn
  EXPECT_THROW(hytask::wait_all(), std::runtime_error);
  EXPECT_EQ(ran.load(), 0);
}

TEST_P(Failures, TwoFailuresRethrowOneAndCountBoth) {
  hytask::runtime rt(cfg());
  hytask::spawn([] { throw std::runtime_error("first"); });
  hytask::spawn([] { throw std::runtime_error("second"); });
  ::testing::internal::CaptureStderr();
  std::string what;
  try {
    hytask::wait_all();
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(what == "first" || what == "second") << "rethrown: '" << what << "'";
  EXPECT_NE(err.find("hytask: warning: wait_all: 2 tasks failed (2 threw, 0 skipped"),
            std::string::npos)
      << err;
}

TEST_P(Failures, OneFailureIsNotAnnounced) {
  hytask::runtime rt(cfg());
  hytask::spawn([] { throw std::runtime_error("only"); });
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(hytask::wait_all(), std::runtime_error);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_P(Failures, AFailedChildFailsItsParentsSuccessors) {
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<int> ran{0};
  // The parent does not wait: its child's exception makes the parent fail when it completes.
  hytask::spawn([] { hytask::spawn([] { throw std::logic_error("child"); }); }, hytask::out(x));
  hytask::spawn([&] { ran++; }, hytask::in(x));
  EXPECT_THROW(hytask::wait_all(), std::logic_error);
  EXPECT_EQ(ran.load(), 0);
}

TEST_P(Failures, AFailureCaughtInsideTheTaskDoesNotFailItsSuccessors) {
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<int> ran{0};
  hytask::spawn(
      [&x] {
        hytask::spawn([] { throw std::logic_error("child"); });
        try {
          hytask::wait_all();
        } catch (const std::logic_error&) {
          x = 7;  // handled: the task's output is valid
        }
      },
      hytask::out(x));
  hytask::spawn([&] { ran += x; }, hytask::in(x));
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(ran.load(), 7);
}

INSTANTIATE_TEST_SUITE_P(Threads, Failures, ::testing::Values(1u, 2u, 4u));
