// The peers: MPI only, and fork-join threads (OpenMP) with MPI between or beside the
// parallel phases — the codes hytask is measured against (seed 000 §5.1.4, seed 003 §5).
#include <omp.h>

#include <cstdio>
#include <utility>
#include <vector>

#include "plain_exchange.hpp"
#include "variants.hpp"

namespace jacobi {

namespace {

double now() { return MPI_Wtime(); }

// An MPI error inside a parallel region cannot be thrown out of it: report and abort.
[[noreturn]] void abort_with(const std::exception& e, MPI_Comm comm) {
  std::fprintf(stderr, "%s\n", e.what());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  std::abort();
}

// First touch: thread t of T initialises the planes it will mostly compute.
void init_fields(const domain& g, const fields& f, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const long planes = g.local[0] + 2L * g.radius;
    const int z0 = static_cast<int>(-g.radius + planes * t / n), z1 = static_cast<int>(-g.radius + planes * (t + 1) / n);
    g.init_planes(f[0], z0, z1);
    g.init_planes(f[1], z0, z1);
  }
}

void sweep_share(const domain& g, const double* in, double* out, const box& b, int parts, int p) {
  g.sweep(in, out, split(b, parts, p));
}

void sweep_share(const domain& g, const double* in, double* out, const std::vector<box>& boxes, int parts, int p) {
  for (const box& b : boxes) g.sweep(in, out, split(b, parts, p));
}

// What every fork-join pass shares: first touch, an OpenMP team of a.threads threads (one
// for the MPI-only variants), the timed iterations between barriers. `step` is one
// iteration on thread t of n, src to dst.
struct team_step {
  const domain& g;
  const pass_args& a;
  plain_exchange& ex;
  const box& inner;
  const std::vector<box>& boundary;
  pass_result& res;
};

template <class Step>
pass_result run_team(const domain& g, const fields& f, const pass_args& a, Step step) {
  init_fields(g, f, a.threads);
  plain_exchange ex(g);
  const box inner = g.inner();
  const std::vector<box> boundary = g.boundary();
  pass_result res;
  const team_step ctx{g, a, ex, inner, boundary, res};
  MPI_Barrier(g.comm);
  const double t0 = now();
#pragma omp parallel num_threads(a.threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    try {
      for (int k = 0; k < a.iters; ++k) step(ctx, t, n, f[k], f[k + 1]);
    } catch (const std::exception& e) {
      abort_with(e, g.comm);
    }
  }
  MPI_Barrier(g.comm);
  res.seconds = now() - t0;
  return res;
}

// Masteronly: the master exchanges, then everybody computes. The inner and boundary phases
// are timed apart for seed 003's model.
void blocking_step(const team_step& c, int t, int n, double* src, double* dst) {
#pragma omp master
  if (c.a.communicate) c.ex.blocking(src);
#pragma omp barrier
  const double c0 = now();
  sweep_share(c.g, src, dst, c.inner, n, t);
  const double c1 = now();
  sweep_share(c.g, src, dst, c.boundary, n, t);
#pragma omp barrier
  if (t == 0) {
    c.res.inner_seconds += c1 - c0;
    c.res.boundary_seconds += now() - c1;
  }
}

// The master posts, interleaves its X tests with its share of the inner domain, and waits;
// then everybody computes the boundary.
void nonblocking_step(const team_step& c, int t, int n, double* src, double* dst) {
  const box mine = split(c.inner, n, t);
  if (t == 0 && c.a.communicate) {
    c.ex.post(src);
    for (unsigned x = 0; x <= c.a.tests; ++x) {
      sweep_share(c.g, src, dst, mine, static_cast<int>(c.a.tests) + 1, static_cast<int>(x));
      if (x < c.a.tests) c.ex.test();
    }
    c.ex.wait(src);
  } else {
    c.g.sweep(src, dst, mine);
  }
#pragma omp barrier
  sweep_share(c.g, src, dst, c.boundary, n, t);
#pragma omp barrier
}

// Seed 003's overlap-funnel-reserve: thread 0 is reserved for the exchange (posts, then
// waits inside MPI, which progresses it) while threads 1..T-1 compute the inner domain;
// then everybody computes the boundary. With one thread there is nobody to overlap with.
void reserve_step(const team_step& c, int t, int n, double* src, double* dst) {
  if (t == 0) {
    if (c.a.communicate) {
      c.ex.post(src);
      c.ex.wait(src);
    }
    if (n == 1) c.g.sweep(src, dst, c.inner);
  } else {
    sweep_share(c.g, src, dst, c.inner, n - 1, t - 1);
  }
#pragma omp barrier
  sweep_share(c.g, src, dst, c.boundary, n, t);
#pragma omp barrier
}

}  // namespace

pass_result run_mpi_blocking(const domain& g, const fields& f, const pass_args& a) {
  pass_args one = a;
  one.threads = 1;
  return run_team(g, f, one, blocking_step);
}

pass_result run_mpi_nonblocking(const domain& g, const fields& f, const pass_args& a) {
  pass_args one = a;
  one.threads = 1;
  return run_team(g, f, one, nonblocking_step);
}

pass_result run_hybrid_blocking(const domain& g, const fields& f, const pass_args& a) {
  return run_team(g, f, a, blocking_step);
}

pass_result run_hybrid_nonblocking(const domain& g, const fields& f, const pass_args& a) {
  return run_team(g, f, a, nonblocking_step);
}

pass_result run_hybrid_reserve(const domain& g, const fields& f, const pass_args& a) {
  return run_team(g, f, a, reserve_step);
}

double time_exchange(const domain& g, const fields& f, const pass_args& a) {
  plain_exchange ex(g);
  MPI_Barrier(g.comm);
  const double t0 = now();
  for (int k = 0; k < a.iters; ++k) {
    ex.post(f[k]);
    ex.wait(f[k]);
  }
  MPI_Barrier(g.comm);
  return now() - t0;
}

}  // namespace jacobi
