// The tiled algorithm in one process: the elimination order every variant and check follows,
// the sequential factorisation (the reference the hytask variant is compared with, bit for
// bit: the same kernels see the same tiles in the same order), and the explicit Q.
#include <cstring>

#include "qr.hpp"

namespace qr {

std::vector<std::vector<std::size_t>> elimination_groups(std::size_t k, std::size_t mt, int p) {
  const auto pp = static_cast<std::size_t>(p);
  std::vector<std::vector<std::size_t>> groups(pp);
  for (std::size_t i = k + 1; i < mt; ++i) groups[(i - k) % pp].push_back(i);  // process row (k + g) mod P
  return groups;
}

void factor_sequential(tile_set& a, tile_set& t, tile_set& t2, const shape& s, int p) {
  const int ld = s.nb, ldt = s.ib;
  for (std::size_t k = 0; k < s.nt; ++k) {
    const int mk = s.height(k), nk = s.width(k);
    geqrt(a.tile(k, k), ld, t.tile(k, k), ldt, mk, nk, s.ib);
    for (std::size_t j = k + 1; j < s.nt; ++j)
      gemqrt('T', a.tile(k, k), ld, t.tile(k, k), ldt, a.tile(k, j), ld, mk, s.width(j), nk, s.ib);
    for (const auto& group : elimination_groups(k, s.mt, p))
      for (std::size_t i : group) {
        tsqrt(a.tile(k, k), ld, a.tile(i, k), ld, t2.tile(i, k), ldt, s.height(i), nk, s.ib);
        for (std::size_t j = k + 1; j < s.nt; ++j)
          tsmqr('T', a.tile(i, k), ld, t2.tile(i, k), ldt, a.tile(k, j), ld, a.tile(i, j), ld, s.height(i),
                s.width(j), nk, s.ib);
      }
  }
}

tile_set form_q(const tile_set& a, const tile_set& t, const tile_set& t2, const shape& s, int p) {
  tile_set q(s.mt, s.nt, static_cast<std::size_t>(s.nb), static_cast<std::size_t>(s.nb));
  for (long d = 0; d < s.n; ++d) {
    const auto tile = static_cast<std::size_t>(d / s.nb), at = static_cast<std::size_t>(d % s.nb);
    q.tile(tile, tile)[at + at * q.mb] = 1.0;
  }
  const int ld = s.nb, ldt = s.ib;
  // Q = Q_1 · Q_2 ⋯ Q_L in the order the factorisation applied Q_lᵀ: Q_L first. Columns left
  // of step k are still those of I there, zero in the rows step k touches.
  for (std::size_t k = s.nt; k-- > 0;) {
    const int mk = s.height(k), nk = s.width(k);
    const auto groups = elimination_groups(k, s.mt, p);
    for (auto g = groups.rbegin(); g != groups.rend(); ++g)
      for (auto i = g->rbegin(); i != g->rend(); ++i)
        for (std::size_t j = k; j < s.nt; ++j)
          tsmqr('N', a.tile(*i, k), ld, t2.tile(*i, k), ldt, q.tile(k, j), ld, q.tile(*i, j), ld, s.height(*i),
                s.width(j), nk, s.ib);
    for (std::size_t j = k; j < s.nt; ++j)
      gemqrt('N', a.tile(k, k), ld, t.tile(k, k), ldt, q.tile(k, j), ld, mk, s.width(j), nk, s.ib);
  }
  return q;
}

long sequential_mismatches(const matrix& a, const matrix& t, const matrix& t2, const options& o) {
  const shape s = shape_of(o);
  const auto nb = static_cast<std::size_t>(o.nb), ib = static_cast<std::size_t>(o.ib);
  tile_set ra(s.mt, s.nt, nb, nb), rt(s.mt, s.nt, ib, nb), rt2(s.mt, s.nt, ib, nb);
  for (std::size_t i = 0; i < s.mt; ++i)
    for (std::size_t j = 0; j < s.nt; ++j)
      for (int c = 0; c < s.width(j); ++c)
        for (int r = 0; r < s.height(i); ++r)
          ra.tile(i, j)[static_cast<std::size_t>(r) + static_cast<std::size_t>(c) * nb] =
              element(static_cast<long>(i * nb) + r, static_cast<long>(j * nb) + c, o.seed);
  factor_sequential(ra, rt, rt2, s, a.grid_rows());
  long bad = 0;
  auto differ = [](const double* x, const double* y) { return std::memcmp(x, y, sizeof(double)) != 0; };
  for (std::size_t i = 0; i < s.mt; ++i)
    for (std::size_t j = 0; j < s.nt; ++j) {
      if (const double* d = a.tile(i, j).local_data())
        for (int c = 0; c < s.width(j); ++c)
          for (int r = 0; r < s.height(i); ++r) {
            const std::size_t at = static_cast<std::size_t>(r) + static_cast<std::size_t>(c) * nb;
            if (differ(&d[at], &ra.tile(i, j)[at])) ++bad;
          }
      // The T factors: geqrt's on the diagonal, tsqrt's below; the rest stays zero.
      const double* d1 = t.tile(i, j).local_data();
      const double* d2 = t2.tile(i, j).local_data();
      for (std::size_t e = 0; d1 && e < ib * nb; ++e) bad += differ(&d1[e], &rt.tile(i, j)[e]);
      for (std::size_t e = 0; d2 && e < ib * nb; ++e) bad += differ(&d2[e], &rt2.tile(i, j)[e]);
    }
  return bad;
}

}  // namespace qr
