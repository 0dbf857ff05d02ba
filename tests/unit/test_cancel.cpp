// Local cancellation (hytask::task_group): tasks not started are skipped, started ones see
// this_task::cancelled(), successors of cancelled tasks are skipped, wait_all returns
// normally or rethrows the cause, and the runtime's counts stay right.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

// Outside the anonymous namespace: the tests derive from it.
class Cancel : public ::testing::TestWithParam<unsigned> {
 protected:
  hytask::config cfg() const { return hytask::config{.threads = GetParam()}; }
};

TEST_P(Cancel, NothingIsCancelledByDefault) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  std::atomic<int> seen{0}, ran{0};
  for (int i = 0; i < 100; ++i)
    hytask::spawn({.group = &g}, [&] {
      ran++;
      if (hytask::this_task::cancelled()) seen++;
    });
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(seen.load(), 0);
  EXPECT_FALSE(g.cancelled());
  EXPECT_FALSE(hytask::this_task::cancelled());
}

// Cancelled before they could start (they wait for a gate): none runs; others do.
TEST_P(Cancel, TasksThatHaveNotStartedAreSkipped) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  int x = 0;
  hytask::event go;
  std::atomic<int> ran{0}, free_ran{0};
  hytask::spawn([&] { go.wait(); x = 1; }, hytask::out(x));  // the gate, not in the group
  for (int i = 0; i < 50; ++i)
    hytask::spawn({.group = &g}, [&] { ran++; }, hytask::in(x));
  hytask::spawn([&] { free_ran++; }, hytask::in(x));  // not in the group: runs
  g.cancel();
  EXPECT_TRUE(g.cancelled());
  go.set();
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(ran.load(), 0) << "a task of the cancelled group ran";
  EXPECT_EQ(free_ran.load(), 1);
  // Spawned into the cancelled group afterwards: skipped at once.
  hytask::spawn({.group = &g}, [&] { ran++; });
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 0);
}

// Running tasks see cancelled() and return early; the canceller is one of them.
TEST_P(Cancel, StartedTasksSeeTheCancellation) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  constexpr int parts = 6;
  std::atomic<int> finished_all{0}, saw{0}, started{0};
  for (int p = 0; p < parts; ++p)
    hytask::spawn({.group = &g}, [&, p] {
      ++started;
      // Work until cancelled (or a deadline); the first part cancels once all have started.
      // A cancellation seen in yield (a cancellation point) counts as seen too.
      const auto end = std::chrono::steady_clock::now() + 10s;
      try {
        while (std::chrono::steady_clock::now() < end) {
          if (hytask::this_task::cancelled()) {
            saw++;
            return;
          }
          if (p == 0 && started.load() == parts) g.cancel();
          hytask::this_task::yield();  // a scheduling point: the others get a turn
        }
      } catch (const hytask::task_cancelled&) {
        saw++;
        throw;
      }
      finished_all++;
    });
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(started.load(), parts);
  EXPECT_EQ(finished_all.load(), 0) << "a task did not see the cancellation";
  EXPECT_EQ(saw.load(), parts);
  EXPECT_FALSE(hytask::this_task::cancelled()) << "main is not in the group";
}

// spawn is a cancellation point: a task of a cancelled group that spawns gets
// task_cancelled there (its body ends; the child is never made), which is no failure.
TEST_P(Cancel, SpawnIsACancellationPoint) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  std::atomic<int> child_ran{0}, after_spawn{0}, thrown{0};
  hytask::spawn({.group = &g}, [&] {
    g.cancel();
    try {
      hytask::spawn([&] { child_ran++; });
    } catch (const hytask::task_cancelled& e) {
      thrown++;
      EXPECT_NE(std::string(e.what()).find("spawn in a cancelled task"), std::string::npos) << e.what();
      throw;
    }
    after_spawn++;
  });
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(thrown.load(), 1);
  EXPECT_EQ(after_spawn.load(), 0) << "the body went on past spawn in a cancelled task";
  EXPECT_EQ(child_ran.load(), 0);
  // Main is not a task: it spawns as before, and a task outside the group too.
  hytask::spawn([&] { hytask::spawn([&] { child_ran++; }); });
  hytask::wait_all();
  EXPECT_EQ(child_ran.load(), 1);
}

