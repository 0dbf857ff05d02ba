// hytask::graph: a graph recorded once runs in the order its accesses imply on every run,
// as the same tasks spawned would; failures, misuse and memory behave as documented.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

// Workers, and where a graph's tasks run (HYTASK_GRAPH_PLACEMENT): every test holds for
// each placement, auto included (which alternates between the two in a graph's first runs).
struct graph_param {
  unsigned threads;
  hytask::graph_placement placement;
};

void PrintTo(const graph_param& p, std::ostream* os) {
  *os << p.threads << " threads, placement "
      << (p.placement == hytask::graph_placement::owner   ? "owner"
          : p.placement == hytask::graph_placement::steal ? "steal"
                                                          : "auto");
}

class Graph : public ::testing::TestWithParam<graph_param> {
 protected:
  hytask::config cfg() const {
    return hytask::config{.threads = GetParam().threads, .graph_placement = GetParam().placement};
  }
};

namespace {

struct access {
  std::size_t lo, len;
  hytask::access_mode mode;
};

struct graph_op {
  std::uint64_t id;
  std::vector<access> accs;
};

// Reads what it may read, then writes what it may write: another order changes the result.
void perform(const graph_op& o, std::uint64_t* mem, std::uint64_t round) {
  std::uint64_t sum = o.id + round;
  for (const auto& a : o.accs)
    if (a.mode != hytask::access_mode::out)
      for (std::size_t i = a.lo; i < a.lo + a.len; ++i) sum = hytask_test::mix(sum + mem[i]);
  for (const auto& a : o.accs) {
    if (a.mode == hytask::access_mode::in) continue;
    for (std::size_t i = a.lo; i < a.lo + a.len; ++i)
      mem[i] = a.mode == hytask::access_mode::inout ? hytask_test::mix(mem[i] ^ sum) : hytask_test::mix(sum + i);
  }
}

std::vector<graph_op> random_ops(std::mt19937_64& rng, std::size_t mem_size, int tasks) {
  std::vector<graph_op> ops;
  for (int t = 0; t < tasks; ++t) {
    graph_op o{static_cast<std::uint64_t>(t + 1), {}};
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      const std::size_t len = 1 + rng() % std::min<std::size_t>(mem_size, 48);
      const std::size_t start = rng() % (mem_size - len + 1);
      o.accs.push_back({start, len, static_cast<hytask::access_mode>(rng() % 3)});
    }
    ops.push_back(std::move(o));
  }
  return ops;
}

}  // namespace

TEST_P(Graph, RandomGraphsMatchASequentialRunOnEveryRun) {
  hytask::runtime rt(cfg());
  const int graphs = hytask_test::sanitized() ? 8 : 20;
  for (int g = 0; g < graphs; ++g) {
    std::mt19937_64 rng(500 + static_cast<unsigned>(g));
    const std::size_t mem_size = 64 + rng() % 512;
    const int tasks = hytask_test::sanitized() ? 800 : 2500;
    const std::vector<graph_op> ops = random_ops(rng, mem_size, tasks);
    std::vector<std::uint64_t> expected(mem_size), actual(mem_size);
    for (std::size_t i = 0; i < mem_size; ++i) expected[i] = actual[i] = i * 0x9E37u;
    std::uint64_t round = 0;  // read by the bodies: it changes between runs

    hytask::graph graph;
    std::uint64_t* mem = actual.data();
    for (const graph_op& o : ops) {
      std::vector<hytask::region_access> r;
      for (const auto& a : o.accs)
        r.push_back({mem + a.lo, a.len * sizeof(std::uint64_t), a.mode});
      graph.add([&o, mem, &round] { perform(o, mem, round); }, hytask::regions(r));
    }
    EXPECT_EQ(actual[0], 0u) << "add ran a task";
    ASSERT_EQ(graph.size(), ops.size());
    for (round = 0; round < 3; ++round) {
      for (const graph_op& o : ops) perform(o, expected.data(), round);
      graph.run();
      ASSERT_EQ(actual, expected) << "graph " << g << ", run " << round << " (" << mem_size
                                  << " words, " << tasks << " tasks)";
    }
  }
}

TEST_P(Graph, AChainRunsInOrderAndCountsItsEdges) {
  hytask::runtime rt(cfg());
  long x = 0;
  std::vector<long> seen;
  hytask::graph g;
  for (int i = 0; i < 2000; ++i)
    g.add([&x, &seen, i] {
      seen.push_back(x);
      x = i + 1;
    }, hytask::inout(x));
  EXPECT_EQ(g.edges(), 1999u);
  for (int run = 0; run < 2; ++run) {
    x = 0;
    seen.clear();
    g.run();
    ASSERT_EQ(seen.size(), 2000u);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], i) << "run " << run;
  }
}

