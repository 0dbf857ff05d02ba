#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

class Deps : public ::testing::TestWithParam<unsigned> {
 protected:
  hytask::config cfg() const { return hytask::config{.threads = GetParam()}; }
};

TEST_P(Deps, ReadAfterWriteChainIsSerial) {
  hytask::runtime rt(cfg());
  long x = 0;
  std::vector<long> seen;
  for (int i = 0; i < 2000; ++i)
    hytask::spawn([&x, &seen, i] {
      seen.push_back(x);
      x = i + 1;
    }, hytask::inout(x));
  hytask::wait_all();
  ASSERT_EQ(seen.size(), 2000u);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(seen[static_cast<std::size_t>(i)], i);
}

TEST_P(Deps, WriteAfterReadWaitsForAllReaders) {
  hytask::runtime rt(cfg());
  int x = 1;
  std::atomic<int> readers_done{0};
  int readers_seen_by_writer = -1;
  for (int r = 0; r < 8; ++r)
    hytask::spawn([&] {
      std::this_thread::sleep_for(2ms);
      EXPECT_EQ(x, 1);
      readers_done++;
    }, hytask::in(x));
  hytask::spawn([&] {
    readers_seen_by_writer = readers_done.load();
    x = 2;
  }, hytask::out(x));
  hytask::wait_all();
  EXPECT_EQ(readers_seen_by_writer, 8);
}

TEST_P(Deps, ReadersRunConcurrently) {
  if (GetParam() < 2) GTEST_SKIP() << "needs two workers";
  hytask::runtime rt(cfg());
  int x = 0;
  std::atomic<int> arrived{0};
  std::atomic<bool> met{true};
  for (int r = 0; r < 2; ++r)
    hytask::spawn([&] {
      arrived++;
      auto deadline = std::chrono::steady_clock::now() + 10s;
      while (arrived.load() < 2)
        if (std::chrono::steady_clock::now() > deadline) {
          met = false;
          return;
        }
    }, hytask::in(x));
  hytask::wait_all();
  EXPECT_TRUE(met.load()) << "two readers of the same region did not overlap";
}

TEST_P(Deps, PartialOverlapIsOrdered) {
  hytask::runtime rt(cfg());
  for (int rep = 0; rep < 100; ++rep) {
    std::vector<int> buf(200, 0);
    int seen = -1;
    hytask::spawn([&buf] {
      std::this_thread::sleep_for(100us);
      for (int i = 0; i < 100; ++i) buf[static_cast<std::size_t>(i)] = 7;
    }, hytask::out(buf.data(), 100));
    // Reads [90, 110): overlaps the first writer's tail only.
    hytask::spawn([&buf, &seen] { seen = buf[95]; }, hytask::in(buf.data() + 90, 20));
    // Writes [50, 150) after reads of [90,110) and the write of [0,100).
    hytask::spawn([&buf] {
      for (int i = 50; i < 150; ++i) buf[static_cast<std::size_t>(i)] += 1;
    }, hytask::inout(buf.data() + 50, 100));
    hytask::wait_all();
    ASSERT_EQ(seen, 7);
    ASSERT_EQ(buf[49], 7);
    ASSERT_EQ(buf[50], 8);
    ASSERT_EQ(buf[99], 8);
    ASSERT_EQ(buf[100], 1);
    ASSERT_EQ(buf[149], 1);
    ASSERT_EQ(buf[150], 0);
  }
}

TEST_P(Deps, RegionContainingAnotherIsOrdered) {
  hytask::runtime rt(cfg());
  std::vector<std::uint32_t> buf(64, 0);
  for (int rep = 0; rep < 200; ++rep) {
    hytask::spawn([&buf] { buf[10] = buf[10] * 3 + 1; }, hytask::inout(buf[10]));
    hytask::spawn([&buf] { for (auto& v : buf) v = v * 5 + 2; },
                  hytask::inout(buf.data(), buf.size()));
  }
  hytask::wait_all();
  // Sequentially: element 10 is updated by both kinds of task, in order; the others only
  // by the whole-array task. Any reordering changes the value.
  std::uint32_t expect10 = 0, expect11 = 0;
  for (int rep = 0; rep < 200; ++rep) {
    expect10 = (expect10 * 3 + 1) * 5 + 2;
    expect11 = expect11 * 5 + 2;
  }
  EXPECT_EQ(buf[10], expect10);
  EXPECT_EQ(buf[11], expect11);
}

