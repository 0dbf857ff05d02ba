// The ScaLAPACK variant: pdpotrf on the same block-cyclic distribution (block size NB, the
// P × Q grid in row-major order, as tiled_matrix deals its tiles), from ScaLAPACK's own local
// layout: this rank's tiles are copied in before and out after, outside the timed region.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cholesky.hpp"
#include "scalapack_grid.hpp"

#if HYTASK_HAVE_SCALAPACK
extern "C" {
void pdpotrf_(const char* uplo, const int* n, double* a, const int* ia, const int* ja, const int* desc,
              int* info);
}
#endif

namespace chol {

#if HYTASK_HAVE_SCALAPACK

factor_result factor_scalapack(matrix& a, const options& o) {
  const int P = a.grid_rows(), Q = a.grid_cols();
  const int n = static_cast<int>(o.n), nb = o.nb, one = 1;
  hytask_apps::scalapack_matrix sm(P, Q, n, n, nb);
  const int lld = sm.lld;
  std::vector<double>& local = sm.local;
  const int* desc = sm.desc;
  int info = 0;

  // Tile (i, j) of this rank is ScaLAPACK's local block (i / P, j / Q).
  const std::size_t ld = a.mb();
  auto each_local_tile = [&](auto&& f) {
    for (std::size_t i = 0; i < a.tile_rows(); ++i)
      for (std::size_t j = 0; j <= i; ++j)
        if (double* t = a.tile(i, j).local_data())
          f(t, (i / static_cast<std::size_t>(P)) * ld, (j / static_cast<std::size_t>(Q)) * ld,
            a.tile_height(i), a.tile_width(j));
  };
  each_local_tile([&](double* t, std::size_t r0, std::size_t c0, std::size_t h, std::size_t w) {
    for (std::size_t c = 0; c < w; ++c)
      std::memcpy(&local[r0 + (c0 + c) * static_cast<std::size_t>(lld)], t + c * ld, h * sizeof(double));
  });

  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  pdpotrf_("L", &n, local.data(), &one, &one, desc, &info);
  MPI_Barrier(MPI_COMM_WORLD);
  factor_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (info < 0) throw std::runtime_error("pdpotrf: argument " + std::to_string(-info) + " is invalid");
  r.failed_order = info;

  each_local_tile([&](double* t, std::size_t r0, std::size_t c0, std::size_t h, std::size_t w) {
    for (std::size_t c = 0; c < w; ++c)
      std::memcpy(t + c * ld, &local[r0 + (c0 + c) * static_cast<std::size_t>(lld)], h * sizeof(double));
  });
  return r;
}

#else

factor_result factor_scalapack(matrix&, const options&) {
  throw std::logic_error("the scalapack variant was not built");
}

#endif

}  // namespace chol
