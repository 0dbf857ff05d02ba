// The distributed matrix: grid, block-cyclic layout, generation, back substitution and
// HPL's residual check.
#include <cblas.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <new>

#include "app_support.hpp"
#include "hpl.hpp"

namespace hpl {

grid::grid(int p_, int q_, MPI_Comm w) : p(p_), q(q_), world(w) {
  MPI_Comm_rank(w, &rank);
  MPI_Comm_size(w, &size);
  row = rank / q;
  col = rank % q;
  MPI_Comm_split(w, row, col, &row_comm);
  MPI_Comm_split(w, col, row, &col_comm);
}

grid::~grid() {
  if (row_comm != MPI_COMM_NULL) MPI_Comm_free(&row_comm);
  if (col_comm != MPI_COMM_NULL) MPI_Comm_free(&col_comm);
}

long count_below(long g, int nb, int ip, int np) {
  const long cycle = long(nb) * np;
  const long full = (g / cycle) * nb;
  const long rem = g % cycle - long(ip) * nb;
  return full + std::clamp(rem, 0L, long(nb));
}

matrix::matrix(const grid& g_, long n_, int nb_) : g(g_), n(n_), nb(nb_) {
  mloc = count_below(n, nb, g.row, g.p);
  nloc = count_below(n + 1, nb, g.col, g.q);
  lda = std::max(1L, mloc);
  std::size_t bytes = sizeof(double) * std::size_t(lda) * std::size_t(std::max(1L, nloc));
  bytes = (bytes + 63) / 64 * 64;
  a = static_cast<double*>(std::aligned_alloc(64, bytes));
  if (!a) throw std::bad_alloc();
}

matrix::~matrix() { std::free(a); }

using hytask_apps::splitmix;

double element(std::uint64_t seed, long n, long i, long j, bool singular) {
  if (singular && j == n / 2) return 0.0;
  const std::uint64_t z = splitmix(seed * 0xD1B54A32D192ED03ull + std::uint64_t(i) * std::uint64_t(n + 1) + j);
  return double(z >> 11) * 0x1.0p-53 - 0.5;
}

void generate(matrix& m, std::uint64_t seed, bool singular) {
  const grid& g = m.g;
  for (long lj = 0; lj < m.nloc; ++lj) {
    const long gj = global_of(lj, m.nb, g.col, g.q);
    double* c = m.col(lj);
    for (long li = 0; li < m.mloc; ++li) c[li] = element(seed, m.n, global_of(li, m.nb, g.row, g.p), gj, singular);
  }
}

panel panel_at(const matrix& m, long k, double* storage) {
  panel p;
  p.k = k;
  p.r0 = k * m.nb;
  p.jb = static_cast<int>(std::min<long>(m.nb, m.n - p.r0));
  p.lr2 = count_below(p.r0 + p.jb, m.nb, m.g.row, m.g.p);
  p.ml2 = m.mloc - p.lr2;
  p.base = storage;
  return p;
}

long panel_capacity(const matrix& m) {
  const long jb = std::min<long>(m.nb, m.n);
  return jb + jb * jb + m.mloc * jb;
}

long ubuf_capacity(const matrix& m) { return long(m.nb) * std::max(1L, m.nloc); }

long trailing_begin(const matrix& m, const panel& p) { return count_below(p.r0 + p.jb, m.nb, m.g.col, m.g.q); }

void block_columns(const matrix& m, long b, long lc_from, long& lc0, long& lc1) {
  lc0 = lc1 = 0;
  if (b * m.nb > m.n || owner_of(b * m.nb, m.nb, m.g.q) != m.g.col) return;
  const long begin = std::max(count_below(b * m.nb, m.nb, m.g.col, m.g.q), lc_from);
  const long end = std::min(count_below((b + 1) * m.nb, m.nb, m.g.col, m.g.q), m.nloc);
  if (begin < end) {
    lc0 = begin;
    lc1 = end;
  }
}

// Column-oriented blocked back substitution. Each process accumulates, for its rows, the
// products of its solved columns (w); the diagonal block's process row sums them (with y)
// onto the diagonal process, which solves and sends x_k down its column.
std::vector<double> solve(const matrix& m) {
  const grid& g = m.g;
  const int nb = m.nb;
  const int qb = owner_of(m.n, nb, g.q);  // the process column of b (now y)
  const double* y = g.col == qb ? m.col(count_below(m.n, nb, g.col, g.q)) : nullptr;
  std::vector<double> w(std::max(1L, m.mloc), 0.0), xk(nb), v(nb), x(m.n, 0.0);
  for (long kb = m.panels() - 1; kb >= 0; --kb) {
    const long r0 = kb * nb;
    const int jb = static_cast<int>(std::min<long>(nb, m.n - r0));
    const int pr = owner_of(r0, nb, g.p), pc = owner_of(r0, nb, g.q);
    const long lr = count_below(r0, nb, g.row, g.p), lc = count_below(r0, nb, g.col, g.q);
    if (g.row == pr) {
      for (int i = 0; i < jb; ++i) v[i] = (y ? y[lr + i] : 0.0) - w[lr + i];
      if (g.q > 1)
        MPI_Reduce(g.col == pc ? MPI_IN_PLACE : v.data(), v.data(), jb, MPI_DOUBLE, MPI_SUM, pc, g.row_comm);
      if (g.col == pc) {
        std::copy_n(v.data(), jb, xk.data());
        cblas_dtrsv(CblasColMajor, CblasUpper, CblasNoTrans, CblasNonUnit, jb, m.col(lc) + lr, m.lda, xk.data(), 1);
      }
    }
    if (g.col == pc) {
      if (g.p > 1) MPI_Bcast(xk.data(), jb, MPI_DOUBLE, pr, g.col_comm);
      if (lr > 0) cblas_dgemv(CblasColMajor, CblasNoTrans, lr, jb, 1.0, m.col(lc), m.lda, xk.data(), 1, 1.0, w.data(), 1);
      if (g.row == 0) std::copy_n(xk.data(), jb, x.data() + r0);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(m.n), MPI_DOUBLE, MPI_SUM, g.world);
  return x;
}

residual check(const matrix& m, std::uint64_t seed, bool singular, const std::vector<double>& x) {
  const grid& g = m.g;
  // r = A x - b and the row sums of |A| for my rows, summed over the grid.
  std::vector<double> r(2 * m.n, 0.0);
  double bmax = 0;
  for (long lj = 0; lj < m.nloc; ++lj) {
    const long gj = global_of(lj, m.nb, g.col, g.q);
    for (long li = 0; li < m.mloc; ++li) {
      const long gi = global_of(li, m.nb, g.row, g.p);
      const double a = element(seed, m.n, gi, gj, singular);
      if (gj < m.n) {
        r[gi] += a * x[gj];
        r[m.n + gi] += std::fabs(a);
      } else {
        r[gi] -= a;
        bmax = std::max(bmax, std::fabs(a));
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, r.data(), static_cast<int>(r.size()), MPI_DOUBLE, MPI_SUM, g.world);
  MPI_Allreduce(MPI_IN_PLACE, &bmax, 1, MPI_DOUBLE, MPI_MAX, g.world);
  double rmax = 0, amax = 0, xmax = 0;
  bool finite = true;  // std::max would hide a NaN
  for (long i = 0; i < m.n; ++i) {
    finite = finite && std::isfinite(r[i]) && std::isfinite(x[i]);
    rmax = std::max(rmax, std::fabs(r[i]));
    amax = std::max(amax, r[m.n + i]);
    xmax = std::max(xmax, std::fabs(x[i]));
  }
  const double eps = DBL_EPSILON / 2;  // HPL's relative machine precision
  residual res;
  res.scaled = rmax / (eps * (amax * xmax + bmax) * double(m.n));
  if (!finite) res.scaled = NAN;
  res.passed = finite && res.scaled < 16.0;
  return res;
}

}  // namespace hpl