// this_task::yield is a cancellation point: a task that only yields (never asks cancelled())
// ends with task_cancelled once its group is cancelled, long before its loop would.
TEST_P(Cancel, YieldIsACancellationPoint) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  constexpr long rounds = 1'000'000;
  std::atomic<long> yields{0};
  std::atomic<bool> ended_by_cancel{false}, looping{false};
  hytask::spawn({.group = &g}, [&] {
    looping = true;
    try {
      for (long i = 0; i < rounds; ++i) {
        hytask::this_task::yield();
        yields++;
      }
    } catch (const hytask::task_cancelled&) {
      ended_by_cancel = true;
      throw;
    }
  });
  hytask::spawn([&] {  // not in the group
    hytask_test::yield_until(looping, 10s);
    g.cancel();
  });
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_TRUE(ended_by_cancel.load()) << "the yielding task ran all " << yields.load() << " rounds";
  EXPECT_LT(yields.load(), rounds);
}

// Cancelling after the tasks are done changes nothing.
TEST_P(Cancel, CancellingAfterTheTasksCompletedChangesNothing) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  std::vector<int> out(16, 0);
  for (int i = 0; i < 16; ++i) hytask::spawn({.group = &g}, [&out, i] { out[static_cast<std::size_t>(i)] = i; });
  hytask::wait_all();
  g.cancel();
  hytask::wait_all();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[static_cast<std::size_t>(i)], i);
  // Other tasks are not affected.
  std::atomic<int> ran{0};
  for (int i = 0; i < 10; ++i) hytask::spawn([&] { ran++; });
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 10);
}

// Successors of a cancelled task are skipped whatever their group, transitively, and so are
// tasks spawned later on its memory (until wait_all); other tasks run.
TEST_P(Cancel, SuccessorsOfCancelledTasksAreSkipped) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  int x = 0, y = 0, z = 0;
  hytask::event go;
  std::atomic<int> ran_b{0}, ran_c{0}, ran_late{0}, ran_z{0};
  hytask::spawn([&] { go.wait(); }, hytask::out(z));  // keeps a worker's queue busy
  hytask::spawn({.group = &g}, [&] { go.wait(); x = 1; }, hytask::out(x));
  hytask::spawn([&] { ran_b++; y = x; }, hytask::in(x), hytask::out(y));  // not in the group
  hytask::spawn([&] { ran_c++; }, hytask::in(y));
  hytask::spawn([&] { ran_z++; }, hytask::in(z));
  g.cancel();
  hytask::spawn([&] { ran_late++; }, hytask::inout(x));  // after a cancelled writer: skipped
  go.set();
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(ran_b.load(), 0);
  EXPECT_EQ(ran_c.load(), 0);
  EXPECT_EQ(ran_late.load(), 0);
  EXPECT_EQ(ran_z.load(), 1);
  // wait_all forgot the cancelled tasks: x is usable again.
  hytask::spawn([&] { x = 5; }, hytask::out(x));
  hytask::spawn([&] { y = x + 1; }, hytask::in(x), hytask::out(y));
  hytask::wait_all();
  EXPECT_EQ(y, 6);
}

// A task that had started when its group was cancelled, and that does not look, counts as
// cancelled when it completes: its successors do not run.
TEST_P(Cancel, ATaskCompletingAfterTheCancellationCountsAsCancelled) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  int x = 0;
  hytask::event started, go;
  std::atomic<int> ran{0};
  hytask::spawn({.group = &g}, [&] {
    started.set();
    go.wait();
    x = 1;  // finishes its work, without looking
  }, hytask::out(x));
  hytask::spawn([&] { ran++; }, hytask::in(x));
  started.wait();
  g.cancel();
  go.set();
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 0);
}

