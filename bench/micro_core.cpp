// Micro-benchmarks of the core's hot paths, one thread unless stated (Google Benchmark).
//   bench_micro --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <boost/context/detail/fcontext.hpp>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/sched/deque.hpp"
#include "core/sched/fifo_levels.hpp"
#include "platform/idle_meter.hpp"
#include "core/sched/ready_heap.hpp"
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

// The ready queue of key-0 tasks: one push and one take on a level (the owner's path).
static void BM_FifoLevelPushTake(benchmark::State& state) {
  hytask::core::fifo_levels q;
  alignas(64) static hytask::detail::task t;
  for (auto _ : state) {
    q.push(&t, 1);
    benchmark::DoNotOptimize(q.take());
  }
}
BENCHMARK(BM_FifoLevelPushTake);

// The heap of prioritised tasks: push and pop with 64 tasks queued.
static void BM_ReadyHeapPushPop(benchmark::State& state) {
  hytask::core::ready_heap h;
  static hytask::detail::task t[65];
  for (int i = 0; i < 64; ++i) h.push(&t[i], i % 7);
  std::int64_t key = 0, k = 0;
  for (auto _ : state) {
    h.push(&t[64], ++k % 7);
    benchmark::DoNotOptimize(h.pop(hytask::core::ready_heap::empty_key, key));
  }
}
BENCHMARK(BM_ReadyHeapPushPop);

// Spawn + run + complete with 20 priority levels, one worker, batches of 1000.
static void BM_SpawnPriorities(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) hytask::spawn({.priority = (i * 7) % 20 - 10}, [] {});
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnPriorities);

// fib(20) with a task per call, one worker: spawn, wait_all (suspend), resume.
static long micro_fib(int n) {
  if (n < 2) return n;
  long a = 0, b = 0;
  hytask::spawn([&a, n] { a = micro_fib(n - 1); });
  hytask::spawn([&b, n] { b = micro_fib(n - 2); });
  hytask::wait_all();
  return a + b;
}
static void BM_Fib20(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  for (auto _ : state) {
    long r = 0;
    hytask::spawn([&r] { r = micro_fib(20); });
    hytask::wait_all();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * 21891);  // calls of fib(20)
}
BENCHMARK(BM_Fib20);

// Spawn 1000 empty tasks on `threads` workers and wait for them, per iteration.
static void spawn_empty(benchmark::State& state, unsigned threads) {
  hytask::runtime rt(hytask::config{.threads = threads});
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) hytask::spawn([] {});
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
// Spawn + run + complete of an empty task on one worker, in batches of 1000.
static void BM_SpawnEmpty(benchmark::State& state) { spawn_empty(state, 1); }
BENCHMARK(BM_SpawnEmpty);

// The same on two workers: main spawns, the other worker steals and runs most tasks, so a
// record makes the round trip between the cores (written by main, run and freed on the
// other core, reused by main) that a worker's record cache and prefetches are for.
static void BM_SpawnEmptyTwoWorkers(benchmark::State& state) { spawn_empty(state, 2); }
BENCHMARK(BM_SpawnEmptyTwoWorkers)->UseRealTime();

// The same with the callable users write most, three words (`[&a, &b, i]`: 24 bytes, the
// most a record's first line holds beside its header), so that a task is one line to move.
static void BM_SpawnThreeWordsTwoWorkers(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 2});
  std::atomic<long> a{0};
  long b = 0;
  for (auto _ : state) {
    for (long i = 0; i < 1000; ++i)
      hytask::spawn([&a, &b, i] {
        if (i < 0) a.fetch_add(b, std::memory_order_relaxed);  // never: keeps the captures
      });
    hytask::wait_all();
  }
  benchmark::DoNotOptimize(a.load());
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnThreeWordsTwoWorkers)->UseRealTime();

// Two random slots of 64 (xorshift): the accesses of the two-dependency cases.
static std::pair<std::uint64_t*, std::uint64_t*> two_slots(std::vector<std::uint64_t>& slots,
                                                           std::uint64_t& rng) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return {&slots[rng % 64], &slots[(rng >> 8) % 64]};
}

// The same with two accesses that hit the tracker's fast path (inout a, in b).
static void BM_SpawnTwoDeps(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::uint64_t> slots(64, 1);
  std::uint64_t rng = 88172645463325252ull;
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) {
      auto [a, b] = two_slots(slots, rng);
      hytask::spawn([a, b] { *a += *b; }, hytask::inout(*a), hytask::in(*b));
    }
    hytask::wait_all();
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnTwoDeps);

