// A halo exchange whose communication overlaps computation: a 2-D Jacobi sweep over a grid
// split into bands of rows, one band per rank, each band cut into blocks of rows.
//
//   mpiexec -n 4 build/examples/halo_exchange [--rows R] [--cols C] [--iters T] [--block B]
//
// Every iteration is a set of tasks, ordered by the rows they read and write:
//   send_up / send_down   send the band's first / last row to the neighbour;
//   recv_up / recv_down   receive the neighbour's row into the ghost row above / below;
//   compute (one per block) reads its rows and the rows around them in the old grid and
//                         writes its rows of the new grid.
// Only the two blocks at the edges of the band read ghost rows, so every other block runs
// while the messages are in flight, and the edge blocks start as soon as their ghost row is
// in. The send and receive tasks of successive iterations use the same (peer, tag) but
// different buffers: they declare hytask::mpi::send_channel(peer, tag) and
// recv_channel(peer, tag) so that they post in iteration order (docs/mpi.md, "Ordering").
//
// At the end, rank 0 gathers the grid and compares it with a sequential sweep: the results
// must be bit-identical.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

double initial(long g, long j) { return static_cast<double>((g * 31 + j * 17) % 101) / 101.0; }
constexpr double top_value = 1.0;     // the fixed row above the grid
constexpr double bottom_value = 0.0;  // and below it

// One Jacobi update of rows [r0, r1) of a (rows + 2) x cols array with ghost rows 0, rows + 1.
void sweep(const double* old, double* nw, long cols, long r0, long r1) {
  for (long i = r0; i < r1; ++i)
    for (long j = 1; j < cols - 1; ++j)
      nw[i * cols + j] = 0.25 * (old[(i - 1) * cols + j] + old[(i + 1) * cols + j] +
                                 old[i * cols + j - 1] + old[i * cols + j + 1]);
}

// Fills a band of `n` rows starting at global row `first`, with its ghost rows.
void fill(std::vector<double>& a, long first, long n, long cols, bool top, bool bottom) {
  for (long i = 1; i <= n; ++i)
    for (long j = 0; j < cols; ++j) a[i * cols + j] = initial(first + i - 1, j);
  for (long j = 0; j < cols; ++j) {
    if (top) a[j] = top_value;
    if (bottom) a[(n + 1) * cols + j] = bottom_value;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long rows = 512, cols = 512, iters = 50, block = 32;
  for (int i = 1; i < argc; ++i) {  // before the runtime: a bad option ends every rank alike
    std::string a = argv[i];
    auto next = [&] { return example::option_value("halo_exchange", argc, argv, i); };
    if (a == "--rows") rows = next();
    else if (a == "--cols") cols = next();
    else if (a == "--iters") iters = next();
    else if (a == "--block") block = next();
    else {
      std::fprintf(stderr, "usage: halo_exchange [--rows R] [--cols C] [--iters T] [--block B]\n");
      return 2;
    }
  }
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  if (rows < size || cols < 3 || iters < 0 || block < 1) {
    if (rank == 0)
      std::fprintf(stderr, "halo_exchange: need rows >= ranks (%d), cols >= 3, iters >= 0, block >= 1\n",
                   size);
    return 2;
  }
  // This rank's band: rows [first, first + n) of the grid.
  const long n = rows / size + (rank < rows % size ? 1 : 0);
  const long first = rank * (rows / size) + std::min<long>(rank, rows % size);
  const int up = rank > 0 ? rank - 1 : -1;
  const int down = rank + 1 < size ? rank + 1 : -1;
  std::vector<double> grid[2] = {std::vector<double>((n + 2) * cols), std::vector<double>((n + 2) * cols)};
  for (auto& g : grid) fill(g, first, n, cols, up < 0, down < 0);

  hytask::mpi::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (long t = 0; t < iters; ++t) {
    double* old = grid[t & 1].data();
    double* nw = grid[(t + 1) & 1].data();
    auto row = [cols](double* a, long i) { return std::span<double>(a + i * cols, cols); };
    if (up >= 0) {
      hytask::spawn({.name = "send_up"}, [=] { hytask::mpi::send(row(old, 1), up, 0); },
                    hytask::in(old + cols, cols), hytask::mpi::send_channel(up, 0));
      hytask::spawn({.name = "recv_up"}, [=] { hytask::mpi::recv(row(old, 0), up, 1); },
                    hytask::out(old, cols), hytask::mpi::recv_channel(up, 1));
    }
    if (down >= 0) {
      hytask::spawn({.name = "send_down"}, [=] { hytask::mpi::send(row(old, n), down, 1); },
                    hytask::in(old + n * cols, cols), hytask::mpi::send_channel(down, 1));
      hytask::spawn({.name = "recv_down"}, [=] { hytask::mpi::recv(row(old, n + 1), down, 0); },
                    hytask::out(old + (n + 1) * cols, cols), hytask::mpi::recv_channel(down, 0));
    }
    for (long r0 = 1; r0 <= n; r0 += block) {
      const long r1 = std::min(n + 1, r0 + block);
      hytask::spawn({.name = "compute"}, [=] { sweep(old, nw, cols, r0, r1); },
                    hytask::in(old + (r0 - 1) * cols, (r1 - r0 + 2) * cols),
                    hytask::out(nw + r0 * cols, (r1 - r0) * cols));
    }
  }
  hytask::wait_all();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Gather the bands on rank 0 and compare with a sequential sweep of the whole grid.
  const std::vector<double>& mine = grid[iters & 1];
  std::vector<int> counts(size), displs(size);
  for (int r = 0; r < size; ++r) {
    counts[r] = static_cast<int>((rows / size + (r < rows % size ? 1 : 0)) * cols);
    displs[r] = static_cast<int>((r * (rows / size) + std::min<long>(r, rows % size)) * cols);
  }
  std::vector<double> all(rank == 0 ? rows * cols : 0);
  hytask::mpi::gatherv(mine.data() + cols, static_cast<int>(n * cols), MPI_DOUBLE, all.data(),
                       counts.data(), displs.data(), MPI_DOUBLE, 0);
  if (rank != 0) return 0;
  std::vector<double> ref[2] = {std::vector<double>((rows + 2) * cols), std::vector<double>((rows + 2) * cols)};
  for (auto& g : ref) fill(g, 0, rows, cols, true, true);
  for (long t = 0; t < iters; ++t) sweep(ref[t & 1].data(), ref[(t + 1) & 1].data(), cols, 1, rows + 1);
  long differ = 0;
  for (long i = 0; i < rows * cols; ++i) differ += all[i] != ref[iters & 1][cols + i];
  std::printf("halo exchange: %d ranks, %ld x %ld grid, %ld iterations, blocks of %ld rows: %.3f s\n",
              size, rows, cols, iters, block, seconds);
  std::printf("compared with a sequential sweep: %s (%ld values differ)\n",
              differ == 0 ? "bit-identical, ok" : "DIFFERENT", differ);
  return differ == 0 ? 0 : 1;
}
