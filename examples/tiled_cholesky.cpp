// Tiled Cholesky factorisation (A = L L^T) as a graph of tasks with dependencies, timed
// beside the same kernels run sequentially in the same order. The task version must give
// bit-identical results (each tile sees the same updates in the same order), and the
// factor is checked by solving a system with it.
//
//   tiled_cholesky [--n N] [--tile B] [--threads T]   (shared memory; apps/cholesky is the
//   distributed one, on global dependencies)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "hytask/hytask.hpp"

namespace {

// A matrix of nt x nt tiles of b x b doubles, each tile contiguous (row-major inside).
struct tiled {
  int nt, b;
  std::vector<double> data;
  tiled(int nt_, int b_) : nt(nt_), b(b_), data(static_cast<std::size_t>(nt_) * nt_ * b_ * b_) {}
  double* tile(int i, int j) { return data.data() + (static_cast<std::size_t>(i) * nt + j) * b * b; }
  double& at(int r, int c) { return tile(r / b, c / b)[(r % b) * b + (c % b)]; }
};

// Kernels on b x b tiles (lower triangular factor).
void potrf(double* a, int b) {
  for (int k = 0; k < b; ++k) {
    double d = std::sqrt(a[k * b + k]);
    a[k * b + k] = d;
    for (int i = k + 1; i < b; ++i) a[i * b + k] /= d;
    for (int i = k + 1; i < b; ++i)
      for (int j = k + 1; j <= i; ++j) a[i * b + j] -= a[i * b + k] * a[j * b + k];
  }
}
// a := a * l^-T  (l lower triangular from potrf)
void trsm(const double* l, double* a, int b) {
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < b; ++j) {
      double s = a[i * b + j];
      for (int k = 0; k < j; ++k) s -= a[i * b + k] * l[j * b + k];
      a[i * b + j] = s / l[j * b + j];
    }
}
// c := c - a * a^T (lower part)
void syrk(const double* a, double* c, int b) {
  for (int i = 0; i < b; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int k = 0; k < b; ++k) s += a[i * b + k] * a[j * b + k];
      c[i * b + j] -= s;
    }
}
// c := c - a * b^T
void gemm(const double* a, const double* bm, double* c, int b) {
  for (int i = 0; i < b; ++i)
    for (int j = 0; j < b; ++j) {
      double s = 0;
      for (int k = 0; k < b; ++k) s += a[i * b + k] * bm[j * b + k];
      c[i * b + j] -= s;
    }
}

void fill_spd(tiled& m, int n) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c <= r; ++c) {
      double v = u(rng);
      if (r == c) v = std::abs(v) + n;  // diagonally dominant: positive definite
      m.at(r, c) = v;
      m.at(c, r) = v;
    }
}

void factor_sequential(tiled& m) {
  const int nt = m.nt, b = m.b;
  for (int k = 0; k < nt; ++k) {
    potrf(m.tile(k, k), b);
    for (int i = k + 1; i < nt; ++i) trsm(m.tile(k, k), m.tile(i, k), b);
    for (int i = k + 1; i < nt; ++i) {
      syrk(m.tile(i, k), m.tile(i, i), b);
      for (int j = k + 1; j < i; ++j) gemm(m.tile(i, k), m.tile(j, k), m.tile(i, j), b);
    }
  }
}

// The same loop nest; every kernel becomes a task that declares the tiles it reads and
// writes. hytask runs each kernel as soon as its inputs are final.
long factor_tasks(tiled& m) {
  const int nt = m.nt, b = m.b;
  const std::size_t tb = static_cast<std::size_t>(b) * b;
  long tasks = 0;
  for (int k = 0; k < nt; ++k) {
    double* kk = m.tile(k, k);
    hytask::spawn({.priority = 1, .name = "potrf"}, [kk, b] { potrf(kk, b); },
                  hytask::inout(kk, tb));
    ++tasks;
    for (int i = k + 1; i < nt; ++i) {
      double* ik = m.tile(i, k);
      hytask::spawn({.priority = 1, .name = "trsm"}, [kk, ik, b] { trsm(kk, ik, b); },
                    hytask::in(kk, tb), hytask::inout(ik, tb));
      ++tasks;
    }
    for (int i = k + 1; i < nt; ++i) {
      double* ik = m.tile(i, k);
      double* ii = m.tile(i, i);
      hytask::spawn({.name = "syrk"}, [ik, ii, b] { syrk(ik, ii, b); }, hytask::in(ik, tb),
                    hytask::inout(ii, tb));
      ++tasks;
      for (int j = k + 1; j < i; ++j) {
        double* jk = m.tile(j, k);
        double* ij = m.tile(i, j);
        hytask::spawn({.name = "gemm"}, [ik, jk, ij, b] { gemm(ik, jk, ij, b); },
                      hytask::in(ik, tb), hytask::in(jk, tb), hytask::inout(ij, tb));
        ++tasks;
      }
    }
  }
  hytask::wait_all();
  return tasks;
}