TEST_P(Deps, RepeatedAccessInOneTaskDoesNotDeadlock) {
  hytask_test::hang_guard guard(20s, "Deps.RepeatedAccessInOneTaskDoesNotDeadlock");
  hytask::runtime rt(cfg());
  int x = 0;
  for (int i = 0; i < 100; ++i)
    hytask::spawn([&x] { x++; }, hytask::in(x), hytask::inout(x), hytask::out(x), hytask::in(x));
  hytask::wait_all();
  EXPECT_EQ(x, 100);
}

TEST_P(Deps, AfterEvent) {
  hytask::runtime rt(cfg());
  hytask::event go;
  std::atomic<bool> set_before_run{false};
  std::atomic<bool> flag{false};
  hytask::spawn([&] { set_before_run = flag.load(); }, hytask::after(go));
  hytask::spawn([&] {
    std::this_thread::sleep_for(5ms);
    flag = true;
    go.set();
  });
  hytask::wait_all();
  EXPECT_TRUE(set_before_run.load());
  // Depending on an event that is already set costs nothing.
  bool ran = false;
  hytask::spawn([&ran] { ran = true; }, hytask::after(go));
  hytask::wait_all();
  EXPECT_TRUE(ran);
}

// ---- in(x), out(x), inout(x) on containers -------------------------------------------
// On a contiguous range they declare its elements, not the container object: out(v) on a
// std::vector used to declare the vector's 24 bytes, and a reader declared on v.data() saw
// stale data (issue 14).

namespace {

// A writer declared on `whole` and a reader declared on the elements (pointer, count) are
// ordered; so are a reader declared on `whole` and a later writer of one element. The first
// task of each pair sleeps, so a missing edge lets the second run early on another worker.
template <class Whole>
void expect_whole_orders_against_elements(Whole& whole, int* elements, std::size_t n) {
  for (int rep = 1; rep <= 10; ++rep) {
    int seen = -1, read_through_whole = -1;
    hytask::spawn([elements, n, rep] {
      std::this_thread::sleep_for(1ms);
      std::fill(elements, elements + n, rep);
    }, hytask::out(whole));
    hytask::spawn([&seen, elements, n] { seen = elements[n - 1]; }, hytask::in(elements, n));
    hytask::spawn([&read_through_whole, elements, n] {
      std::this_thread::sleep_for(1ms);
      read_through_whole = elements[n - 1];
    }, hytask::in(whole));
    hytask::spawn([elements, n] { elements[n - 1] = -7; }, hytask::out(elements + n - 1, 1));
    hytask::wait_all();
    ASSERT_EQ(seen, rep) << "a reader of the elements ran before the writer of the whole";
    ASSERT_EQ(read_through_whole, rep) << "a writer of an element ran before the reader of the whole";
  }
}

}  // namespace

TEST_P(Deps, VectorAccessCoversItsElements) {
  hytask::runtime rt(cfg());
  std::vector<int> v(64, 0);
  expect_whole_orders_against_elements(v, v.data(), v.size());
}

TEST_P(Deps, ArrayAccessCoversItsElements) {
  hytask::runtime rt(cfg());
  std::array<int, 64> a{};
  expect_whole_orders_against_elements(a, a.data(), a.size());
}

TEST_P(Deps, SpanAccessCoversItsElements) {
  hytask::runtime rt(cfg());
  std::vector<int> buf(64, 0);
  std::span<int> s(buf.data() + 8, 32);
  expect_whole_orders_against_elements(s, s.data(), s.size());
}

// An empty range declares no region: two writers of one empty vector do not wait for each
// other (there is no element both could touch), and nothing throws on its null data().
TEST_P(Deps, EmptyRangeCreatesNoDependency) {
  if (GetParam() < 2) GTEST_SKIP() << "needs two workers";
  hytask::runtime rt(cfg());
  std::vector<double> empty;
  std::atomic<int> arrived{0};
  std::atomic<bool> met{true};
  for (int w = 0; w < 2; ++w)
    hytask::spawn([&] {
      arrived++;
      auto deadline = std::chrono::steady_clock::now() + 5s;
      while (arrived.load() < 2)
        if (std::chrono::steady_clock::now() > deadline) {
          met = false;
          return;
        }
    }, hytask::out(empty));
  hytask::wait_all();
  EXPECT_TRUE(met.load()) << "two writers of an empty vector were ordered";
}