// The same 1000 tasks and accesses recorded once as a hytask::graph, then run: a task costs
// its creation by the worker that completed its last predecessor, with no tracking.
static void graph_two_deps(benchmark::State& state, unsigned threads) {
  hytask::runtime rt(hytask::config{.threads = threads});
  std::vector<std::uint64_t> slots(64, 1);
  std::uint64_t rng = 88172645463325252ull;
  hytask::graph g;
  for (int i = 0; i < 1000; ++i) {
    auto [a, b] = two_slots(slots, rng);
    g.add([a, b] { *a += *b; }, hytask::inout(*a), hytask::in(*b));
  }
  for (auto _ : state) g.run();
  state.SetItemsProcessed(state.iterations() * 1000);
}
static void BM_GraphTwoDeps(benchmark::State& state) { graph_two_deps(state, 1); }
BENCHMARK(BM_GraphTwoDeps);
static void BM_GraphTwoDepsTwoWorkers(benchmark::State& state) { graph_two_deps(state, 2); }
BENCHMARK(BM_GraphTwoDepsTwoWorkers)->UseRealTime();

// A stencil of width 8 and 250 steps (each task reads its two neighbours of the step
// before), recorded once and run on two workers with each placement
// (HYTASK_GRAPH_PLACEMENT): stealing, where a task that crosses between the cores pays the
// shared count, the queue and its record; and owner placement, where it pays one message.
// And width 64 for 1000 steps with owner placement: 64,000 tasks, whose entries, bodies and
// successor lists (about 5 MB) outgrow a core's cache, so that a task pays for them unless
// they are fetched ahead (graph_owner.cpp, count_one).
static void graph_stencil(benchmark::State& state, hytask::graph_placement placement,
                          int width = 8, int steps = 250) {
  hytask::runtime rt(hytask::config{.threads = 2, .graph_placement = placement});
  // Two buffers: step t reads one and writes the other. A cell per cache line, as a task's
  // output would be.
  struct alignas(64) cell {
    std::uint64_t v = 1;
  };
  std::vector<cell> buf[2] = {std::vector<cell>(width), std::vector<cell>(width)};
  hytask::graph g;
  for (int t = 0; t < steps; ++t)
    for (int i = 0; i < width; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const std::size_t l = (k + width - 1) % width, r = (k + 1) % width;
      const std::vector<cell>& in = buf[t % 2];
      std::vector<cell>& out = buf[(t + 1) % 2];
      g.add([&in, &out, k, l, r] { out[k].v = in[l].v + 3 * in[k].v + in[r].v; },
            hytask::in(in[l]), hytask::in(in[k]), hytask::in(in[r]), hytask::out(out[k]));
    }
  for (auto _ : state) g.run();
  benchmark::DoNotOptimize(buf[0].data());
  state.SetItemsProcessed(state.iterations() * width * steps);
}
static void BM_GraphStencilSteal(benchmark::State& state) {
  graph_stencil(state, hytask::graph_placement::steal);
}
BENCHMARK(BM_GraphStencilSteal)->UseRealTime();
static void BM_GraphStencilOwner(benchmark::State& state) {
  graph_stencil(state, hytask::graph_placement::owner);
}
BENCHMARK(BM_GraphStencilOwner)->UseRealTime();
static void BM_GraphStencilOwnerLarge(benchmark::State& state) {
  graph_stencil(state, hytask::graph_placement::owner, 64, 1000);
}
BENCHMARK(BM_GraphStencilOwnerLarge)->UseRealTime();

// 1000 independent tasks recorded once: a run executes their bodies in line, in ranges
// split whenever a worker looks for work (graph.cpp), so a task costs a call, not a record.
// Beside it the same 1000 bodies spawned, and a plain loop: the floor.
static void graph_independent(benchmark::State& state, unsigned threads) {
  hytask::runtime rt(hytask::config{.threads = threads});
  std::vector<std::uint64_t> slots(1000, 1);
  hytask::graph g;
  for (std::size_t i = 0; i < slots.size(); ++i) g.add([p = &slots[i]] { *p = *p * 3 + 1; });
  for (auto _ : state) g.run();
  benchmark::DoNotOptimize(slots.data());
  state.SetItemsProcessed(state.iterations() * 1000);
}
static void BM_GraphIndependent(benchmark::State& state) { graph_independent(state, 1); }
BENCHMARK(BM_GraphIndependent);
static void BM_GraphIndependentTwoWorkers(benchmark::State& state) { graph_independent(state, 2); }
BENCHMARK(BM_GraphIndependentTwoWorkers)->UseRealTime();
static void BM_SpawnIndependent(benchmark::State& state) {
  hytask::runtime rt(hytask::config{.threads = 1});
  std::vector<std::uint64_t> slots(1000, 1);
  for (auto _ : state) {
    for (std::size_t i = 0; i < slots.size(); ++i) hytask::spawn([p = &slots[i]] { *p = *p * 3 + 1; });
    hytask::wait_all();
  }
  benchmark::DoNotOptimize(slots.data());
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_SpawnIndependent);

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

// What a progress thread pays per look to know whether the compute left a core idle (an OMP
// session's thread, each wake): a monotonic and a process CPU-time clock read.
static void BM_IdleMeterLook(benchmark::State& state) {
  hytask::core::idle_meter m(1);
  for (auto _ : state) benchmark::DoNotOptimize(m.idle());
}
BENCHMARK(BM_IdleMeterLook);

BENCHMARK_MAIN();
