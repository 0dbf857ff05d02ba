// Renaming (hytask::versioned): a writer whose region is still read gets a fresh version and
// runs at once; readers read the version they were given; the latest version comes back to
// the program's memory; versions are recycled and capped.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "hytask/hytask.hpp"
#include "test_util.hpp"

using namespace std::chrono_literals;

// Outside the anonymous namespace: the tests derive from it.
class Versioned : public ::testing::TestWithParam<unsigned> {
 protected:
  hytask::config cfg(std::size_t cap = 64u << 20) const {
    return hytask::config{.threads = GetParam(), .rename_max_bytes = cap};
  }
};

// Producer 2 runs while the readers of producer 1's version are still reading: each reader
// waits for producer 2 to have started, which without renaming would wait for the readers.
TEST_P(Versioned, AWriterDoesNotWaitForTheReadersOfThePreviousVersion) {
  hytask::runtime rt(cfg());
  std::vector<int> data(256, 0);
  hytask::versioned<int> v(data);
  std::atomic<bool> second_started{false};
  std::atomic<int> readers_ok{0}, readers_timed_out{0};
  hytask::spawn([](int* p) { std::fill(p, p + 256, 1); }, hytask::out(v));
  for (int r = 0; r < 4; ++r)
    hytask::spawn(
        [&](const int* p) {
          if (!hytask_test::yield_until(second_started, 5s)) readers_timed_out++;
          // Still version 1, although producer 2 has written version 2 meanwhile.
          if (std::all_of(p, p + 256, [](int x) { return x == 1; })) readers_ok++;
        },
        hytask::in(v));
  hytask::spawn(
      [&](int* p) {
        second_started = true;
        std::fill(p, p + 256, 2);
      },
      hytask::out(v));
  std::atomic<int> last_read{0};
  hytask::spawn([&](const int* p) { last_read = p[0] + p[255]; }, hytask::in(v));
  hytask::wait_all();
  EXPECT_EQ(readers_timed_out.load(), 0) << "the second writer waited for the readers";
  EXPECT_EQ(readers_ok.load(), 4) << "a reader saw another version than its own";
  EXPECT_EQ(last_read.load(), 4);
  EXPECT_EQ(data[0], 2) << "the latest version was not copied back at wait_all";
  EXPECT_EQ(data[255], 2);
  const hytask::rename_counters c = hytask::rename_stats();
  EXPECT_GE(c.renamed, 1u);
  EXPECT_EQ(c.bytes_in_use, 0u) << "versions still in use after wait_all";
}

// With the cap at 0 the same program is ordered as plain memory: the writer waits.
TEST_P(Versioned, WithoutRoomAWriterWaitsForTheReaders) {
  hytask::runtime rt(cfg(0));
  std::vector<int> data(16, 0);
  hytask::versioned<int> v(data);
  std::atomic<int> readers_done{0};
  int seen_by_writer = -1;
  hytask::spawn([](int* p) { std::fill(p, p + 16, 1); }, hytask::out(v));
  for (int r = 0; r < 4; ++r)
    hytask::spawn(
        [&](const int* p) {
          std::this_thread::sleep_for(2ms);
          EXPECT_EQ(p[3], 1);
          readers_done++;
        },
        hytask::in(v));
  hytask::spawn(
      [&](int* p) {
        seen_by_writer = readers_done.load();
        std::fill(p, p + 16, 2);
      },
      hytask::out(v));
  hytask::wait_all();
  EXPECT_EQ(seen_by_writer, 4);
  EXPECT_EQ(data[7], 2);
  const hytask::rename_counters c = hytask::rename_stats();
  EXPECT_EQ(c.renamed, 0u);
  EXPECT_GE(c.refused, 1u);
  EXPECT_EQ(c.bytes_held, 0u);
}

