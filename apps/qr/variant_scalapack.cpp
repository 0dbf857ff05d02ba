// The ScaLAPACK variant: pdgeqrf on the same block-cyclic distribution (block size NB, the
// P × Q grid in row-major order, as tiled_matrix deals its tiles), from ScaLAPACK's own local
// layout: this rank's tiles are copied in before and out after, outside the timed region. For
// the checks, pdorgqr then forms the explicit Q (also outside the timed region).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "qr.hpp"
#include "scalapack_grid.hpp"

#if HYTASK_HAVE_SCALAPACK
extern "C" {
void pdgeqrf_(const int* m, const int* n, double* a, const int* ia, const int* ja, const int* desc, double* tau,
              double* work, const int* lwork, int* info);
void pdorgqr_(const int* m, const int* n, const int* k, double* a, const int* ia, const int* ja, const int* desc,
              const double* tau, double* work, const int* lwork, int* info);
}
#endif

namespace qr {

#if HYTASK_HAVE_SCALAPACK

factor_result factor_scalapack(matrix& a, matrix* q, const options& o) {
  const int P = a.grid_rows(), Q = a.grid_cols();
  const int m = static_cast<int>(o.m), n = static_cast<int>(o.n), nb = o.nb, one = 1;
  hytask_apps::scalapack_matrix sm(P, Q, m, n, nb);
  const int lld = sm.lld, nloc = sm.nloc;
  std::vector<double>& local = sm.local;
  const int* desc = sm.desc;
  int info = 0;
  std::vector<double> tau(static_cast<std::size_t>(std::max(1, nloc)));
  auto queried = [&](auto&& routine) {  // LAPACK's workspace query: lwork = -1
    double size = 0;
    const int query = -1;
    routine(&size, &query);
    return std::vector<double>(static_cast<std::size_t>(std::max(1.0, size)));
  };
  std::vector<double> work = queried([&](double* w, const int* lwork) {
    pdgeqrf_(&m, &n, local.data(), &one, &one, desc, tau.data(), w, lwork, &info);
  });
  const int lwork = static_cast<int>(work.size());

  // Tile (i, j) of this rank is ScaLAPACK's local block (i / P, j / Q).
  const std::size_t ld = a.mb();
  auto each_local_tile = [&](matrix& x, auto&& f) {
    for (std::size_t i = 0; i < x.tile_rows(); ++i)
      for (std::size_t j = 0; j < x.tile_cols(); ++j)
        if (double* t = x.tile(i, j).local_data())
          f(t, (i / static_cast<std::size_t>(P)) * ld, (j / static_cast<std::size_t>(Q)) * ld, x.tile_height(i),
            x.tile_width(j));
  };
  auto to_local = [&](double* t, std::size_t r0, std::size_t c0, std::size_t h, std::size_t w) {
    for (std::size_t c = 0; c < w; ++c)
      std::memcpy(&local[r0 + (c0 + c) * static_cast<std::size_t>(lld)], t + c * ld, h * sizeof(double));
  };
  auto from_local = [&](double* t, std::size_t r0, std::size_t c0, std::size_t h, std::size_t w) {
    for (std::size_t c = 0; c < w; ++c)
      std::memcpy(t + c * ld, &local[r0 + (c0 + c) * static_cast<std::size_t>(lld)], h * sizeof(double));
  };
  each_local_tile(a, to_local);

  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  pdgeqrf_(&m, &n, local.data(), &one, &one, desc, tau.data(), work.data(), &lwork, &info);
  MPI_Barrier(MPI_COMM_WORLD);
  factor_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (info != 0) throw std::runtime_error("pdgeqrf: argument " + std::to_string(-info) + " is invalid");
  each_local_tile(a, from_local);

  if (q) {
    std::vector<double> qwork = queried([&](double* w, const int* lw) {
      pdorgqr_(&m, &n, &n, local.data(), &one, &one, desc, tau.data(), w, lw, &info);
    });
    const int qlwork = static_cast<int>(qwork.size());
    pdorgqr_(&m, &n, &n, local.data(), &one, &one, desc, tau.data(), qwork.data(), &qlwork, &info);
    if (info != 0) throw std::runtime_error("pdorgqr: argument " + std::to_string(-info) + " is invalid");
    each_local_tile(*q, from_local);
  }
  return r;
}

#else

factor_result factor_scalapack(matrix&, matrix*, const options&) {
  throw std::logic_error("the scalapack variant was not built");
}

#endif

}  // namespace qr
