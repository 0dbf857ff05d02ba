// The hytask variant: the tiled Householder QR of Buttari et al. on global dependencies. The
// owner of a tile runs the tasks that write it; tiles of other ranks are read through copyin
// or copyin_r, which the runtime transfers once per phase into this rank's buffers (two sets,
// by step parity, so that step k + 1's transfers need not wait for step k's readers).
//
// The TS kernels write two tiles at once — tsqrt R_kk and A_ik, tsmqr A_kj and A_ij — which
// live on different ranks when P > 1, and a location written by one rank may not be accessed
// by another in the same phase. So the flat tree eliminates the rows below k grouped by
// process row (elimination_groups), and R_kk and row k travel: group 0 (the process row of
// tile (k, k)) works on them in place; group g > 0 loads them (copyin) into its own workspace
// tiles, wr(p, k) for R and wrow(p, j) for row k, on the rank that owns its tiles of column k
// and of column j, and works there; the last group's R and row go back into A (copyin) in the
// next step's first phase. Phases per step k (p_g = (k + g) mod P, I_g its rows):
//
//   0        geqrt(k, k); the copy-back of step k − 1's R and row
//   1        gemqrt(k, j), j > k: reads A_kk (copyin: a copy even on its owner, so that
//            group 0's tsqrt need not wait for these readers) and T_kk (copyin_r)
//   2 + g    tsqrt chain of group g (g < P); tsmqr of group g − 1 (g ≥ 1), reading its
//            V_ik and T2_ik with copyin_r — written by another rank in the phase before
//
// so P + 3 phases per step, each conflict-free: what a phase reads from another rank was
// written in an earlier one. Phases order only accesses to the same tile, so a step's tasks
// still start as soon as their own inputs are ready. No priorities are given.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "qr.hpp"

