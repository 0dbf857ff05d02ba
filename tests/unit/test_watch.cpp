// Completion watches (src/core/watch.hpp): the hook the global dependencies use to learn
// that a task completed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/ext/watch.hpp"
#include "hytask/hytask.hpp"
#include "test_util.hpp"

namespace {

struct watch_log {
  std::atomic<int> calls{0};
  std::atomic<int> children_done{0};
  std::atomic<int> children_seen{-1};  // children done when the hook ran
};

// Spawns body as a child of the caller, watched.
template <class F>
void spawn_watched(watch_log& log, F&& body) {
  hytask::detail::task* t = hytask::detail::new_task();
  hytask::detail::emplace_callable(t, std::forward<F>(body));
  hytask::core::watch_completion(
      t,
      [](hytask::detail::task* self) {
        auto* l = static_cast<watch_log*>(hytask::core::watch_arg(self));
        l->children_seen = l->children_done.load();
        // Slow, so that a parent told before the hook would see it unfinished.
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        l->calls.fetch_add(1);
      },
      &log);
  hytask::detail::submit(t);
}

}  // namespace

class Watch : public ::testing::TestWithParam<unsigned> {};

TEST_P(Watch, RunsOnceAfterTheChildrenAndBeforeTheParentsWaitReturns) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  const int rounds = static_cast<int>(hytask_test::scaled(1000));
  for (int i = 0; i < rounds; ++i) {
    watch_log log;
    spawn_watched(log, [&log] {
      for (int c = 0; c < 3; ++c)
        hytask::spawn([&log] {
          std::this_thread::yield();
          log.children_done.fetch_add(1);
        });
      // No wait_all: the task completes when its children have.
    });
    hytask::wait_all();
    ASSERT_EQ(log.calls.load(), 1) << "round " << i;
    ASSERT_EQ(log.children_seen.load(), 3) << "the hook ran before the children completed";
  }
}

TEST_P(Watch, RunsForATaskWhoseBodyThrew) {
  hytask::runtime rt(hytask::config{.threads = GetParam()});
  watch_log log;
  spawn_watched(log, [] { throw std::runtime_error("boom"); });
  EXPECT_THROW(hytask::wait_all(), std::runtime_error);
  EXPECT_EQ(log.calls.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Threads, Watch, ::testing::Values(1u, 2u, 4u));