// No pending user of the current version: the writer writes it in place, nothing is copied.
TEST_P(Versioned, AWriterWithNoPendingUserWritesInPlace) {
  hytask::runtime rt(cfg());
  std::vector<double> data(8, 0.0);
  hytask::versioned<double> v(data);
  for (int i = 1; i <= 50; ++i) {
    hytask::spawn([&data, i](double* p) {
      EXPECT_EQ(p, data.data()) << "a version other than the program's memory";
      p[0] = i;
    }, hytask::out(v));
    hytask::wait_all();
  }
  EXPECT_EQ(data[0], 50.0);
  const hytask::rename_counters c = hytask::rename_stats();
  EXPECT_EQ(c.renamed, 0u);
  EXPECT_EQ(c.in_place, 50u);
  EXPECT_EQ(c.copied_back, 0u);
  EXPECT_EQ(c.allocated, 0u);
}

// inout on a renamed object starts from the value it replaces; a read-after-write chain of
// inout accesses is ordered (no renaming removes a true dependency).
TEST_P(Versioned, InoutStartsFromTheLatestValue) {
  hytask::runtime rt(cfg());
  std::array<long, 32> data{};
  hytask::versioned<long> v(data.data(), data.size());
  std::atomic<bool> release{false};
  for (int k = 0; k < 200; ++k) {
    hytask::spawn([](long* p) { for (int i = 0; i < 32; ++i) p[i] += i; }, hytask::inout(v));
    // A reader that lingers, so the next inout is renamed (and must copy).
    if (k % 20 == 0)
      hytask::spawn([&](const long*) { hytask_test::yield_until(release, 50ms); }, hytask::in(v));
  }
  release = true;
  hytask::wait_all();
  for (int i = 0; i < 32; ++i) EXPECT_EQ(data[static_cast<std::size_t>(i)], 200L * i);
}

// Versions are reused: a long pipeline of producer -> readers -> producer allocates a few
// buffers, not one per producer.
TEST_P(Versioned, VersionsAreRecycled) {
  hytask::runtime rt(cfg());
  std::vector<std::uint64_t> data(1024, 0);
  hytask::versioned<std::uint64_t> v(data);
  const long steps = hytask_test::scaled(20000);
  std::atomic<std::uint64_t> sum{0};
  for (long k = 0; k < steps; ++k) {
    hytask::spawn([k](std::uint64_t* p) { std::fill(p, p + 1024, static_cast<std::uint64_t>(k)); },
                  hytask::out(v));
    for (int r = 0; r < 3; ++r)
      hytask::spawn([&sum, r](const std::uint64_t* p) { sum += p[r * 100]; }, hytask::in(v));
  }
  hytask::wait_all();
  const std::uint64_t n = static_cast<std::uint64_t>(steps);
  EXPECT_EQ(sum.load(), 3 * (n * (n - 1) / 2));
  EXPECT_EQ(data[1023], n - 1);
  const hytask::rename_counters c = hytask::rename_stats();
  // Versions in flight are bounded by the tasks in flight (HYTASK_MAX_TASKS) and the cap;
  // buffers are reused across the run: far fewer allocations than renamed writers.
  EXPECT_GT(c.renamed, 0u);
  EXPECT_LE(c.allocated, 64u * 1024 * 1024 / (1024 * 8)) << "more buffers than the cap allows";
  if (c.renamed > 1000) {
    EXPECT_LT(c.allocated * 10, c.renamed) << "buffers are not reused";
  }
  EXPECT_EQ(c.bytes_in_use, 0u);
  EXPECT_LE(c.bytes_peak, c.cap);
}

