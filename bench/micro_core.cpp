// Micro-benchmarks of the core's hot paths, one thread unless stated (Google Benchmark).
//   bench_micro --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <boost/context/detail/fcontext.hpp>

#include <cstdint>
#include <vector>

#include "core/deque.hpp"
#include "hytask/hytask.hpp"

namespace bctx = boost::context::detail;

// The floor under every suspend/resume: two raw Boost.Context switches.
static void BM_FcontextRoundTrip(benchmark::State& state) {
  static std::vector<char> stack(64 * 1024);
  bctx::fcontext_t f = bctx::make_fcontext(stack.data() + stack.size(), stack.size(),
                                           [](bctx::transfer_t t) {
                                             for (;;) t = bctx::jump_fcontext(t.fctx, nullptr);
                                           });
  for (auto _ : state) f = bctx::jump_fcontext(f, nullptr).fctx;
}
BENCHMARK(BM_FcontextRoundTrip);

static void BM_DequePushPop(benchmark::State& state) {
  hytask::core::ws_deque<int*> d;
  int x = 0;
  for (auto _ : state) {
    d.push(&x);
    benchmark::DoNotOptimize(d.pop());
  }
}
BENCHMARK(BM_DequePushPop);

static void BM_DequePushSteal(benchmark::State& state) {
  hytask::core::ws_deque<int*> d;
  int x = 0;
  for (auto _ : state) {
    d.push(&x);
    benchmark::DoNotOptimize(d.steal());
  }
}
BENCHMARK(BM_DequePushSteal);

// Spawn + run + complete of an empty task on one worker, in batches of 1000.
static void BM_SpawnEmpty(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) hytask::spawn([] {});
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnEmpty);

// The same with two accesses that hit the tracker's fast path (inout a, in b).
static void BM_SpawnTwoDeps(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::uint64_t> slots(64, 1);
  std::uint64_t rng = 88172645463325252ull;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) {
      rng ^= rng << 13;
      rng ^= rng >> 7;
      rng ^= rng << 17;
      std::uint64_t* a = &slots[rng % 64];
      std::uint64_t* b = &slots[(rng >> 8) % 64];
      hytask::spawn([a, b] { *a += *b; }, hytask::inout(*a), hytask::in(*b));
    }
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnTwoDeps);

// Regions that partly overlap earlier ones: the tracker's split path.
static void BM_SpawnOverlappingRegions(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<char> buf(4096);
  std::uint64_t rng = 1;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) {
      rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
      std::size_t lo = (rng >> 33) % 4000, len = 1 + (rng >> 50) % 64;
      hytask::spawn([] {}, hytask::inout(buf.data() + lo, len));
    }
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnOverlappingRegions);

// Suspend + resume: two tasks on one worker yield to each other.
static void BM_YieldRoundTrip(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (auto _ : state) {
    for (int k = 0; k < 2; ++k)
      hytask::spawn([] {
        for (int i = 0; i < 1000; ++i) hytask::this_task::yield();
      });
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 2000);
}
BENCHMARK(BM_YieldRoundTrip);

// Event wait (suspend) + set (resume) between two tasks on one worker.
static void BM_EventWaitSet(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (auto _ : state) {
    std::vector<hytask::event> ev(1000);
    for (auto& e : ev) {
      hytask::spawn([&e] { e.wait(); });
      hytask::spawn([&e] { e.set(); });
    }
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_EventWaitSet);

// A parallel_for with one chunk per worker: the fork-join cost, two workers.
static void BM_ForkJoin(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 2});
  for (auto _ : state) hytask::parallel_for(0, 4, [](int i) { benchmark::DoNotOptimize(i); });
}
BENCHMARK(BM_ForkJoin);

BENCHMARK_MAIN();
