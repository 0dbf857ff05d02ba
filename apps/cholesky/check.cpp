// The checks every variant's factor goes through: the scaled residual ‖A − L·Lᵀ‖_F /
// (‖A‖_F·N·ε) over the whole symmetric matrix, computed with hytask tasks on global
// dependencies (R := A − Σ_k L(:,k)·L(:,k)ᵀ tile by tile, a phase per k, L's tiles of other
// ranks read through copyin); and, for the hytask variant, the comparison with a sequential
// run of the same kernels in the same order.
#include <cblas.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "cholesky.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace chol {

namespace {

// Sum of squares of this rank's tiles on and below the diagonal of m, counting each element
// below the diagonal twice (the whole symmetric matrix).
double local_sum_of_squares(const matrix& m) {
  const std::size_t ld = m.mb();
  double s = 0;
  for (std::size_t i = 0; i < m.tile_rows(); ++i)
    for (std::size_t j = 0; j <= i; ++j)
      if (const double* t = m.tile(i, j).local_data())
        for (std::size_t c = 0; c < m.tile_width(j); ++c)
          for (std::size_t r = (i == j ? c : 0); r < m.tile_height(i); ++r) {
            const double x = t[r + c * ld];
            s += (i == j && r == c) ? x * x : 2 * x * x;
          }
  return s;
}

}  // namespace

double scaled_residual(const matrix& a, const matrix& l, const options& o) {
  const std::size_t nt = a.tile_rows();
  const int ld = static_cast<int>(a.mb());
  const std::size_t tile = a.mb() * a.nb();
  matrix r(a.rows(), a.cols(), a.mb(), a.nb(), a.grid_rows(), a.grid_cols());
  copy_local(a, r);
  std::vector<std::vector<double>> col[2];
  for (auto& c : col) c.assign(nt, std::vector<double>(tile));
  auto dim = [](std::size_t x) { return static_cast<int>(x); };
  for (std::size_t k = 0; k < nt; ++k) {
    const std::size_t b = k % 2;
    const int wk = dim(a.tile_width(k));
    for (std::size_t i = k; i < nt; ++i)
      for (std::size_t j = k; j <= i; ++j) {
        auto rij = r.tile(i, j);
        if (!rij.is_local()) continue;
        auto lik = l.tile(i, k), ljk = l.tile(j, k);
        const int hi = dim(a.tile_height(i)), wj = dim(a.tile_width(j));
        double* p = rij.local_data();
        const double* x = col[b][i].data();
        const double* y = col[b][j].data();
        if (j > k) {  // L(i,k), L(j,k) full tiles
          hytask::spawn([=] {
            if (i == j) cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, hi, wk, -1.0, x, ld, 1.0, p, ld);
            else cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, hi, wj, wk, -1.0, x, ld, y, ld, 1.0, p, ld);
          }, hytask::copyin(lik, col[b][i]), hytask::copyin(ljk, col[b][j]), hytask::inout(rij));
        } else if (i > k) {  // R(i,k) -= L(i,k)·L(k,k)ᵀ, L(k,k) lower triangular
          hytask::spawn([=] {
            std::vector<double> t(x, x + static_cast<std::size_t>(ld) * static_cast<std::size_t>(wk));
            cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, hi, wk, 1.0, y, ld,
                        t.data(), ld);
            for (int c = 0; c < wk; ++c)
              for (int q = 0; q < hi; ++q) p[q + c * ld] -= t[static_cast<std::size_t>(q + c * ld)];
          }, hytask::copyin(lik, col[b][i]), hytask::copyin(ljk, col[b][j]), hytask::inout(rij));
        } else {  // R(k,k) -= L(k,k)·L(k,k)ᵀ
          hytask::spawn([=] {
            std::vector<double> t(static_cast<std::size_t>(ld) * static_cast<std::size_t>(wk), 0.0);
            for (int c = 0; c < wk; ++c)
              for (int q = c; q < hi; ++q) t[static_cast<std::size_t>(q + c * ld)] = x[q + c * ld];
            cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, hi, wk, -1.0, t.data(), ld, 1.0, p, ld);
          }, hytask::copyin(lik, col[b][i]), hytask::inout(rij));
        }
      }
    hytask::fence();
  }
  hytask::wait_all();
  double sums[2] = {local_sum_of_squares(r), local_sum_of_squares(a)}, all[2] = {0, 0};
  hytask::mpi::allreduce(sums, all, 2, MPI_DOUBLE, MPI_SUM);
  const double eps = DBL_EPSILON / 2;  // LAPACK's relative machine precision, 2^-53
  return std::sqrt(all[0]) / (std::sqrt(all[1]) * static_cast<double>(o.n) * eps);
}

long sequential_mismatches(const matrix& l, const options& o) {
  const std::size_t nt = l.tile_rows(), ld = l.mb();
  std::vector<std::vector<double>> t(nt * nt);
  auto tile = [&](std::size_t i, std::size_t j) { return t[i * nt + j].data(); };
  auto dim = [](std::size_t x) { return static_cast<int>(x); };
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      t[i * nt + j].assign(ld * l.nb(), 0.0);
      for (std::size_t c = 0; c < l.tile_width(j); ++c)
        for (std::size_t r = 0; r < l.tile_height(i); ++r)
          tile(i, j)[r + c * ld] = element(static_cast<long>(i * ld + r), static_cast<long>(j * l.nb() + c), o.n,
                                           o.seed, o.not_spd);
    }
  const int ldi = dim(ld);
  for (std::size_t k = 0; k < nt; ++k) {
    const int wk = dim(l.tile_width(k));
    potrf(tile(k, k), wk, ldi);
    for (std::size_t i = k + 1; i < nt; ++i) trsm(tile(k, k), ldi, tile(i, k), ldi, dim(l.tile_height(i)), wk);
    for (std::size_t i = k + 1; i < nt; ++i)
      for (std::size_t j = k + 1; j <= i; ++j) {
        if (i == j) syrk(tile(i, k), ldi, tile(i, i), ldi, dim(l.tile_height(i)), wk);
        else gemm(tile(i, k), ldi, tile(j, k), ldi, tile(i, j), ldi, dim(l.tile_height(i)), dim(l.tile_width(j)), wk);
      }
  }
  long bad = 0;
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      if (const double* d = l.tile(i, j).local_data())
        for (std::size_t c = 0; c < l.tile_width(j); ++c)
          for (std::size_t r = 0; r < l.tile_height(i); ++r)
            if (std::memcmp(&d[r + c * ld], &tile(i, j)[r + c * ld], sizeof(double)) != 0) ++bad;
  return bad;
}

}  // namespace chol