// The cap holds: readers that stay pending force renaming until the versions reach the cap;
// past it, writers write in place (after the readers), and the memory held never exceeds it.
TEST_P(Versioned, TheCapHolds) {
  constexpr std::size_t elems = 4096;  // 32 KiB per version
  constexpr std::size_t cap = 5 * elems * sizeof(double);
  hytask::runtime rt(cfg(cap));
  std::vector<double> data(elems, 0.0);
  hytask::versioned<double> v(data);
  std::atomic<std::size_t> max_held{0};
  std::atomic<bool> go{false};
  auto note = [&] {
    const std::size_t h = hytask::rename_stats().bytes_held;
    std::size_t m = max_held.load();
    while (h > m && !max_held.compare_exchange_weak(m, h)) {
    }
  };
  std::atomic<int> bad{0};
  for (int k = 1; k <= 40; ++k) {
    hytask::spawn([k, &note](double* p) {
      note();
      std::fill(p, p + elems, k);
    }, hytask::out(v));
    hytask::spawn([&, k](const double* p) {
      if (k < 20) hytask_test::yield_until(go, 20ms);  // the early readers linger
      note();
      if (p[0] != k || p[elems - 1] != k) bad++;
    }, hytask::in(v));
  }
  go = true;
  hytask::wait_all();
  EXPECT_EQ(bad.load(), 0) << "a reader saw another version than its producer's";
  EXPECT_EQ(data[0], 40.0);
  const hytask::rename_counters c = hytask::rename_stats();
  EXPECT_EQ(c.cap, cap);
  EXPECT_LE(c.bytes_peak, cap) << "versions held more memory than HYTASK_RENAME_MAX_BYTES";
  EXPECT_LE(max_held.load(), cap);
  EXPECT_GT(c.renamed, 0u);
  std::printf("[ cap      ] renamed %llu, refused %llu, peak %zu of %zu bytes\n",
              static_cast<unsigned long long>(c.renamed), static_cast<unsigned long long>(c.refused),
              c.bytes_peak, c.cap);
}

// copy_back() spawns the copy ordered after the writer: a plain reader of the program's memory
// spawned after it sees the latest value, before any wait_all.
TEST_P(Versioned, CopyBackOrdersPlainAccessesToHome) {
  hytask::runtime rt(cfg());
  std::vector<int> data(64, 0);
  hytask::versioned<int> v(data);
  hytask::event release;  // set by main once everything is spawned
  hytask::spawn([&](const int*) { release.wait(); }, hytask::in(v));  // pending reader
  hytask::spawn([](int* p) { std::fill(p, p + 64, 7); }, hytask::out(v));  // renamed
  v.copy_back();
  int seen = -1;
  hytask::spawn([&] { seen = data[10]; }, hytask::in(data));
  release.set();
  hytask::wait_all();
  EXPECT_GE(hytask::rename_stats().renamed, 1u) << "the writer was not renamed: nothing to copy back";
  EXPECT_EQ(seen, 7) << "the plain reader did not see the renamed writer's value";
  EXPECT_EQ(data[63], 7);
}

// A plain access to the object's memory while a renamed writer holds a newer version is a
// usage_error naming the task (the memory is stale; an out would be overwritten at the
// copy-back); once the object is copied back, plain accesses are ordered and allowed.
TEST_P(Versioned, PlainAccessBesideANewerVersionIsRefused) {
  hytask::runtime rt(cfg());
  std::vector<int> data(64, 0);
  hytask::versioned<int> v(data);
  hytask::event release;
  hytask::spawn([&](const int*) { release.wait(); }, hytask::in(v));  // pending reader
  hytask::spawn([](int* p) { std::fill(p, p + 64, 5); }, hytask::out(v));  // renamed
  ASSERT_GE(hytask::rename_stats().renamed, 1u);
  std::atomic<int> ran{0};
  try {
    hytask::spawn({.name = "stale reader"}, [&] { ran++; }, hytask::in(&data[8], 4));
    ADD_FAILURE() << "a plain in beside a newer version was accepted";
  } catch (const hytask::usage_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("task 'stale reader' declares a plain in on the memory of a "
                        "hytask::versioned object (256 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("older value"), std::string::npos) << what;
  }
  try {
    hytask::spawn([&] { ran++; }, hytask::out(data));
    ADD_FAILURE() << "a plain out beside a newer version was accepted";
  } catch (const hytask::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("an unnamed task declares a plain out"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("copy-back would overwrite"), std::string::npos) << e.what();
  }
  int unrelated = 0;  // other memory is not affected
  hytask::spawn([&] { unrelated = 1; }, hytask::out(unrelated));
  release.set();
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 0) << "a refused task ran";
  EXPECT_EQ(unrelated, 1);
  int seen = -1;
  hytask::spawn([&] { seen = data[10]; }, hytask::in(data));  // copied back: allowed
  hytask::wait_all();
  EXPECT_EQ(seen, 5);
}