// The regions themselves, without a runtime.
TEST(OneObjectAccess, ContiguousRangesDeclareTheirElements) {
  std::vector<double> v(100);
  const hytask::region_access w = hytask::out(v);
  EXPECT_EQ(w.addr, v.data());
  EXPECT_EQ(w.bytes, 100 * sizeof(double));
  EXPECT_EQ(w.mode, hytask::access_mode::out);

  const std::vector<double>& cv = v;
  EXPECT_EQ(hytask::in(cv).addr, v.data());
  EXPECT_EQ(hytask::in(cv).bytes, 100 * sizeof(double));

  std::array<int, 7> a{};
  EXPECT_EQ(hytask::inout(a).addr, a.data());
  EXPECT_EQ(hytask::inout(a).bytes, sizeof a);

  std::span<double> s(v.data() + 10, 20);
  EXPECT_EQ(hytask::inout(s).addr, v.data() + 10);
  EXPECT_EQ(hytask::inout(s).bytes, 20 * sizeof(double));
  // A view may be a temporary: the elements outlive it.
  EXPECT_EQ(hytask::in(std::span(v).subspan(5, 3)).addr, v.data() + 5);
  EXPECT_EQ(hytask::in(std::span(v).subspan(5, 3)).bytes, 3 * sizeof(double));
  EXPECT_EQ(hytask::out(std::span(v).first(4)).bytes, 4 * sizeof(double));

  std::string str(50, 'x');  // beyond the small-string buffer: the characters are elsewhere
  EXPECT_EQ(hytask::in(str).addr, str.data());
  EXPECT_EQ(hytask::in(str).bytes, 50u);

  int c_array[5] = {};
  EXPECT_EQ(hytask::out(c_array).addr, c_array);
  EXPECT_EQ(hytask::out(c_array).bytes, sizeof c_array);
}

TEST(OneObjectAccess, OtherObjectsDeclareThemselves) {
  double d = 0;
  EXPECT_EQ(hytask::out(d).addr, &d);
  EXPECT_EQ(hytask::out(d).bytes, sizeof d);
  double* p = &d;  // a pointer variable is the pointer, not what it points to
  EXPECT_EQ(hytask::in(p).addr, &p);
  EXPECT_EQ(hytask::in(p).bytes, sizeof p);
  struct pair {
    int a;
    double b;
  } pr{};
  EXPECT_EQ(hytask::inout(pr).addr, &pr);
  EXPECT_EQ(hytask::inout(pr).bytes, sizeof pr);
}

TEST(OneObjectAccess, EmptyRangeDeclaresNothing) {
  std::vector<double> empty;
  EXPECT_EQ(hytask::out(empty).bytes, 0u);
  std::span<int> none;
  EXPECT_EQ(hytask::in(none).bytes, 0u);
}

// ---- random task graphs against a sequential run of the same program -------------------

namespace {

struct op {
  struct acc {
    std::size_t lo, len;
    hytask::access_mode mode;
  };
  std::uint64_t id;
  std::vector<acc> accs;
  std::vector<op> children;
};

// What a task does: read everything it may read, then write everything it may write. A
// different execution order changes the result.
void perform(const op& o, std::uint64_t* mem) {
  std::uint64_t sum = o.id;
  for (const auto& a : o.accs)
    if (a.mode != hytask::access_mode::out)
      for (std::size_t i = a.lo; i < a.lo + a.len; ++i) sum = hytask_test::mix(sum + mem[i]);
  for (const auto& a : o.accs) {
    if (a.mode == hytask::access_mode::in) continue;
    for (std::size_t i = a.lo; i < a.lo + a.len; ++i)
      mem[i] = a.mode == hytask::access_mode::inout ? hytask_test::mix(mem[i] ^ sum) : hytask_test::mix(sum + i);
  }
}

void run_sequential(const std::vector<op>& ops, std::uint64_t* mem) {
  for (const op& o : ops) {
    perform(o, mem);
    run_sequential(o.children, mem);
  }
}

template <class... A>
void spawn_with(const op& o, std::uint64_t* mem, const A&... extra);

void spawn_all(const std::vector<op>& ops, std::uint64_t* mem) {
  for (const op& o : ops) {
    auto body = [&o, mem] {
      perform(o, mem);
      spawn_all(o.children, mem);
    };
    // Up to four accesses per task; pad with empty regions.
    hytask::region_access r[4];
    for (std::size_t k = 0; k < 4; ++k) {
      if (k < o.accs.size()) {
        const auto& a = o.accs[k];
        r[k] = hytask::region_access{mem + a.lo, a.len * sizeof(std::uint64_t), a.mode};
      } else {
        r[k] = hytask::region_access{mem, 0, hytask::access_mode::in};
      }
    }
    hytask::spawn(body, r[0], r[1], r[2], r[3]);
  }
}

std::vector<op> random_program(std::mt19937_64& rng, std::size_t mem_size, int tasks, int depth,
                               std::size_t lo = 0, std::size_t hi = 0, std::uint64_t* next_id = nullptr) {
  std::uint64_t counter = 1;
  if (!next_id) next_id = &counter;
  if (hi == 0) hi = mem_size;
  std::vector<op> ops;
  for (int t = 0; t < tasks; ++t) {
    op o;
    o.id = (*next_id)++;
    int n = 1 + static_cast<int>(rng() % 4);
    std::size_t span = hi - lo;
    for (int k = 0; k < n; ++k) {
      std::size_t len = 1 + rng() % std::min<std::size_t>(span, 48);
      std::size_t start = lo + rng() % (span - len + 1);
      auto mode = static_cast<hytask::access_mode>(rng() % 3);
      o.accs.push_back({start, len, mode});
    }
    // Children work inside the parent's first region, which the parent writes.
    if (depth > 0 && rng() % 4 == 0) {
      o.accs[0].mode = hytask::access_mode::inout;
      o.children = random_program(rng, mem_size, 3, depth - 1, o.accs[0].lo,
                                  o.accs[0].lo + o.accs[0].len, next_id);
    }
    ops.push_back(std::move(o));
  }
  return ops;
}

}  // namespace

