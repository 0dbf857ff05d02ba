// hpl: seed 004's HPL experiment — LU with partial pivoting, block-cyclic over P x Q, in three
// arrangements — with HPL's output and residual check (docs/hpl.md).
//
//   mpiexec -n 2 build/apps/hpl/hpl -N 4000 --nb 128 -P 1 -Q 2 --variant all
#include <cblas.h>
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hpl.hpp"
#include "app_main.hpp"
#include "app_support.hpp"
#include "blas_report.hpp"
#include "dgemm_peak.hpp"
#include "hytask/hytask.hpp"

namespace {

using namespace hpl;

struct result {
  variant v;
  double seconds = 0, gflops = 0;
  residual res;
  long singular_column = -1;  // 0-based, or -1
};

using hytask_apps::default_threads;

double flops(long n) { return 2.0 / 3.0 * double(n) * n * n + 1.5 * double(n) * n; }

const char* line = "================================================================================\n";
const char* dash = "--------------------------------------------------------------------------------\n";

void print_result(const options& o, const grid& g, const result& r) {
  std::printf("%-10s %9ld %5d %5d %5d %18.2f %22.4e\n", name(r.v), o.n, o.nb, g.p, g.q, r.seconds, r.gflops);
  std::printf("%s", dash);
  if (r.singular_column >= 0)
    std::printf("the matrix is singular: column %ld has no nonzero pivot; no solution ...... SINGULAR\n",
                r.singular_column);
  else
    std::printf("||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= %16.7f ...... %s\n", r.res.scaled,
                r.res.passed ? "PASSED" : "FAILED");
  std::printf("%s", line);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const options& o, const grid& g, int threads, double peak,
               const std::vector<result>& rows) {
  FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "hpl: cannot write --csv %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(out, "variant,n,nb,p,q,threads,window,update_blocks,dilation,noise_burst_ms,noise_period_ms,seconds,"
                    "gflops,peak_gflops,residual,status\n");
  for (const result& r : rows) {
    const char* status = r.singular_column >= 0 ? "SINGULAR" : r.res.passed ? "PASSED" : "FAILED";
    std::fprintf(out, "%s,%ld,%d,%d,%d,%d,%d,%d,%g,%g,%g,%.6f,%.4f,", name(r.v), o.n, o.nb, g.p, g.q,
                 r.v == variant::tasks ? threads : 1, o.window, o.update_blocks, o.dilation, o.noise_burst_ms,
                 o.noise_period_ms, r.seconds, r.gflops);
    if (peak > 0) std::fprintf(out, "%.4f", peak);
    std::fprintf(out, ",%.7g,%s\n", r.res.scaled, status);
  }
  if (out != stdout) std::fclose(out);
}