// Tasks of a task use an object; its wait_all copies back, and so does its completion when
// it does not wait.
TEST_P(Versioned, ChildrenOfATaskAreCopiedBackWhenItCompletes) {
  hytask::runtime rt(cfg());
  std::vector<int> a(32, 0), b(32, 0);
  hytask::spawn([&] {
    hytask::versioned<int> va(a);
    std::atomic<bool> rel{false};
    hytask::spawn([&](const int*) { hytask_test::yield_until(rel, 10ms); }, hytask::in(va));
    hytask::spawn([](int* p) { std::fill(p, p + 32, 3); }, hytask::out(va));
    rel = true;
    hytask::wait_all();
    EXPECT_EQ(a[5], 3);
  });
  hytask::versioned<int> vb(b);
  hytask::spawn([&vb] {
    hytask::spawn([](const int*) { std::this_thread::sleep_for(1ms); }, hytask::in(vb));
    hytask::spawn([](int* p) { std::fill(p, p + 32, 9); }, hytask::out(vb));
    // Returns without waiting: its completion (after its children) copies back.
  });
  hytask::wait_all();
  EXPECT_EQ(b[31], 9);
}

// A task that throws fails its successors as with plain memory; its versions come back.
TEST_P(Versioned, AFailedWriterSkipsItsReadersAndReleasesItsVersions) {
  hytask::runtime rt(cfg());
  std::vector<int> data(16, 1);
  hytask::versioned<int> v(data);
  std::atomic<int> ran{0};
  std::atomic<bool> rel{false};
  hytask::spawn([&](const int*) { hytask_test::yield_until(rel, 10ms); }, hytask::in(v));
  hytask::spawn([](int*) { throw std::runtime_error("writer failed"); }, hytask::out(v));
  hytask::spawn([&](const int*) { ran++; }, hytask::in(v));
  rel = true;
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(hytask::wait_all(), std::runtime_error);
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(hytask::rename_stats().bytes_in_use, 0u);
  // The next round works, and reuses the quarantined buffer once main's wait_all returned.
  hytask::spawn([](int* p) { std::fill(p, p + 16, 4); }, hytask::out(v));
  hytask::spawn([&](const int* p) { ran += p[0]; }, hytask::in(v));
  hytask::wait_all();
  EXPECT_EQ(ran.load(), 4);
  EXPECT_EQ(data[0], 4);
}