TEST_P(Graph, ReadersOfOneWriterWaitForItAndTheNextWriterWaitsForThem) {
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<int> readers_done{0};
  int seen_by_writer = -1;
  hytask::graph g;
  g.add([&] {
    std::this_thread::sleep_for(2ms);
    x = 1;
  }, hytask::out(x));
  for (int r = 0; r < 4; ++r)
    g.add([&] {
      EXPECT_EQ(x, 1);
      std::this_thread::sleep_for(1ms);
      readers_done++;
    }, hytask::in(x));
  g.add([&] {
    seen_by_writer = readers_done.load();
    x = 2;
  }, hytask::out(x));
  EXPECT_EQ(g.edges(), 8u);
  g.run();
  EXPECT_EQ(seen_by_writer, 4);
  EXPECT_EQ(x, 2);
}

TEST_P(Graph, SuccessorsOfAFailedTaskAreSkippedAndTheNextRunIsClean) {
  hytask::runtime rt(cfg());
  int x = 0, y = 0;
  bool fail = true;
  std::atomic<int> ran_b{0}, ran_c{0}, ran_free{0};
  hytask::graph g;
  g.add([&] {
    if (fail) throw std::runtime_error("a failed");
    x = 1;
  }, hytask::out(x));
  g.add([&] { ran_b++; y = x; }, hytask::in(x), hytask::out(y));
  g.add([&] { ran_c++; }, hytask::in(y));
  g.add([&] { ran_free++; });
  ::testing::internal::CaptureStderr();
  try {
    g.run();
    ADD_FAILURE() << "run did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "a failed");
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran_b.load(), 0) << "a successor of a task that threw ran";
  EXPECT_EQ(ran_c.load(), 0) << "a successor of a skipped task ran";
  EXPECT_EQ(ran_free.load(), 1);
  EXPECT_NE(err.find("3 tasks failed (1 threw, 2 skipped"), std::string::npos) << err;
  fail = false;
  EXPECT_NO_THROW(g.run());
  EXPECT_EQ(ran_b.load(), 1);
  EXPECT_EQ(ran_c.load(), 1);
  EXPECT_EQ(y, 1);
}

TEST_P(Graph, RunWaitsForTheCallersEarlierTasksOnTheSameData) {
  hytask::runtime rt(cfg());
  int x = 0;
  int seen = -1;
  hytask::graph g;
  g.add([&] { seen = x; }, hytask::in(x));
  hytask::spawn([&] {
    std::this_thread::sleep_for(20ms);
    x = 7;
  }, hytask::out(x));
  g.run();
  EXPECT_EQ(seen, 7) << "the graph's reader ran before the earlier writer finished";
}

TEST_P(Graph, TasksOfAGraphMaySpawnAndAGraphMayRunInsideATask) {
  hytask::runtime rt(cfg());
  std::vector<int> v(64, 0);
  hytask::graph inner;
  for (int i = 0; i < 64; ++i)
    inner.add([&v, i] {
      hytask::spawn([&v, i] { v[static_cast<std::size_t>(i)] += 1; });  // a child
    }, hytask::inout(v[static_cast<std::size_t>(i)]));
  int runs = 0;
  hytask::graph outer;
  outer.add([&] { inner.run(); }, hytask::inout(v));
  outer.add([&] {
    ++runs;
    for (int e : v) EXPECT_EQ(e, runs) << "a task of the outer graph ran before the inner's children";
  }, hytask::inout(v));
  outer.run();
  outer.run();
  EXPECT_EQ(runs, 2);
  for (int e : v) EXPECT_EQ(e, 2);
}

TEST_P(Graph, ThousandsOfIndependentTasksRunOnceEach) {
  hytask::runtime rt(cfg());
  // Independent tasks are created by the workers, in ranges split off the caller's.
  const int n = 10000;
  std::vector<std::atomic<int>> ran(n);
  hytask::graph g;
  for (int i = 0; i < n; ++i)
    g.add([&ran, i] { ran[static_cast<std::size_t>(i)].fetch_add(1, std::memory_order_relaxed); });
  EXPECT_EQ(g.edges(), 0u);
  for (int run = 1; run <= 3; ++run) {
    g.run();
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(ran[static_cast<std::size_t>(i)].load(), run) << "task " << i << ", run " << run;
  }
}