namespace qr {

factor_result factor_hytask(matrix& a, matrix& t, matrix& t2, const options& o) {
  const shape s = shape_of(o);
  const int P = a.grid_rows(), Q = a.grid_cols();
  const auto pp = static_cast<std::size_t>(P);
  const int ld = o.nb, ldt = o.ib;
  const std::size_t tile = a.mb() * a.nb(), ttile = t.mb() * t.nb();
  const std::size_t nb = a.nb();
  // Workspaces of groups g > 0: row p of wr holds R, row p of wrow row k, on the ranks of
  // process row p (tile (p, j) is on the rank of column j mod Q, like A's tiles (i, j)).
  matrix wr(pp * nb, s.nt * nb, nb, nb, P, Q);
  matrix wrow(pp * nb, s.nt * nb, nb, nb, P, Q);
  auto buffers = [](std::size_t count, std::size_t size) {
    return std::vector<std::vector<double>>(count, std::vector<double>(size));
  };
  std::vector<double> kk[2] = {std::vector<double>(tile), std::vector<double>(tile)};
  std::vector<double> tk[2] = {std::vector<double>(ttile), std::vector<double>(ttile)};
  std::vector<double> rload[2] = {std::vector<double>(tile), std::vector<double>(tile)};
  std::vector<double> rback[2] = {std::vector<double>(tile), std::vector<double>(tile)};
  std::vector<std::vector<double>> v[2], tv[2], rowload[2], rowback[2];
  for (int b = 0; b < 2; ++b) {
    v[b] = buffers(s.mt, tile);
    tv[b] = buffers(s.mt, ttile);
    rowload[b] = buffers(s.nt, tile);
    rowback[b] = buffers(s.nt, tile);
  }

  // Where R_kk and row k are: in A (-1), or in the workspace row of process row p (p).
  struct whereabouts {
    long r = -1, row = -1;
  };
  auto r_at = [&](std::size_t k, const whereabouts& w) {
    return w.r < 0 ? a.tile(k, k) : wr.tile(static_cast<std::size_t>(w.r), k);
  };
  auto row_at = [&](std::size_t k, std::size_t j, const whereabouts& w) {
    return w.row < 0 ? a.tile(k, j) : wrow.tile(static_cast<std::size_t>(w.row), j);
  };
  // Step k's R and row k back into A, from the workspace of the last group that had rows.
  auto copy_back = [&](std::size_t k, const whereabouts& w) {
    const std::size_t b = k % 2;
    auto akk = a.tile(k, k);
    if (w.r >= 0 && akk.is_local())  // R only: the strict lower triangle holds geqrt's reflectors
      hytask::spawn(
          [dst = akk.local_data(), src = rback[b].data(), nk = s.width(k), ld] {
            for (int c = 0; c < nk; ++c)
              std::memcpy(dst + c * ld, src + c * ld, sizeof(double) * static_cast<std::size_t>(c + 1));
          },
          hytask::copyin(r_at(k, w), rback[b]), hytask::inout(akk));
    if (w.row >= 0)
      for (std::size_t j = k + 1; j < s.nt; ++j) {
        auto akj = a.tile(k, j);
        if (!akj.is_local()) continue;
        hytask::spawn([dst = akj.local_data(), src = rowback[b][j].data(), tile] {
          std::memcpy(dst, src, sizeof(double) * tile);
        }, hytask::copyin(row_at(k, j, w), rowback[b][j]), hytask::out(akj));
      }
  };

  hytask::mpi::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  whereabouts last;
  for (std::size_t k = 0; k < s.nt; ++k) {
    const std::size_t b = k % 2;
    const int mk = s.height(k), nk = s.width(k);
    const auto groups = elimination_groups(k, s.mt, P);
    auto akk = a.tile(k, k), tkk = t.tile(k, k);

    // Phase 0: geqrt, and the previous step's copy-back.
    if (k > 0) copy_back(k - 1, last);
    if (akk.is_local())
      hytask::spawn([pa = akk.local_data(), pt = tkk.local_data(), mk, nk, ld, ldt, ib = o.ib] {
        geqrt(pa, ld, pt, ldt, mk, nk, ib);
      }, hytask::inout(akk), hytask::out(tkk));
    hytask::fence();

    // Phase 1: row k by geqrt's reflectors.
    for (std::size_t j = k + 1; j < s.nt; ++j) {
      auto akj = a.tile(k, j);
      if (!akj.is_local()) continue;
      hytask::spawn(
          [pv = kk[b].data(), pt = tkk.local_or(tk[b].data()), pc = akj.local_data(), mk, nj = s.width(j), nk, ld,
           ldt, ib = o.ib] { gemqrt('T', pv, ld, pt, ldt, pc, ld, mk, nj, nk, ib); },
          hytask::copyin(akk, kk[b]), hytask::copyin_r(tkk, tk[b]), hytask::inout(akj));
    }
    hytask::fence();

    // Phases 2 .. P + 2: group g's column chain beside group g - 1's updates.
    whereabouts now;
    for (std::size_t g = 0; g <= pp; ++g) {
      if (g < pp && !groups[g].empty()) {
        const auto prow = static_cast<long>((k + g) % pp);
        const whereabouts here{g == 0 ? -1 : prow, now.row};
        auto r = r_at(k, here);
        if (r.is_local()) {  // then so are this group's tiles of column k
          if (g > 0)
            hytask::spawn([dst = r.local_data(), src = rload[b].data(), tile] {
              std::memcpy(dst, src, sizeof(double) * tile);
            }, hytask::copyin(r_at(k, now), rload[b]), hytask::out(r));
          for (std::size_t i : groups[g]) {
            auto aik = a.tile(i, k), tik = t2.tile(i, k);
            hytask::spawn([pr = r.local_data(), pb = aik.local_data(), pt = tik.local_data(), mi = s.height(i), nk,
                           ld, ldt, ib = o.ib] { tsqrt(pr, ld, pb, ld, pt, ldt, mi, nk, ib); },
                          hytask::inout(r), hytask::inout(aik), hytask::out(tik));
          }
        }
        now.r = here.r;
      }
      if (g >= 1 && !groups[g - 1].empty()) {
        const std::size_t u = g - 1;
        const whereabouts here{now.r, u == 0 ? -1 : static_cast<long>((k + u) % pp)};
        for (std::size_t j = k + 1; j < s.nt; ++j) {
          auto row = row_at(k, j, here);
          if (!row.is_local()) continue;  // else so are this group's tiles of column j
          if (u > 0)
            hytask::spawn([dst = row.local_data(), src = rowload[b][j].data(), tile] {
              std::memcpy(dst, src, sizeof(double) * tile);
            }, hytask::copyin(row_at(k, j, now), rowload[b][j]), hytask::out(row));
          for (std::size_t i : groups[u]) {
            auto aik = a.tile(i, k), tik = t2.tile(i, k), aij = a.tile(i, j);
            hytask::spawn(
                [pv = aik.local_or(v[b][i].data()), pt = tik.local_or(tv[b][i].data()), pa = row.local_data(),
                 pb = aij.local_data(), mi = s.height(i), nj = s.width(j), nk, ld, ldt, ib = o.ib] {
                  tsmqr('T', pv, ld, pt, ldt, pa, ld, pb, ld, mi, nj, nk, ib);
                },
                hytask::copyin_r(aik, v[b][i]), hytask::copyin_r(tik, tv[b][i]), hytask::inout(row),
                hytask::inout(aij));
          }
        }
        now.row = here.row;
      }
      hytask::fence();
    }
    last = now;
  }
  if (s.nt > 0) copy_back(s.nt - 1, last);
  hytask::wait_all();
  factor_result res;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace qr
