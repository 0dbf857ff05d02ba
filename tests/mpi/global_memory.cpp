// Memory of the global layer stays bounded however long the program (issue 17): 100 phases
// of 10,000 tasks per rank. Even phases update this rank's elements (local global
// accesses, many tasks per element: the local rule chains them); odd phases read the next
// rank's elements (remote accesses: announcements, releases and completions). The resident
// size may grow while the window of active phases fills, then must stay flat: it is
// measured after phase 20 and after the last, and the growth between must stay under the
// limit — a leak of 16 bytes per task would exceed 16 MiB. The test runs with a window of 2
// phases (HYTASK_PHASE_WINDOW=2): with 8, up to 80,000 tasks are alive at once, and the
// allocator keeps the high-water mark of their records (about 1 KiB each), which a later,
// higher peak raises by tens of MiB however nothing leaks. The final values check that
// every update ran, in order.
//
//   global_memory [phases] [tasks per phase] [limit MiB]
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../unit/test_util.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const int phases = argc > 1 ? std::atoi(argv[1]) : 100;
  const int per_phase = argc > 2 ? std::atoi(argv[2]) : 10000;
  const long limit_kib = (argc > 3 ? std::atol(argv[3]) : 16) * 1024;
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  constexpr std::size_t block = 1024;

  hytask::global_array<long> a(static_cast<std::size_t>(size) * block);
  for (long& v : a.local()) v = 0;
  hytask::wait_all();
  const std::size_t mine = static_cast<std::size_t>(rank) * block;
  const std::size_t next = static_cast<std::size_t>((rank + 1) % size) * block;

  long base = 0, peak_alive = 0;
  std::vector<long> sink(block, 0);
  for (int p = 0; p < phases; ++p) {
    if (p % 2 == 0) {
      for (int k = 0; k < per_phase; ++k) {
        auto x = a[mine + static_cast<std::size_t>(k) % block];
        hytask::spawn([x] { ++*x.local_data(); }, hytask::inout(x));
      }
    } else if (size > 1) {
      for (int k = 0; k < per_phase; ++k) {
        const std::size_t i = static_cast<std::size_t>(k) % block;
        hytask::spawn([&sink, i] { ++sink[i]; }, hytask::in(a[next + i]),
                      hytask::inout(sink[i]));
      }
    }
    hytask::fence();
    peak_alive = std::max<long>(peak_alive, static_cast<long>(hytask::global_stats().tasks_alive));
    if (p == 20) {
      malloc_trim(0);
      base = hytask_test::current_rss_kib();
    }
  }
  hytask::wait_all();
  malloc_trim(0);
  const long grown = hytask_test::current_rss_kib() - base;
  const hytask::global_counters c = hytask::global_stats();

  int bad = 0;
  const long even = (phases + 1) / 2;
  for (std::size_t i = 0; i < block; ++i) {
    const long per = per_phase / static_cast<long>(block) +
                     (static_cast<long>(i) < per_phase % static_cast<long>(block) ? 1 : 0);
    if (a.local()[i] != even * per && bad++ < 5)
      std::fprintf(stderr, "global_memory: rank %d: element %zu is %ld, want %ld\n", rank, mine + i,
                   a.local()[i], even * per);
  }
  if (grown > limit_kib) {
    ++bad;
    std::fprintf(stderr, "global_memory: rank %d: resident size grew by %ld KiB from phase 20 to "
                 "phase %d (limit %ld KiB)\n", rank, grown, phases, limit_kib);
  }
  if (c.tasks_alive != 0 || c.nodes_alive != 0 || c.chains_alive != 0) {
    ++bad;
    std::fprintf(stderr, "global_memory: rank %d: state left after wait_all (%zu tasks, %zu nodes, "
                 "%zu chains)\n", rank, c.tasks_alive, c.nodes_alive, c.chains_alive);
  }
  std::printf("global_memory: rank %d: %d phases x %d tasks; grew %ld KiB after phase 20; at most "
              "%ld global tasks alive at a fence; %llu announcements, %llu buffers sent\n",
              rank, phases, per_phase, grown, peak_alive,
              static_cast<unsigned long long>(c.announces_sent),
              static_cast<unsigned long long>(c.buffers_sent));
  int all = 0;
  hytask::mpi::allreduce(&bad, &all, 1, MPI_INT, MPI_SUM);
  if (all != 0) {
    if (rank == 0) std::fprintf(stderr, "global_memory: FAIL\n");
    return 1;
  }
  if (rank == 0) std::printf("global_memory: bounded, ok\n");
  return 0;
}