int run(int argc, char** argv) {
  const std::optional<options> parsed = parse(argc, argv);
  if (!parsed) return 0;  // --help
  const options& o = *parsed;
  hytask_apps::blas_single_threaded();  // hytask (or the rank layout) provides the parallelism
  const bool any_tasks = std::find(o.variants.begin(), o.variants.end(), variant::tasks) != o.variants.end();
  hytask_apps::mpi_job job("hpl", argc, argv, any_tasks ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED,
                           "the tasks variant needs MPI_THREAD_MULTIPLE");
  if (!job.ok()) return 1;
  const int size = job.size();
  const bool root = job.root();
  int P = o.p, Q = o.q;
  if (P == 0 && Q == 0) P = 1, Q = size;
  else if (P == 0) P = size % Q == 0 ? size / Q : 0;
  else if (Q == 0) Q = size % P == 0 ? size / P : 0;
  if (P * Q != size) {
    if (root)
      std::fprintf(stderr, "hpl: the grid -P %d -Q %d needs %d ranks, and this run has %d; choose P x Q = %d\n",
                   o.p, o.q, o.p * std::max(1, o.q), size, size);
    return 2;
  }
  const int threads = o.threads > 0 ? o.threads : default_threads(MPI_COMM_WORLD);
  grid g(P, Q, MPI_COMM_WORLD);
  dilation dil;
  dil.f = o.dilation;

  double peak = 0;
  if (o.peak) peak = hytask_apps::dgemm_peak(MPI_COMM_WORLD, threads, 1536, CblasNoTrans);
  if (root) {
    std::printf("%s", line);
    std::printf("hpl (hytask): LU with partial pivoting, block-cyclic, OpenBLAS kernels single-threaded\n");
    std::printf("N %ld, NB %d, P x Q = %d x %d (%s), %d ranks; tasks: %d threads per rank, window %d, ", o.n, o.nb, P,
                Q, P == 1 ? "1-D" : "2-D", size, threads, o.window);
    if (o.update_blocks > 0) std::printf("%d blocks per update\n", o.update_blocks);
    else std::printf("update width from the DGEMM's packing cost\n");
    if (o.dilation > 0) std::printf("bandwidth dilation: f = %g (every S-byte message is followed by f*S bytes)\n", o.dilation);
    if (o.noise_period_ms > 0)
      std::printf("OS noise: a thread per rank computes %g ms every %g ms\n", o.noise_burst_ms, o.noise_period_ms);
    if (peak > 0) std::printf("DGEMM peak: %.2f Gflop/s (%d ranks x %d single-threaded DGEMMs at once)\n", peak, size, threads);
    hytask_apps::report_blas(true);  // the BLAS and its kernels; warns if narrower than the CPU
    std::printf("%s", line);
    std::printf("T/V                N    NB     P     Q               Time                 Gflops\n");
    std::printf("%s", dash);
  }

  std::vector<result> rows;
  int status = 0;
  bool said_width = false;
  for (variant v : o.variants) {
    for (int rep = 0; rep < o.repeat; ++rep) {
      matrix m(g, o.n, o.nb);
      generate(m, o.seed, o.singular);
      dil.reserve(std::max(panel_capacity(m), 2 * ubuf_capacity(m)));
      std::optional<hytask::runtime> rt;
      if (v == variant::tasks) rt.emplace(hytask::config{.threads = static_cast<unsigned>(threads)});
      std::optional<noise> nz;
      if (o.noise_period_ms > 0) nz.emplace(o.noise_burst_ms, o.noise_period_ms);
      run_args args{o, m, dil};
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      long info = v == variant::simple ? run_simple(args) : v == variant::lookahead ? run_lookahead(args) : run_tasks(args);
      double t_factor = MPI_Wtime() - t0;
      if (v == variant::tasks && o.update_blocks == 0 && !said_width) {
        said_width = true;  // every rank measures its own: rank 0 reports the range
        double lo = args.pack_columns, hi = args.pack_columns;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        const long rest = m.nloc - m.nb;
        if (root)
          std::printf("tasks: packing the panel costs the DGEMM of %.1f-%.1f columns (ranks' measurements); %ld "
                      "local columns -> update tasks of %ld-%ld columns (packing <= %g %%)\n",
                      lo, hi, rest, update_width(rest, o.nb, threads, hi), update_width(rest, o.nb, threads, lo),
                      100 * update_overhead);
      }
      if (rt) rt->shutdown();  // its idle workers would poll beside the solve
      rt.reset();
      // Agree on the first zero pivot (0: none).
      long first = info ? info : LONG_MAX;
      MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
      result r;
      r.v = v;
      std::vector<double> x;
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      if (first == LONG_MAX) x = solve(m);
      const double t_solve = MPI_Wtime() - t0;
      nz.reset();
      double t = t_factor + t_solve;
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      r.seconds = t;
      r.gflops = flops(o.n) / t / 1e9;
      if (first != LONG_MAX) {
        r.singular_column = first - 1;
        status = std::max(status, 3);
      } else {
        r.res = check(m, o.seed, o.singular, x);
        if (!r.res.passed) status = std::max(status, 1);
      }
      rows.push_back(r);
      if (root) print_result(o, g, r);
    }
  }
  if (root) {
    int passed = 0, failed = 0, singular = 0;
    for (const result& r : rows) (r.singular_column >= 0 ? singular : r.res.passed ? passed : failed)++;
    std::printf("Finished %zu runs: %d passed, %d failed, %d singular\n", rows.size(), passed, failed, singular);
    if (!o.csv.empty()) write_csv(o.csv, o, g, threads, peak, rows);
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_apps::app_main("hpl", [&] { return run(argc, argv); });
}