// Independent tasks run in line, in ranges (graph.cpp); each must still be a task of its
// own to the program: its id, its children, its failure, its cancellation.
TEST_P(Graph, IndependentTasksKeepTheirOwnIdsChildrenAndFailures) {
  hytask::runtime rt(cfg());
  const int n = 2000;
  std::vector<std::uint64_t> ids(n);
  std::vector<std::atomic<int>> child_ran(n);
  std::atomic<int> ran{0};
  bool fail = true;
  hytask::graph g;
  for (int i = 0; i < n; ++i)
    g.add([&, i] {
      const auto k = static_cast<std::size_t>(i);
      ids[k] = hytask::this_task::id();
      if (i % 7 == 0) hytask::spawn([&child_ran, k] { child_ran[k].fetch_add(1); });
      ran.fetch_add(1, std::memory_order_relaxed);
      if (fail && (i == 5 || i == 1000 || i == 1999)) throw std::runtime_error("node " + std::to_string(i));
    });
  ::testing::internal::CaptureStderr();
  try {
    g.run();
    ADD_FAILURE() << "run did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("node ", 0), 0u) << e.what();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("3 tasks failed (3 threw"), std::string::npos) << err;
  EXPECT_EQ(ran.load(), n) << "a failure stopped independent tasks";
  std::set<std::uint64_t> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(n)) << "two tasks of one run shared an id";
  fail = false;
  EXPECT_NO_THROW(g.run());
  EXPECT_EQ(ran.load(), 2 * n);
  for (int i = 0; i < n; i += 7) EXPECT_EQ(child_ran[static_cast<std::size_t>(i)].load(), 2) << i;
}

// Independent tasks (run in line) and roots with successors (created by range tasks); a
// graph run in a cancelled group ends, having skipped what had not started.
TEST_P(Graph, CancellingSkipsTheTasksNotStarted) {
  for (const bool chains : {false, true}) {
    SCOPED_TRACE(chains ? "roots with successors" : "independent tasks");
    hytask::runtime rt(cfg());
    const int n = 5000;
    std::vector<int> cell(n);
    std::atomic<int> ran{0};
    hytask::task_group group;
    hytask::graph g;
    for (int i = 0; i < n; ++i) {
      // Each body takes 50 us: the others running all 4999 before task 10 would need its
      // worker held off its core for some 80 ms (an oversubscribed sanitizer run had every
      // body run while it was held off for the few ms empty bodies take).
      auto body = [&, i] {
        ran.fetch_add(1, std::memory_order_relaxed);
        if (i == 10) group.cancel();
        const auto until = std::chrono::steady_clock::now() + 50us;
        while (std::chrono::steady_clock::now() < until) {
        }
      };
      if (chains) g.add(body, hytask::out(cell[static_cast<std::size_t>(i)]));
      else g.add(body);
    }
    if (chains)  // each root has a successor
      for (int i = 0; i < n; ++i) g.add([] {}, hytask::in(cell[static_cast<std::size_t>(i)]));
    g.seal();
    hytask_test::hang_guard guard(60s, "a graph run in a cancelled group");
    hytask::spawn({.group = &group}, [&] { g.run(); });
    EXPECT_NO_THROW(hytask::wait_all()) << "cancelling is not failing";
    EXPECT_GE(ran.load(), 1);
    EXPECT_LT(ran.load(), n) << "every task ran after its group was cancelled";
  }
}

// A task that waits for another independent one (here by yielding until a flag is set;
// an MPI receive from a send on the same rank is the same) must not hold that one up: a
// range gives away what it has not run when one of its bodies suspends or yields.
TEST_P(Graph, AnIndependentTaskMayWaitForAnotherOne) {
  hytask::runtime rt(cfg());
  const int n = 64;
  std::vector<std::atomic<bool>> flag(n);
  std::atomic<int> timed_out{0};
  hytask::graph g;
  for (int i = 0; i < n; ++i)
    g.add([&, i] {
      const auto k = static_cast<std::size_t>(i);
      if (i % 2 == 1) {  // sets what the node before it waits for
        flag[k - 1].store(true, std::memory_order_release);
        return;
      }
      if (!hytask_test::yield_until(flag[k], 10s)) timed_out.fetch_add(1);
    });
  hytask_test::hang_guard guard(60s, "a graph whose tasks wait for each other");
  for (int run = 0; run < 3; ++run) {
    for (auto& f : flag) f.store(false);
    g.run();
    ASSERT_EQ(timed_out.load(), 0) << "run " << run << ": a waiting task held up the one it waited for";
  }
}

TEST_P(Graph, RecordsStayAtTheReadyFrontier) {
  if (hytask_test::sanitized()) GTEST_SKIP() << "measures memory; sanitizers add their own";
  hytask::runtime rt(cfg());
  // A chain: one task ready at a time. Had run() created every task up front, its records
  // (384 bytes each) would take 75 MiB.
  const int n = 200000;
  long x = 0;
  hytask::graph g;
  for (int i = 0; i < n; ++i) g.add([&x] { ++x; }, hytask::inout(x));
  g.run();  // the first run allocates what runs need
  hytask_test::reset_peak_rss();
  const long before = hytask_test::current_rss_kib();
  g.run();
  const long grew = hytask_test::peak_rss_kib() - before;
  EXPECT_EQ(x, 2 * n);
  EXPECT_LT(grew, 8 * 1024) << "KiB grown during a run of a chain of " << n << " tasks";
}

// Tasks with edges that wait for each other across chains (here by yielding until a flag
// is set): with owner placement, the waiting task's partition goes to another agent, so
// the task that sets the flag still runs, wherever it was placed.
TEST_P(Graph, ATaskWithEdgesMayWaitForOneOfAnotherChain) {
  hytask::runtime rt(cfg());
  const int chains = 8, length = 16;
  std::vector<long> cell(chains, 0);
  std::vector<std::atomic<bool>> flag(chains);
  std::atomic<int> timed_out{0};
  hytask::graph g;
  for (int step = 0; step < length; ++step)
    for (int c = 0; c < chains; ++c)
      g.add([&, c, step] {
        const auto k = static_cast<std::size_t>(c);
        cell[k] += 1;
        if (step != length / 2) return;
        if (c % 2 == 1) {  // sets what its neighbour chain waits for at the same step
          flag[k - 1].store(true, std::memory_order_release);
          return;
        }
        if (!hytask_test::yield_until(flag[k], 10s)) timed_out.fetch_add(1);
      }, hytask::inout(cell[static_cast<std::size_t>(c)]));
  hytask_test::hang_guard guard(60s, "a graph whose tasks with edges wait for each other");
  for (int run = 1; run <= 8; ++run) {
    for (auto& f : flag) f.store(false);
    g.run();
    ASSERT_EQ(timed_out.load(), 0) << "run " << run << ": a waiting task held up the one it waited for";
    for (long v : cell) ASSERT_EQ(v, run * length);
  }
}

// A graph run while every other worker is held by a long task: the partitions
// placed on those workers are taken over, and the run does not wait for the long task.
TEST_P(Graph, ARunDoesNotWaitForAWorkerBusyElsewhere) {
  const unsigned threads = GetParam().threads;
  if (threads < 2) GTEST_SKIP() << "needs a second worker to keep busy";
  hytask::runtime rt(cfg());
  const int width = 8, steps = 200;
  std::vector<long> cell(width, 0);
  hytask::graph g;
  for (int t = 0; t < steps; ++t)
    for (int i = 0; i < width; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const std::size_t l = (k + width - 1) % width, r = (k + 1) % width;
      g.add([&cell, k] { cell[k] += 1; }, hytask::inout(cell[k]), hytask::in(cell[l]),
            hytask::in(cell[r]));
    }
  g.run();  // the plan and the first runs' trials (auto) while every worker is free
  g.run();
  // The long tasks end on their own after 10 s: a run that waited for them fails below
  // instead of hanging.
  std::atomic<bool> release{false};
  std::atomic<unsigned> holding{0};
  for (unsigned k = 1; k < threads; ++k)
    hytask::spawn([&] {
      holding.fetch_add(1);
      const auto end = std::chrono::steady_clock::now() + 10s;
      while (!release.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < end)
        std::this_thread::sleep_for(1ms);
    });
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (holding.load() < threads - 1 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(1ms);
  ASSERT_EQ(holding.load(), threads - 1) << "the other workers did not take the long tasks";
  // From a task: a run waits for all of its caller's children, and the long tasks are
  // main's. Main runs it (main is the only free worker) in its wait_all.
  double seconds = 0;
  hytask::spawn([&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int run = 0; run < 6; ++run) g.run();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    release.store(true, std::memory_order_release);
  });
  hytask::wait_all();
  for (long v : cell) EXPECT_EQ(v, 8L * steps);
  EXPECT_LT(seconds, 5.0) << "six runs of " << width * steps
                          << " tiny tasks waited for the busy workers";
}

TEST_P(Graph, MovedGraphRunsAndTheEmptyOneToo) {
  hytask::runtime rt(cfg());
  int x = 0;
  hytask::graph a;
  a.add([&] { ++x; }, hytask::inout(x));
  hytask::graph b = std::move(a);
  b.run();
  a.run();  // moved from: empty
  EXPECT_EQ(x, 1);
  EXPECT_EQ(a.size(), 0u);
}

// The graph keeps its bodies in storage of its own: each keeps its alignment, one bigger
// than the storage's chunks fits too, each is destroyed once, with the graph, and a body
// whose copy throws leaves the graph as it was.
TEST_P(Graph, BodiesKeepTheirAlignmentAndAreDestroyedOnceWithTheGraph) {
  hytask::runtime rt(cfg());
  struct alignas(128) wide {
    unsigned char bytes[200];
  };
  struct throws_on_copy {
    throws_on_copy() = default;
    throws_on_copy(const throws_on_copy&) { throw std::runtime_error("copy"); }
    void operator()() const {}
  };
  auto owned = std::make_shared<int>(7);
  constexpr int tasks = 3000;
  std::vector<std::uint64_t> out(tasks, 0);
  std::atomic<int> misaligned{0};
  {
    hytask::graph g;
    for (int i = 0; i < tasks; ++i) {
      wide w{};
      w.bytes[0] = static_cast<unsigned char>(i);
      g.add([w, owned, &out, &misaligned, i] {
        if (reinterpret_cast<std::uintptr_t>(&w) % alignof(wide) != 0) ++misaligned;
        out[static_cast<std::size_t>(i)] += static_cast<std::uint64_t>(w.bytes[0]) + *owned;
      }, hytask::inout(out[static_cast<std::size_t>(i)]));
    }
    std::vector<unsigned char> big_sum(1);
    std::array<unsigned char, 100 * 1024> big{};  // larger than a chunk of the storage
    big[big.size() - 1] = 5;
    g.add([big, &big_sum] { big_sum[0] = big[big.size() - 1]; }, hytask::out(big_sum[0]));
    const throws_on_copy bad;
    EXPECT_THROW(g.add(bad), std::runtime_error);
    EXPECT_EQ(owned.use_count(), tasks + 1);
    g.run();
    g.run();
    EXPECT_EQ(misaligned.load(), 0);
    EXPECT_EQ(big_sum[0], 5);
    for (int i = 0; i < tasks; ++i)
      ASSERT_EQ(out[static_cast<std::size_t>(i)], 2 * (static_cast<std::uint64_t>(i % 256) + 7))
          << "task " << i;
    EXPECT_EQ(g.size(), static_cast<std::size_t>(tasks + 1));
  }
  EXPECT_EQ(owned.use_count(), 1);
}

TEST_P(Graph, MisuseIsAnError) {
  int x = 0;
  hytask::graph outside;
  EXPECT_THROW(outside.add([] {}), hytask::usage_error);  // no runtime
  hytask::runtime rt(cfg());
  hytask::graph g;
  g.add([&] { ++x; }, hytask::inout(x));
  g.run();
  try {
    g.add([] {});
    ADD_FAILURE() << "add after run";
  } catch (const hytask::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("sealed"), std::string::npos) << e.what();
  }
  hytask::graph early;
  early.add([&] { ++x; }, hytask::inout(x));
  early.seal();
  EXPECT_THROW(early.add([] {}), hytask::usage_error);
  early.run();
  EXPECT_EQ(x, 2);
  hytask::task_group group;
  hytask::graph h;
  EXPECT_THROW(h.add({.group = &group}, [] {}), hytask::usage_error);
  // An add whose access throws leaves the graph incomplete: it refuses to run.
  hytask::graph broken;
  broken.add([] {}, hytask::out(x));
  const auto* end = reinterpret_cast<const char*>(~std::uintptr_t{0} - 4);
  EXPECT_THROW(broken.add([] {}, hytask::in(end, 16)), hytask::usage_error);
  try {
    broken.run();
    ADD_FAILURE() << "an incomplete graph ran";
  } catch (const hytask::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("incomplete"), std::string::npos) << e.what();
  }
  std::thread other([&] { EXPECT_THROW(g.run(), hytask::usage_error); });  // not a worker
  other.join();
  EXPECT_EQ(x, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Threads, Graph,
    ::testing::Values(graph_param{1, hytask::graph_placement::automatic},
                      graph_param{2, hytask::graph_placement::automatic},
                      graph_param{4, hytask::graph_placement::automatic},
                      graph_param{2, hytask::graph_placement::owner},
                      graph_param{4, hytask::graph_placement::owner},
                      graph_param{2, hytask::graph_placement::steal}),
    [](const ::testing::TestParamInfo<graph_param>& info) {
      const hytask::graph_placement p = info.param.placement;
      // Not a bare number: ctest's discovery would replace it with the printed value.
      return std::to_string(info.param.threads) +
             (p == hytask::graph_placement::owner   ? "_owner"
              : p == hytask::graph_placement::steal ? "_steal"
                                                    : "_auto");
    });