// Random graphs of tasks with versioned and plain accesses against the same tasks run one by
// one in spawn order on the program's memory: every task must read what the sequential run
// read, and the program's memory must end the same. Caps from "rename every time" to "never".
namespace {

constexpr int kObjects = 5, kPlain = 3, kLen = 8;

std::uint64_t hash(const long* p) {
  std::uint64_t h = 1469598103934665603ull;
  for (int j = 0; j < kLen; ++j) h = (h ^ static_cast<std::uint64_t>(p[j])) * 1099511628211ull;
  return h;
}

struct graph_task {
  int kind, a, b, c;  // objects (a, b, c distinct) and a plain region (c for kinds 5-7)
};

// The task bodies, shared by both runs: i is the task's index, rec its record.
void body0(int, std::uint64_t& rec, const long* a) { rec = hash(a); }
void body1(int i, std::uint64_t&, long* a) { for (int j = 0; j < kLen; ++j) a[j] = i * 100 + j; }
void body2(int i, std::uint64_t&, long* a) { for (int j = 0; j < kLen; ++j) a[j] = a[j] * 3 + i; }
void body3(int i, std::uint64_t& rec, const long* a, long* b) {
  rec = hash(a);
  for (int j = 0; j < kLen; ++j) b[j] = a[j] + i;
}
void body4(int i, std::uint64_t& rec, const long* a, const long* b, long* c) {
  rec = hash(a) ^ (hash(b) << 1);
  for (int j = 0; j < kLen; ++j) c[j] += a[j] * b[j] + i;
}
void body5(int, std::uint64_t& rec, const long* a, long* plain) {
  rec = hash(a);
  for (int j = 0; j < kLen; ++j) plain[j] += a[j];
}
void body6(int i, std::uint64_t& rec, const long* plain, long* a) {
  rec = hash(plain);
  for (int j = 0; j < kLen; ++j) a[j] = plain[j] + i;
}
void body7(int i, std::uint64_t& rec, const long* plain, long* a) {
  rec = hash(plain);
  for (int j = 0; j < kLen; ++j) a[j] = a[j] - plain[j] + i;
}

std::vector<graph_task> make_graph(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<graph_task> g;
  for (int i = 0; i < n; ++i) {
    std::array<int, kObjects> o{};
    for (int k = 0; k < kObjects; ++k) o[static_cast<std::size_t>(k)] = k;
    std::shuffle(o.begin(), o.end(), rng);
    // Reads are more frequent than writes, as in the programs renaming helps.
    static constexpr int kinds[] = {0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0, 3};
    const int kind = kinds[rng() % std::size(kinds)];
    g.push_back({kind, o[0], o[1], kind >= 5 ? static_cast<int>(rng() % kPlain) : o[2]});
  }
  return g;
}

// Runs g; sequential: call the bodies in order on the program's memory.
void run_graph(const std::vector<graph_task>& g, std::vector<long>& obj, std::vector<long>& plain,
               std::vector<std::uint64_t>& rec, bool sequential) {
  std::vector<std::unique_ptr<hytask::versioned<long>>> v;
  if (!sequential)
    for (int k = 0; k < kObjects; ++k)
      v.push_back(std::make_unique<hytask::versioned<long>>(&obj[static_cast<std::size_t>(k * kLen)],
                                                            static_cast<std::size_t>(kLen)));
  auto O = [&](int k) { return &obj[static_cast<std::size_t>(k * kLen)]; };
  auto P = [&](int k) { return &plain[static_cast<std::size_t>(k * kLen)]; };
  for (std::size_t t = 0; t < g.size(); ++t) {
    const graph_task& x = g[t];
    const int i = static_cast<int>(t);
    std::uint64_t& r = rec[t];
    if (sequential) {
      switch (x.kind) {
        case 0: body0(i, r, O(x.a)); break;
        case 1: body1(i, r, O(x.a)); break;
        case 2: body2(i, r, O(x.a)); break;
        case 3: body3(i, r, O(x.a), O(x.b)); break;
        case 4: body4(i, r, O(x.a), O(x.b), O(x.c)); break;
        case 5: body5(i, r, O(x.a), P(x.c)); break;
        case 6: body6(i, r, P(x.c), O(x.a)); break;
        case 7: body7(i, r, P(x.c), O(x.a)); break;
      }
      continue;
    }
    auto& A = *v[static_cast<std::size_t>(x.a)];
    auto& B = *v[static_cast<std::size_t>(x.b)];
    long* pc = P(x.c);
    switch (x.kind) {
      case 0: hytask::spawn([i, &r](const long* a) { body0(i, r, a); }, hytask::in(A)); break;
      case 1: hytask::spawn([i, &r](long* a) { body1(i, r, a); }, hytask::out(A)); break;
      case 2: hytask::spawn([i, &r](long* a) { body2(i, r, a); }, hytask::inout(A)); break;
      case 3:
        hytask::spawn([i, &r](const long* a, long* b) { body3(i, r, a, b); }, hytask::in(A),
                      hytask::out(B));
        break;
      case 4:
        hytask::spawn([i, &r](const long* a, const long* b, long* c) { body4(i, r, a, b, c); },
                      hytask::in(A), hytask::in(B), hytask::inout(*v[static_cast<std::size_t>(x.c)]));
        break;
      case 5:
        hytask::spawn([i, &r, pc](const long* a) { body5(i, r, a, pc); }, hytask::in(A),
                      hytask::inout(pc, kLen));
        break;
      case 6:
        hytask::spawn([i, &r, pc](long* a) { body6(i, r, pc, a); }, hytask::in(pc, kLen),
                      hytask::out(A));
        break;
      case 7:
        hytask::spawn([i, &r, pc](long* a) { body7(i, r, pc, a); }, hytask::inout(A),
                      hytask::in(pc, kLen));
        break;
    }
    if (t % 97 == 96) hytask::wait_all();  // copy-back in the middle of the run
  }
  if (!sequential) hytask::wait_all();
}

}  // namespace

