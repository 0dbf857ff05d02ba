// The hytask variant: seed 001's Listing 2.5 (tiled Cholesky on global dependencies), lower
// triangular, with the listing's by-reference capture of the loop indices fixed (the tasks
// capture them by value, as Appendix B does). The owner of a tile runs the tasks that write
// it; a tile of another rank is read through copyin_r, which the runtime transfers once per
// phase into this rank's buffer (two sets, by step parity, so that step k + 1's transfers
// need not wait for step k's readers). Three phases per step, as in the listing: the fences
// make every cross-rank dependency unambiguous. No priorities are given: the runtime puts
// the tasks whose results other ranks wait for (potrf, trsm) in its communication class.
#include <atomic>
#include <chrono>
#include <climits>
#include <vector>

#include "cholesky.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace chol {

namespace {
void note_failure(std::atomic<long>& first, long order) {
  long cur = first.load();
  while (order < cur && !first.compare_exchange_weak(cur, order)) {
  }
}
}  // namespace

factor_result factor_hytask(matrix& a, const options& o) {
  const std::size_t nt = a.tile_rows();
  const int ld = static_cast<int>(a.mb());
  const std::size_t tile = a.mb() * a.nb();
  std::vector<double> kk[2] = {std::vector<double>(tile), std::vector<double>(tile)};
  std::vector<std::vector<double>> col[2];
  for (auto& c : col) c.assign(nt, std::vector<double>(tile));
  std::atomic<long> failed{LONG_MAX};
  auto dim = [](std::size_t x) { return static_cast<int>(x); };

  hytask::mpi::barrier();
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < nt; ++k) {
    const std::size_t b = k % 2;
    const int wk = dim(a.tile_width(k));
    auto tkk = a.tile(k, k);
    if (tkk.is_local())
      hytask::spawn(
          [p = tkk.local_data(), wk, ld, k, nb = o.nb, &failed] {
            if (const int info = potrf(p, wk, ld)) note_failure(failed, static_cast<long>(k) * nb + info);
          },
          hytask::inout(tkk));
    hytask::fence();
    for (std::size_t i = k + 1; i < nt; ++i) {
      auto tik = a.tile(i, k);
      if (!tik.is_local()) continue;
      hytask::spawn(
          [l = tkk.local_or(kk[b].data()), p = tik.local_data(), hi = dim(a.tile_height(i)), wk, ld] {
            trsm(l, ld, p, ld, hi, wk);
          },
          hytask::copyin_r(tkk, kk[b]), hytask::inout(tik));
    }
    hytask::fence();
    for (std::size_t i = k + 1; i < nt; ++i) {
      auto tik = a.tile(i, k);
      const double* aik = tik.local_or(col[b][i].data());
      for (std::size_t j = k + 1; j <= i; ++j) {
        auto tij = a.tile(i, j);
        if (!tij.is_local()) continue;
        if (i == j) {
          hytask::spawn([aik, p = tij.local_data(), hi = dim(a.tile_height(i)), wk, ld] { syrk(aik, ld, p, ld, hi, wk); },
                        hytask::copyin_r(tik, col[b][i]), hytask::inout(tij));
        } else {
          auto tjk = a.tile(j, k);
          hytask::spawn(
              [aik, ajk = tjk.local_or(col[b][j].data()), p = tij.local_data(), hi = dim(a.tile_height(i)),
               wj = dim(a.tile_width(j)), wk, ld] { gemm(aik, ld, ajk, ld, p, ld, hi, wj, wk); },
              hytask::copyin_r(tik, col[b][i]), hytask::copyin_r(tjk, col[b][j]), hytask::inout(tij));
        }
      }
    }
    hytask::fence();
  }
  hytask::wait_all();
  factor_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const long f = failed.load();
  r.failed_order = f == LONG_MAX ? 0 : f;
  return r;
}

}  // namespace chol
