// The peers: MPI only, and fork-join threads (OpenMP) with MPI between or beside the
// parallel phases — the codes hytask is measured against (seed 000 §5.1.4, seed 003 §5).
#include <omp.h>

#include <cstdio>
#include <utility>
#include <vector>

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

// The halo exchange with plain MPI, from one thread.
class plain_exchange {
 public:
  explicit plain_exchange(const domain& g) : g_(g) {
    if (g.opts.halo == halo_mode::packed)
      for (const face& f : g.faces) {
        send_.emplace_back(static_cast<std::size_t>(f.count));
        recv_.emplace_back(static_cast<std::size_t>(f.count));
      }
  }

  // Receives first, then sends (packing each face just before its send).
  void post(double* a) {
    reqs_.clear();
    const bool packed = g_.opts.halo == halo_mode::packed;
    for (std::size_t i = 0; i < g_.faces.size(); ++i) {
      const face& f = g_.faces[i];
      MPI_Request r;
      if (packed) check(MPI_Irecv(recv_[i].data(), static_cast<int>(f.count), MPI_DOUBLE, f.peer, f.recv_tag, g_.comm, &r), "MPI_Irecv", f.peer);
      else check(MPI_Irecv(a, 1, f.recv_type, f.peer, f.recv_tag, g_.comm, &r), "MPI_Irecv", f.peer);
      reqs_.push_back(r);
    }
    for (std::size_t i = 0; i < g_.faces.size(); ++i) {
      const face& f = g_.faces[i];
      MPI_Request r;
      if (packed) {
        g_.pack(a, f, send_[i].data());
        check(MPI_Isend(send_[i].data(), static_cast<int>(f.count), MPI_DOUBLE, f.peer, f.send_tag, g_.comm, &r), "MPI_Isend", f.peer);
      } else {
        check(MPI_Isend(a, 1, f.send_type, f.peer, f.send_tag, g_.comm, &r), "MPI_Isend", f.peer);
      }
      reqs_.push_back(r);
    }
  }

  void test() {
    int flag = 0;
    check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE), "MPI_Testall", MPI_PROC_NULL);
  }

  void wait(double* a) {
    check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall", MPI_PROC_NULL);
    if (g_.opts.halo == halo_mode::packed)
      for (std::size_t i = 0; i < g_.faces.size(); ++i) g_.unpack(a, g_.faces[i], recv_[i].data());
  }

  // Seed 000's MPI-Only: two MPI_Sendrecv along z for the 1-D decomposition (send up and
  // receive from below, then the reverse); otherwise all receives, all sends, Waitall.
  void blocking(double* a) {
    if (g_.opts.decomp != decomposition::d1) {
      post(a);
      wait(a);
      return;
    }
    const bool packed = g_.opts.halo == halo_mode::packed;
    int lo = -1, hi = -1;
    for (std::size_t i = 0; i < g_.faces.size(); ++i) (g_.faces[i].side == 0 ? lo : hi) = static_cast<int>(i);
    for (int phase = 0; phase < 2; ++phase) {
      const int to = phase == 0 ? hi : lo, from = phase == 0 ? lo : hi;
      const face* ft = to >= 0 ? &g_.faces[static_cast<std::size_t>(to)] : nullptr;
      const face* ff = from >= 0 ? &g_.faces[static_cast<std::size_t>(from)] : nullptr;
      if (ft && packed) g_.pack(a, *ft, send_[static_cast<std::size_t>(to)].data());
      const void* sbuf = ft ? (packed ? static_cast<const void*>(send_[static_cast<std::size_t>(to)].data()) : a) : nullptr;
      void* rbuf = ff ? (packed ? static_cast<void*>(recv_[static_cast<std::size_t>(from)].data()) : a) : nullptr;
      const int scount = ft ? (packed ? static_cast<int>(ft->count) : 1) : 0;
      const int rcount = ff ? (packed ? static_cast<int>(ff->count) : 1) : 0;
      MPI_Datatype stype = ft && !packed ? ft->send_type : MPI_DOUBLE;
      MPI_Datatype rtype = ff && !packed ? ff->recv_type : MPI_DOUBLE;
      check(MPI_Sendrecv(sbuf, scount, stype, ft ? ft->peer : MPI_PROC_NULL, ft ? ft->send_tag : 0, rbuf, rcount, rtype,
                         ff ? ff->peer : MPI_PROC_NULL, ff ? ff->recv_tag : MPI_ANY_TAG, g_.comm, MPI_STATUS_IGNORE),
            "MPI_Sendrecv", ft ? ft->peer : ff ? ff->peer : MPI_PROC_NULL);
      if (ff && packed) g_.unpack(a, *ff, recv_[static_cast<std::size_t>(from)].data());
    }
  }

 private:
  const domain& g_;
  std::vector<MPI_Request> reqs_;
  std::vector<std::vector<double>> send_, recv_;
};

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
