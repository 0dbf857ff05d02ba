// The checks every variant's factorisation goes through, on rank 0 over the gathered matrix:
// the scaled residual ‖A − Q·R‖_F / (‖A‖_F·N·ε) and the loss of orthogonality
// ‖I − QᵀQ‖_F / (N·ε), with ε = 2⁻⁵³. R is the upper triangle of the factor's first N rows;
// Q is explicit, M × N: for the hytask variant formed from its reflectors and T factors with
// the same tile kernels (form_q), for ScaLAPACK by pdorgqr. Both norms need Q itself, not
// only its action, so rank 0 holds about 4·M·N + 2·N² doubles while it checks (the gathered
// factor, Q as tiles and dense, A − Q·R, R and QᵀQ; A is regenerated element by element):
// small and medium sizes, --no-check beyond.
#include <cblas.h>
#include <mpi.h>

#include <cfloat>
#include <cmath>
#include <vector>

#include "qr.hpp"

namespace qr {

namespace {

// Column-major M × N (leading dimension M) of the tiles' matrix part.
std::vector<double> dense(const tile_set& t, const shape& s, long rows, long cols) {
  std::vector<double> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (long c = 0; c < cols; ++c)
    for (long r = 0; r < rows; ++r)
      out[static_cast<std::size_t>(r + c * rows)] =
          t.tile(static_cast<std::size_t>(r / s.nb), static_cast<std::size_t>(c / s.nb))
              [static_cast<std::size_t>(r % s.nb) + static_cast<std::size_t>(c % s.nb) * t.mb];
  return out;
}

check_result measure(const tile_set& q_tiles, const tile_set& f, const options& o) {
  const shape s = shape_of(o);
  const long m = s.m, n = s.n;
  const auto mz = static_cast<std::size_t>(m);
  const auto nz = static_cast<std::size_t>(n);
  std::vector<double> q = dense(q_tiles, s, m, n);
  std::vector<double> r = dense(f, s, n, n);
  for (std::size_t c = 0; c < nz; ++c)
    for (std::size_t i = c + 1; i < nz; ++i) r[i + c * nz] = 0.0;  // the reflectors below
  // E := A − Q·R (Q·R by dtrmm on a copy of Q: R is upper triangular).
  std::vector<double> e = q;
  cblas_dtrmm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, static_cast<int>(m),
              static_cast<int>(n), 1.0, r.data(), static_cast<int>(n), e.data(), static_cast<int>(m));
  double norm_e = 0, norm_a = 0;
  for (std::size_t c = 0; c < nz; ++c)
    for (std::size_t i = 0; i < mz; ++i) {
      const double a = element(static_cast<long>(i), static_cast<long>(c), o.seed);
      const double d = a - e[i + c * mz];
      norm_a += a * a;
      norm_e += d * d;
    }
  // G := QᵀQ (upper triangle), then ‖I − G‖_F over the whole symmetric matrix.
  std::vector<double> g(nz * nz, 0.0);
  cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, static_cast<int>(n), static_cast<int>(m), 1.0, q.data(),
              static_cast<int>(m), 0.0, g.data(), static_cast<int>(n));
  double norm_g = 0;
  for (std::size_t c = 0; c < nz; ++c)
    for (std::size_t i = 0; i <= c; ++i) {
      const double d = (i == c ? 1.0 : 0.0) - g[i + c * nz];
      norm_g += i == c ? d * d : 2 * d * d;
    }
  const double eps = DBL_EPSILON / 2;  // LAPACK's relative machine precision, 2^-53
  check_result res;
  res.residual = std::sqrt(norm_e) / (std::sqrt(norm_a) * static_cast<double>(n) * eps);
  res.orthogonality = std::sqrt(norm_g) / (static_cast<double>(n) * eps);
  return res;
}

check_result share(check_result r) {
  double v[2] = {r.residual, r.orthogonality};
  MPI_Bcast(v, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return {v[0], v[1]};
}

}  // namespace

check_result check_tiled(const matrix& f, const matrix& t, const matrix& t2, const options& o) {
  tile_set ft = gather(f), tt = gather(t), tt2 = gather(t2);
  check_result r;
  if (!ft.data.empty()) r = measure(form_q(ft, tt, tt2, shape_of(o), f.grid_rows()), ft, o);
  return share(r);
}

check_result check_explicit(const matrix& f, const matrix& q, const options& o) {
  tile_set ft = gather(f), qt = gather(q);
  check_result r;
  if (!ft.data.empty()) r = measure(qt, ft, o);
  return share(r);
}

}  // namespace qr