// Solves L L^T x = rhs with the factor and returns max |x - x_true|.
double solve_error(tiled& l, tiled& a, int n) {
  std::vector<double> x_true(static_cast<std::size_t>(n)), rhs(static_cast<std::size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) x_true[static_cast<std::size_t>(i)] = 1.0 + (i % 7);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) rhs[static_cast<std::size_t>(r)] += a.at(r, c) * x_true[static_cast<std::size_t>(c)];
  std::vector<double> y(rhs);
  for (int r = 0; r < n; ++r) {  // L y = rhs
    for (int c = 0; c < r; ++c) y[static_cast<std::size_t>(r)] -= l.at(r, c) * y[static_cast<std::size_t>(c)];
    y[static_cast<std::size_t>(r)] /= l.at(r, r);
  }
  for (int r = n - 1; r >= 0; --r) {  // L^T x = y
    for (int c = r + 1; c < n; ++c) y[static_cast<std::size_t>(r)] -= l.at(c, r) * y[static_cast<std::size_t>(c)];
    y[static_cast<std::size_t>(r)] /= l.at(r, r);
  }
  double err = 0;
  for (int i = 0; i < n; ++i) err = std::max(err, std::abs(y[static_cast<std::size_t>(i)] - x_true[static_cast<std::size_t>(i)]));
  return err;
}

double seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2048, b = 128, threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return static_cast<int>(example::option_value("tiled_cholesky", argc, argv, i, 0, 1 << 20)); };
    if (a == "--n") n = value();
    else if (a == "--tile") b = value();
    else if (a == "--threads") threads = value();
    else if (a == "--help") {
      std::printf("usage: tiled_cholesky [--n N] [--tile B] [--threads T]\n"
                  "Factorises an N x N SPD matrix in B x B tiles with hytask tasks and sequentially.\n");
      return 0;
    } else {
      std::fprintf(stderr, "tiled_cholesky: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (n <= 0 || b <= 0 || n % b != 0) {
    std::fprintf(stderr, "tiled_cholesky: --n must be a positive multiple of --tile (got %d, %d)\n", n, b);
    return 2;
  }
  hytask::config cfg;
  if (threads > 0) cfg.threads = static_cast<unsigned>(threads);
  hytask::runtime rt(cfg);
  const int nt = n / b;

  tiled original(nt, b), seq(nt, b), par(nt, b);
  fill_spd(original, n);
  seq.data = original.data;
  par.data = original.data;

  auto t0 = std::chrono::steady_clock::now();
  factor_sequential(seq);
  double t_seq = seconds(t0);

  t0 = std::chrono::steady_clock::now();
  long tasks = factor_tasks(par);
  double t_par = seconds(t0);

  bool identical = true;
  for (int r = 0; r < n && identical; ++r)
    for (int c = 0; c <= r; ++c)
      if (seq.at(r, c) != par.at(r, c)) {
        identical = false;
        break;
      }
  double err = solve_error(par, original, n);
  const double gflop = static_cast<double>(n) * n * n / 3.0 * 1e-9;

  std::printf("tiled Cholesky, n = %d, %d x %d tiles of %d, %ld tasks, %u worker%s (%s)\n", n, nt,
              nt, b, tasks, rt.settings().threads, rt.settings().threads == 1 ? "" : "s",
              hytask::describe_topology().c_str());
  std::printf("  sequential : %8.3f s  %6.2f Gflop/s\n", t_seq, gflop / t_seq);
  std::printf("  hytask     : %8.3f s  %6.2f Gflop/s  speed-up %.2fx\n", t_par, gflop / t_par,
              t_seq / t_par);
  std::printf("  result     : %s to the sequential factor; solve error %.2e (%s)\n",
              identical ? "bit-identical" : "DIFFERENT", err, err < 1e-8 ? "ok" : "FAILED");
  return identical && err < 1e-8 ? 0 : 1;
}