TEST_P(Versioned, RandomGraphsMatchTheSequentialRun) {
  const int n = static_cast<int>(hytask_test::scaled(600));
  const std::size_t version_bytes = kLen * sizeof(long);
  for (std::size_t cap : {std::size_t{64} << 20, 3 * version_bytes, std::size_t{0}}) {
    hytask::runtime rt(cfg(cap));
    for (std::uint32_t seed : {1u, 2u, 3u, 42u}) {
      const std::vector<graph_task> g = make_graph(seed, n);
      std::vector<long> obj(kObjects * kLen), plain(kPlain * kLen);
      for (std::size_t k = 0; k < obj.size(); ++k) obj[k] = static_cast<long>(k);
      for (std::size_t k = 0; k < plain.size(); ++k) plain[k] = static_cast<long>(3 * k + 1);
      std::vector<long> obj_ref = obj, plain_ref = plain;
      std::vector<std::uint64_t> rec(g.size(), 0), rec_ref(g.size(), 0);
      run_graph(g, obj_ref, plain_ref, rec_ref, true);
      run_graph(g, obj, plain, rec, false);
      for (std::size_t t = 0; t < g.size(); ++t)
        ASSERT_EQ(rec[t], rec_ref[t]) << "task " << t << " (kind " << g[t].kind << ") read "
                                      << "other values, seed " << seed << ", cap " << cap;
      EXPECT_EQ(obj, obj_ref) << "seed " << seed << ", cap " << cap;
      EXPECT_EQ(plain, plain_ref) << "seed " << seed << ", cap " << cap;
    }
    const hytask::rename_counters c = hytask::rename_stats();
    if (cap > 3 * version_bytes) {
      EXPECT_GT(c.renamed, 0u);
    }
    if (cap == 0) {
      EXPECT_EQ(c.renamed, 0u);
    }
    EXPECT_LE(c.bytes_peak, cap);
    EXPECT_EQ(c.bytes_in_use, 0u);
  }
}

// Misuse is refused with a message.
TEST(VersionedErrors, OverlappingObjectsAreRefused) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<int> data(64, 0);
  hytask::versioned<int> whole(data);
  try {
    hytask::versioned<int> part(data.data() + 10, 4);
    ADD_FAILURE() << "an overlapping object was accepted";
  } catch (const hytask::usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("overlaps another hytask::versioned"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(hytask::versioned<int>(nullptr, 4), hytask::usage_error);
  hytask::versioned<int> disjoint(data.data() + 64, 0);  // empty: no memory, no overlap
  hytask::spawn([](int* p) { EXPECT_NE(p, nullptr); }, hytask::out(whole));
  hytask::wait_all();
}

// Objects outliving the runtime keep their last value at home.
TEST(VersionedErrors, TheRuntimesEndCopiesBack) {
  std::vector<int> data(8, 0);
  {
    hytask::runtime rt(hytask::config{.threads = 2});
    hytask::versioned<int> v(data);
    hytask::spawn([](const int*) { std::this_thread::sleep_for(5ms); }, hytask::in(v));
    hytask::spawn([](int* p) { std::fill(p, p + 8, 5); }, hytask::out(v));
    // No wait_all: the object's destructor waits for its tasks and copies back.
  }
  EXPECT_EQ(data[2], 5);
}

INSTANTIATE_TEST_SUITE_P(Workers, Versioned, ::testing::Values(1u, 2u, 4u));
