// apps/qr's hytask variant as the simulator sees it: the flat tree by process-row groups
// (qr::elimination_groups, the application's own), R_kk and row k travelling through the
// workspaces wr and wrow, P + 3 phases per step, the same copyin / copyin_r buffers.
#include <stdexcept>

#include "../../apps/qr/qr.hpp"
#include "program.hpp"

namespace hytask::sim {

namespace {

enum kernel { geqrt, gemqrt, tsqrt, tsmqr, copy };
enum matrix_id : unsigned { a_id, t_id, t2_id, wr_id, wrow_id };
enum buffer_id : unsigned { kk_id = 10, tk_id, rload_id, rback_id, v_id, tv_id, rowload_id, rowback_id };

generator<op> qr_program(qr_size s, grid g, int me) {
  const long m = s.m == 0 ? s.n : s.m;
  const auto mt = static_cast<std::size_t>(m / s.nb), nt = static_cast<std::size_t>(s.n / s.nb);
  const auto nbb = static_cast<std::uint64_t>(s.nb);
  const std::uint64_t tb = nbb * nbb * sizeof(double), ttb = static_cast<std::uint64_t>(s.ib) * nbb * sizeof(double);
  const auto pp = static_cast<std::size_t>(g.p), qq = static_cast<std::size_t>(g.q);
  const auto my_col = static_cast<std::size_t>(me % g.q);
  const std::size_t cols = std::max(nt, std::size_t{1});
  auto at = [&](unsigned id, std::size_t i, std::size_t j) {
    return place{tile_key(id, i * cols + j), g.owner(i, j), id == t_id || id == t2_id ? ttb : tb};
  };
  auto buf = [&](unsigned id, std::size_t b, std::size_t i) {
    return place{buffer_key(id, b * std::max(mt, nt) + i), -1, id == tk_id || id == tv_id ? ttb : tb};
  };
  auto mine = [&](const place& p) { return p.owner == me; };

  struct whereabouts {
    long r = -1, row = -1;  // -1: in A; p: in the workspace row of process row p
  };
  auto r_at = [&](std::size_t k, const whereabouts& w) {
    return w.r < 0 ? at(a_id, k, k) : at(wr_id, static_cast<std::size_t>(w.r), k);
  };
  auto row_at = [&](std::size_t k, std::size_t j, const whereabouts& w) {
    return w.row < 0 ? at(a_id, k, j) : at(wrow_id, static_cast<std::size_t>(w.row), j);
  };
  // Columns j > k of this rank's process column.
  auto my_cols = [&](std::size_t k) {
    std::vector<std::size_t> js;
    for (std::size_t j = k + 1 + (my_col + qq - (k + 1) % qq) % qq; j < nt; j += qq) js.push_back(j);
    return js;
  };

  whereabouts last;
  for (std::size_t k = 0; k <= nt; ++k) {
    // Phase 0: the previous step's R and row k back into A, and geqrt.
    if (k > 0) {
      const std::size_t kb = k - 1, b = kb % 2;
      if (last.r >= 0 && mine(at(a_id, kb, kb)))
        co_yield spawn(copy, copyin(r_at(kb, last), buf(rback_id, b, 0)), inout(at(a_id, kb, kb)));
      if (last.row >= 0)
        for (std::size_t j : my_cols(kb))
          if (mine(at(a_id, kb, j)))
            co_yield spawn(copy, copyin(row_at(kb, j, last), buf(rowback_id, b, j)),
                                  inout(at(a_id, kb, j)));
    }
    if (k == nt) break;
    const std::size_t b = k % 2;
    const auto groups = qr::elimination_groups(k, mt, g.p);
    const place akk = at(a_id, k, k), tkk = at(t_id, k, k);
    if (mine(akk)) co_yield spawn(geqrt, inout(akk), inout(tkk));
    co_yield fence();

    // Phase 1: row k by geqrt's reflectors.
    for (std::size_t j : my_cols(k)) {
      const place akj = at(a_id, k, j);
      if (!mine(akj)) continue;
      co_yield spawn(gemqrt, copyin(akk, buf(kk_id, b, 0)), copyin_r(tkk, buf(tk_id, b, 0)),
                              inout(akj));
    }
    co_yield fence();

    // Phases 2 .. P + 2: group g's column chain beside group g - 1's updates.
    whereabouts now;
    for (std::size_t gi = 0; gi <= pp; ++gi) {
      if (gi < pp && !groups[gi].empty()) {
        const auto prow = static_cast<long>((k + gi) % pp);
        const whereabouts here{gi == 0 ? -1 : prow, now.row};
        const place r = r_at(k, here);
        if (mine(r)) {
          if (gi > 0)
            co_yield spawn(copy, copyin(r_at(k, now), buf(rload_id, b, 0)), inout(r));
          for (std::size_t i : groups[gi])
            co_yield spawn(tsqrt, inout(r), inout(at(a_id, i, k)), inout(at(t2_id, i, k)));
        }
        now.r = here.r;
      }
      if (gi >= 1 && !groups[gi - 1].empty()) {
        const std::size_t u = gi - 1;
        const whereabouts here{now.r, u == 0 ? -1 : static_cast<long>((k + u) % pp)};
        for (std::size_t j : my_cols(k)) {
          const place row = row_at(k, j, here);
          if (!mine(row)) continue;
          if (u > 0)
            co_yield spawn(copy, copyin(row_at(k, j, now), buf(rowload_id, b, j)), inout(row));
          for (std::size_t i : groups[u])
            co_yield spawn(tsmqr, copyin_r(at(a_id, i, k), buf(v_id, b, i)),
                                   copyin_r(at(t2_id, i, k), buf(tv_id, b, i)),
                                   inout(row),
                                   inout(at(a_id, i, j)));
        }
        now.row = here.row;
      }
      co_yield fence();
    }
    last = now;
  }
  co_yield wait_all();
}

class qr_app final : public app_model {
 public:
  qr_app(qr_size s, grid g) : s_(s), g_(g) {
    const long m = s.m == 0 ? s.n : s.m;
    if (s.nb <= 0 || s.n <= 0 || s.n % s.nb != 0 || m % s.nb != 0 || m < s.n || s.ib <= 0 || s.nb % s.ib != 0)
      throw std::invalid_argument("hytask-sim: qr needs M >= N, both positive multiples of NB, and IB dividing NB "
                                  "(M " + std::to_string(m) + ", N " + std::to_string(s.n) + ", NB " +
                                  std::to_string(s.nb) + ", IB " + std::to_string(s.ib) + ")");
  }
  std::string name() const override { return "qr"; }
  const std::vector<std::string>& kernels() const override { return names_; }
  double flops() const override {
    const double m = static_cast<double>(s_.m == 0 ? s_.n : s_.m), n = static_cast<double>(s_.n);
    return 2 * n * n * (m - n / 3);
  }
  int ranks() const override { return g_.ranks(); }
  generator<op> program(int rank) const override { return qr_program(s_, g_, rank); }
  std::uint64_t bytes(std::uint64_t key) const override {
    const unsigned id = static_cast<unsigned>((key >> 40) & 0x7fffff);
    const auto nb = static_cast<std::uint64_t>(s_.nb);
    return (id == t_id || id == t2_id ? static_cast<std::uint64_t>(s_.ib) : nb) * nb * sizeof(double);
  }

 private:
  qr_size s_;
  grid g_;
  std::vector<std::string> names_{"geqrt", "gemqrt", "tsqrt", "tsmqr", "copy"};
};

}  // namespace

std::unique_ptr<app_model> make_qr(qr_size s, grid g) { return std::make_unique<qr_app>(s, g); }

}  // namespace hytask::sim
