// The machine's DGEMM rate, as the applications report it beside their own: every rank runs
// `threads` single-threaded DGEMMs of order n at once, `calls` times in a row; the best of
// three rounds, summed over the ranks. Needs OpenBLAS's cblas.h (the applications that
// link BLAS).
#pragma once

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

namespace hytask_apps {

inline double dgemm_peak(MPI_Comm world, int threads, int n, CBLAS_TRANSPOSE trans_b, int calls = 1) {
  const auto elems = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<std::vector<double>> a(threads), b(threads), c(threads);
  for (int t = 0; t < threads; ++t) {
    a[t].assign(elems, 0.25);
    b[t].assign(elems, 0.5);
    c[t].assign(elems, 0.0);
  }
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    MPI_Barrier(world);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    auto one = [&](int t) {
      for (int k = 0; k < calls; ++k)
        cblas_dgemm(CblasColMajor, CblasNoTrans, trans_b, n, n, n, 1.0, a[t].data(), n, b[t].data(), n, 0.0,
                    c[t].data(), n);
    };
    for (int t = 1; t < threads; ++t) pool.emplace_back(one, t);
    one(0);
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, threads * calls * 2.0 * double(n) * n * n / s / 1e9);
  }
  double sum = 0;
  MPI_Allreduce(&best, &sum, 1, MPI_DOUBLE, MPI_SUM, world);
  return sum;
}

}  // namespace hytask_apps