TEST_P(Deps, RandomGraphsMatchSequentialRun) {
  hytask::runtime rt(cfg());
  // Under sanitizers: fewer tasks per graph, but enough graphs that a spawn racing with a
  // predecessor's completion (a CAS losing to it) happens in every run.
  const int graphs = hytask_test::sanitized() ? 24 : 30;
  for (int g = 0; g < graphs; ++g) {
    std::mt19937_64 rng(1000 + static_cast<unsigned>(g));
    const std::size_t mem_size = 64 + rng() % 512;
    const int tasks = hytask_test::sanitized() ? 1500 : 3000;
    auto program = random_program(rng, mem_size, tasks, g % 2 ? 2 : 0);
    std::vector<std::uint64_t> expected(mem_size), actual(mem_size);
    for (std::size_t i = 0; i < mem_size; ++i) expected[i] = actual[i] = i * 0x9E37u;
    run_sequential(program, expected.data());
    spawn_all(program, actual.data());
    hytask::wait_all();
    ASSERT_EQ(actual, expected) << "graph " << g << " (" << mem_size << " words, " << tasks
                                << " tasks)";
  }
}

TEST_P(Deps, ManyDistinctRegionsStayBounded) {
  // Every task touches fresh addresses; the tracker must sweep what completed.
  hytask::runtime rt(cfg());
  const long n = hytask_test::scaled(400000);
  std::vector<char> mem(static_cast<std::size_t>(n));
  std::atomic<long> sum{0};
  long before = hytask_test::current_rss_kib();
  for (long i = 0; i < n; ++i)
    hytask::spawn([&sum] { sum++; }, hytask::out(mem[static_cast<std::size_t>(i)]));
  hytask::wait_all();
  EXPECT_EQ(sum.load(), n);
  long grown = hytask_test::current_rss_kib() - before;
  EXPECT_LT(grown, 200 * 1024) << "RSS grew by " << grown << " KiB";
}

// regions(): a run-time list of accesses orders exactly like the same accesses spelled out.
// Each task of a 1-D three-point stencil reads its block and both neighbours of the previous
// generation, and writes its block of the next one.
TEST_P(Deps, RegionListOrdersLikeSpelledOutAccesses) {
  hytask::runtime rt(cfg());
  constexpr int blocks = 16, gens = 40;
  std::vector<long> gen[2] = {std::vector<long>(blocks, 0), std::vector<long>(blocks, 0)};
  std::atomic<int> wrong{0};
  for (int g = 0; g < gens; ++g) {
    for (int b = 0; b < blocks; ++b) {
      std::vector<hytask::region_access> deps = {hytask::out(gen[(g + 1) & 1][static_cast<std::size_t>(b)])};
      for (int n = std::max(0, b - 1); n <= std::min(blocks - 1, b + 1); ++n)
        deps.push_back(hytask::in(gen[g & 1][static_cast<std::size_t>(n)]));
      hytask::spawn([&, g, b] {
        for (int n = std::max(0, b - 1); n <= std::min(blocks - 1, b + 1); ++n)
          if (gen[g & 1][static_cast<std::size_t>(n)] != g) wrong.fetch_add(1);
        gen[(g + 1) & 1][static_cast<std::size_t>(b)] = g + 1;
      }, hytask::regions(deps));
    }
  }
  hytask::wait_all();
  EXPECT_EQ(wrong.load(), 0);
  for (long v : gen[gens & 1]) EXPECT_EQ(v, gens);
}

INSTANTIATE_TEST_SUITE_P(Threads, Deps, ::testing::Values(1u, 2u, 4u));
