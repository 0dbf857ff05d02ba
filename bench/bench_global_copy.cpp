// hytask::copy (hytask/global/algorithm.hpp) of contiguous ranges of a global_array<double>
// owned by another rank, beside plain MPI_Get / MPI_Put + MPI_Win_flush of the same bytes on
// a window of the same size, interleaved in one run. Rank 0 copies from and to the last
// rank's block; the other ranks wait.
//
//   mpiexec -n 2 build/bench/bench_global_copy [--min-bytes B] [--max-bytes B] [--reps R]
//
// Prints `bench_global_copy op=get|put bytes=... variant=hytask|mpi us=... gbs=...` lines
// (median time of R transfers of each, each timed alone, the two variants alternating).
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(call) + " failed");
}

int run(int argc, char** argv) {
  long min_bytes = 1024, max_bytes = 16L << 20;
  int reps = 21;
  hytask_cli::command_line cli("bench_global_copy", "[options]   (under mpiexec, 2 ranks or more)",
                               "hytask::copy of a global_array range from and to another rank, beside plain "
                               "MPI_Get / MPI_Put + MPI_Win_flush of the same bytes.");
  cli.integer("--min-bytes", min_bytes, 8, 1L << 30, "the smallest range, in bytes (default 1024)");
  cli.integer("--max-bytes", max_bytes, 8, 1L << 30, "the largest range, in bytes; sizes grow 4x (default 16 MiB)");
  cli.integer("--reps", reps, 1, 100000, "transfers of each size and variant; the median is printed (default 21)");
  if (!cli.parse(argc, argv)) return 0;
  if (min_bytes > max_bytes) throw hytask_cli::usage_error("--min-bytes is above --max-bytes");

  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  if (size < 2) throw hytask_cli::usage_error("run it on 2 ranks or more (mpiexec -n 2)");
  const auto elems = static_cast<std::size_t>(max_bytes) / sizeof(double);
  // Every rank owns `elems` elements: the last rank's block is the source and destination.
  hytask::global_array<double> a(elems * static_cast<std::size_t>(size));
  for (std::size_t k = 0; k < a.local().size(); ++k) a.lbegin()[k] = static_cast<double>(a.local_begin() + k);
  double* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  check_mpi(MPI_Win_allocate(static_cast<MPI_Aint>(elems * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &base, &win), "MPI_Win_allocate");
  check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
  for (std::size_t k = 0; k < elems; ++k) base[k] = static_cast<double>(k);
  hytask::mpi::barrier();

  if (rank == 0) {
    const int target = size - 1;
    const hytask::global_ptr<double> block = a.begin() + static_cast<std::ptrdiff_t>(elems) * target;
    std::vector<double> buf(elems, 1.0);
    for (long bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
      const auto n = static_cast<std::size_t>(bytes) / sizeof(double);
      for (const char* op : {"get", "put"}) {
        const bool get = op[0] == 'g';
        std::vector<double> th, tm;
        for (int r = 0; r < reps; ++r) {
          double t0 = now_s();
          if (get) hytask::copy(block, block + static_cast<std::ptrdiff_t>(n), buf.data());
          else hytask::copy(buf.data(), buf.data() + n, block);
          th.push_back(now_s() - t0);
          t0 = now_s();
          if (get) check_mpi(MPI_Get(buf.data(), static_cast<int>(n), MPI_DOUBLE, target, 0, static_cast<int>(n),
                                     MPI_DOUBLE, win), "MPI_Get");
          else check_mpi(MPI_Put(buf.data(), static_cast<int>(n), MPI_DOUBLE, target, 0, static_cast<int>(n),
                                 MPI_DOUBLE, win), "MPI_Put");
          check_mpi(MPI_Win_flush(target, win), "MPI_Win_flush");
          tm.push_back(now_s() - t0);
        }
        for (const auto& [variant, t] : {std::pair{"hytask", median(th)}, std::pair{"mpi", median(tm)}})
          std::printf("bench_global_copy op=%s bytes=%ld variant=%s us=%.2f gbs=%.3f ranks=%d\n", op, bytes, variant,
                      1e6 * t, static_cast<double>(bytes) / t * 1e-9, size);
        std::fflush(stdout);
      }
    }
  }
  hytask::mpi::barrier();
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return hytask_cli::main_frame("bench_global_copy", [&] { return run(argc, argv); }); }