// Children (and their children) of a group's tasks are cancelled with it, spawned before or
// after the cancellation; a nested group inside is cancelled by the outer one. The children
// and the nested group's tasks have all started when the group is cancelled: each must see it.
TEST_P(Cancel, DescendantsAreCancelledWithTheGroup) {
  hytask::runtime rt(cfg());
  hytask::task_group outer;
  hytask::event go, spawned, all_started;
  std::atomic<int> grandchildren_ran{0}, late_ran{0}, started{0}, saw_in_child{0}, saw_in_inner{0};
  auto arrive = [&] {
    if (started.fetch_add(1) + 1 == 8) all_started.set();
  };
  hytask::spawn({.group = &outer}, [&] {
    hytask::task_group inner;
    for (int i = 0; i < 4; ++i)
      hytask::spawn([&] {
        arrive();
        go.wait();
        if (hytask::this_task::cancelled()) saw_in_child++;
        hytask::spawn([&] { grandchildren_ran++; });  // spawned after the cancellation
      });
    for (int i = 0; i < 4; ++i)
      hytask::spawn({.group = &inner}, [&] {
        arrive();
        go.wait();
        if (hytask::this_task::cancelled()) saw_in_inner++;
      });
    all_started.wait();
    spawned.set();
    go.wait();
    hytask::spawn([&] { late_ran++; });
    hytask::wait_all();
  });
  spawned.wait();
  outer.cancel();
  go.set();
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(started.load(), 8);
  EXPECT_EQ(grandchildren_ran.load(), 0);
  EXPECT_EQ(late_ran.load(), 0);
  EXPECT_EQ(saw_in_child.load(), 4) << "a child did not see its parent's group cancelled";
  EXPECT_EQ(saw_in_inner.load(), 4)
      << "a task of the nested group did not see the outer group's cancellation";
}

// A task of the group that throws cancels the group; wait_all rethrows its exception.
TEST_P(Cancel, AnExceptionCancelsTheGroupAndIsRethrown) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  int x = 0;
  std::atomic<int> ran{0}, saw{0};
  std::atomic<bool> gate_saw{false};
  // The gate (not in the group) lets its successors go only once the group is cancelled
  // (or after 10 s): the exception's cancellation must skip them.
  hytask::spawn([&] {
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (!g.cancelled() && std::chrono::steady_clock::now() < end) hytask::this_task::yield();
    gate_saw = g.cancelled();
  }, hytask::out(x));
  for (int i = 0; i < 20; ++i) hytask::spawn({.group = &g}, [&] { ran++; }, hytask::in(x));
  std::atomic<bool> looping{false};
  hytask::spawn({.group = &g}, [&] {
    looping = true;
    const auto end = std::chrono::steady_clock::now() + 10s;
    try {
      while (!hytask::this_task::cancelled() && std::chrono::steady_clock::now() < end)
        hytask::this_task::yield();
    } catch (const hytask::task_cancelled&) {  // yield is a cancellation point
      saw++;
      throw;
    }
    if (hytask::this_task::cancelled()) saw++;
  });
  hytask::spawn({.group = &g}, [&] {
    hytask_test::yield_until(looping, 10s);  // the other task runs: it must see the cancellation
    throw std::runtime_error("search failed");
  });
  try {
    hytask::wait_all();
    ADD_FAILURE() << "wait_all did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "search failed");
  }
  EXPECT_TRUE(g.cancelled());
  EXPECT_TRUE(gate_saw.load()) << "the group was not cancelled while its tasks ran";
  EXPECT_EQ(saw.load(), 1);
  EXPECT_EQ(ran.load(), 0) << "tasks of the group that became ready after the exception ran";
  // Reported once: the next round is clean.
  hytask::spawn([&] { ran = 100; });
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(ran.load(), 100);
}

// cancel(cause): wait_all rethrows the cause; cancel(): returns normally.
TEST_P(Cancel, WaitAllRethrowsTheCause) {
  hytask::runtime rt(cfg());
  {
    hytask::task_group g;
    hytask::event go;
    for (int i = 0; i < 8; ++i) hytask::spawn({.group = &g}, [&] { go.wait(); });
    g.cancel(std::make_exception_ptr(std::logic_error("operator stop")));
    go.set();
    try {
      hytask::wait_all();
      ADD_FAILURE() << "wait_all did not rethrow the cause";
    } catch (const std::logic_error& e) {
      EXPECT_STREQ(e.what(), "operator stop");
    }
  }
  {
    hytask::task_group g;
    hytask::event go;
    for (int i = 0; i < 8; ++i) hytask::spawn({.group = &g}, [&] { go.wait(); });
    g.cancel();
    go.set();
    EXPECT_NO_THROW(hytask::wait_all());
  }
  // In a task: its wait_all rethrows, the task handles it.
  std::atomic<int> handled{0};
  hytask::spawn([&] {
    hytask::task_group g;
    hytask::event gate;
    hytask::spawn({.group = &g}, [&gate] { gate.wait(); });
    g.cancel(std::make_exception_ptr(std::runtime_error("inner")));
    gate.set();
    try {
      hytask::wait_all();
    } catch (const std::runtime_error&) {
      handled++;
    }
  });
  EXPECT_NO_THROW(hytask::wait_all());
  EXPECT_EQ(handled.load(), 1);
}

