// apps/cholesky's hytask variant as the simulator sees it: the same loop nest, the same
// accesses (copyin_r of the step's panel into two buffer sets by step parity), three phases
// per step, on a P × Q block-cyclic grid.
#include <stdexcept>

#include "program.hpp"

namespace hytask::sim {

namespace {

enum kernel { potrf, trsm, syrk, gemm };

generator<op> cholesky_program(cholesky_size s, grid g, int me) {
  const auto nt = static_cast<std::size_t>(s.n / s.nb);
  const auto tb = static_cast<std::uint64_t>(s.nb) * static_cast<std::uint64_t>(s.nb) * sizeof(double);
  const auto pp = static_cast<std::size_t>(g.p), qq = static_cast<std::size_t>(g.q);
  const auto my_row = static_cast<std::size_t>(me / g.q), my_col = static_cast<std::size_t>(me % g.q);
  auto tile = [&](std::size_t i, std::size_t j) { return place{tile_key(0, i * nt + j), g.owner(i, j), tb}; };
  auto kk = [&](std::size_t b) { return place{buffer_key(1, b), -1, tb}; };
  auto col = [&](std::size_t b, std::size_t i) { return place{buffer_key(2, b * nt + i), -1, tb}; };
  // The first index >= from in this rank's process row (or column).
  auto first = [](std::size_t from, std::size_t mine, std::size_t stride) {
    return from + (mine + stride - from % stride) % stride;
  };
  for (std::size_t k = 0; k < nt; ++k) {
    const std::size_t b = k % 2;
    if (g.owner(k, k) == me) co_yield spawn(potrf, inout(tile(k, k)));
    co_yield fence();
    if (k % qq == my_col)
      for (std::size_t i = first(k + 1, my_row, pp); i < nt; i += pp)
        co_yield spawn(trsm, copyin_r(tile(k, k), kk(b)), inout(tile(i, k)));
    co_yield fence();
    for (std::size_t i = first(k + 1, my_row, pp); i < nt; i += pp)
      for (std::size_t j = first(k + 1, my_col, qq); j <= i; j += qq) {
        if (i == j)
          co_yield spawn(syrk, copyin_r(tile(i, k), col(b, i)), inout(tile(i, i)));
        else
          co_yield spawn(gemm, copyin_r(tile(i, k), col(b, i)), copyin_r(tile(j, k), col(b, j)), inout(tile(i, j)));
      }
    co_yield fence();
  }
  co_yield wait_all();
}

class cholesky final : public app_model {
 public:
  cholesky(cholesky_size s, grid g) : s_(s), g_(g) {
    if (s.nb <= 0 || s.n <= 0 || s.n % s.nb != 0)
      throw std::invalid_argument("hytask-sim: cholesky needs N a positive multiple of NB (N " + std::to_string(s.n) +
                                  ", NB " + std::to_string(s.nb) + ")");
  }
  std::string name() const override { return "cholesky"; }
  const std::vector<std::string>& kernels() const override { return names_; }
  double flops() const override {
    const double n = static_cast<double>(s_.n);
    return n * n * n / 3;
  }
  int ranks() const override { return g_.ranks(); }
  generator<op> program(int rank) const override { return cholesky_program(s_, g_, rank); }
  std::uint64_t bytes(std::uint64_t) const override {
    return static_cast<std::uint64_t>(s_.nb) * static_cast<std::uint64_t>(s_.nb) * sizeof(double);
  }

 private:
  cholesky_size s_;
  grid g_;
  std::vector<std::string> names_{"potrf", "trsm", "syrk", "gemm"};
};

}  // namespace

std::unique_ptr<app_model> make_cholesky(cholesky_size s, grid g) { return std::make_unique<cholesky>(s, g); }

}  // namespace hytask::sim