// A task_cancelled escaping a cancelled task's body is no failure.
TEST_P(Cancel, TaskCancelledLeavingACancelledTaskIsNoFailure) {
  hytask::runtime rt(cfg());
  hytask::task_group g;
  hytask::event started, release;
  hytask::spawn({.group = &g}, [&] {
    started.set();
    release.wait();
    if (hytask::this_task::cancelled()) throw hytask::task_cancelled("stopping");
  });
  started.wait();
  g.cancel();
  release.set();
  EXPECT_NO_THROW(hytask::wait_all());
  // Outside a cancelled task it is an exception like any other.
  hytask::spawn([] { throw hytask::task_cancelled("not cancelled"); });
  EXPECT_THROW(hytask::wait_all(), hytask::task_cancelled);
}

// Many tasks cancelled under a small throttle limit: counts stay right, the runtime goes on.
TEST_P(Cancel, CountsStayRight) {
  hytask::config c = cfg();
  c.max_tasks = 64;
  hytask::runtime rt(c);
  const long n = hytask_test::scaled(20000);
  for (int round = 0; round < 3; ++round) {
    hytask::task_group g;
    std::atomic<long> ran{0};
    std::vector<long> slots(32, 0);
    for (long i = 0; i < n; ++i) {
      if (i == n / 2) g.cancel();
      long* s = &slots[static_cast<std::size_t>(i % 32)];
      hytask::spawn({.group = &g}, [&ran, s] { ++*s; ran++; }, hytask::inout(*s));
    }
    hytask::wait_all();
    EXPECT_LE(ran.load(), n / 2 + 64 * 2) << "round " << round;
    EXPECT_GE(ran.load(), 1);
  }
  std::atomic<long> ran{0};
  for (long i = 0; i < 1000; ++i) hytask::spawn([&] { ran++; });
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 1000);
}

// cancel() from a thread that is not a worker; the group may go before its tasks.
TEST_P(Cancel, CancelFromAnotherThreadAndDropTheGroupEarly) {
  hytask::runtime rt(cfg());
  hytask::event go;
  std::atomic<int> started{0}, uncancelled{0};
  {
    auto g = std::make_unique<hytask::task_group>();
    hytask::spawn([&] { go.wait(); });
    for (int i = 0; i < 4; ++i)
      hytask::spawn({.group = g.get()}, [&] {
        started++;
        go.wait();  // set after the cancellation
        if (!hytask::this_task::cancelled()) uncancelled++;
      });
    std::thread t([&g] { g->cancel(); });
    t.join();
    EXPECT_TRUE(g->cancelled()) << "cancel() from another thread did not take";
    g.reset();  // its tasks keep what they need
  }
  go.set();
  hytask::wait_all();
  EXPECT_EQ(uncancelled.load(), 0) << "of " << started.load() << " tasks that started";
}

// Cancelled tasks release their versions; the cancelled writer's readers are skipped.
TEST_P(Cancel, CancelledTasksReleaseTheirVersions) {
  hytask::runtime rt(cfg());
  std::vector<int> data(64, 1);
  hytask::versioned<int> v(data);
  hytask::task_group g;
  hytask::event go;
  std::atomic<int> ran{0};
  hytask::spawn([&](const int*) { go.wait(); }, hytask::in(v));
  hytask::spawn({.group = &g}, [&](int* p) { go.wait(); p[0] = 9; }, hytask::out(v));
  hytask::spawn([&](const int* p) { ran += p[0]; }, hytask::in(v));
  g.cancel();
  go.set();
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(hytask::rename_stats().bytes_in_use, 0u);
  EXPECT_EQ(data[0], 1) << "home changed though the writer was cancelled";
}

INSTANTIATE_TEST_SUITE_P(Workers, Cancel, ::testing::Values(1u, 2u, 4u));
