// cholesky: seed 001's tiled Cholesky on global dependencies, beside ScaLAPACK's pdpotrf and
// StarPU-MPI in the same job, on the same matrix, distribution and kernels
// (docs/cholesky.md).
//
//   mpiexec -n 2 build/apps/cholesky/cholesky -N 8192 --nb 256 --repeat 3 --peak
#include <cblas.h>
#include <mpi.h>

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

#include "app_main.hpp"
#include "app_support.hpp"
#include "blas_report.hpp"
#include "dgemm_peak.hpp"
#include "cholesky.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

using namespace chol;

constexpr double threshold = 16.0;  // HPL's

struct result {
  variant v;
  int rep = 0;
  double seconds = 0, gflops = 0;
  long failed_order = 0;
  bool checked = false;
  double residual = 0;
  long mismatches = -1;  // --sequential, hytask: elements that differ (-1: not compared)
  bool passed = true;
};

double flops(long n) { return static_cast<double>(n) * n * n / 3.0; }

long peak_rss_mib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::atol(line + 6);
  std::fclose(f);
  return kib / 1024;
}

const char* line = "================================================================================\n";
const char* dash = "--------------------------------------------------------------------------------\n";

void print_result(const options& o, const matrix& a, const result& r) {
  std::printf("%-10s %9ld %5d %5d %5d %14.3f %16.2f\n", name(r.v), o.n, o.nb, a.grid_rows(), a.grid_cols(),
              r.seconds, r.gflops);
  if (r.failed_order > 0) {
    const long c = r.failed_order - 1;
    std::printf("the matrix is not positive definite: the leading minor of order %ld is not (column %ld, "
                "tile (%ld, %ld)) ...... NOT SPD\n",
                r.failed_order, c, c / o.nb, c / o.nb);
  }
  if (r.checked)
    std::printf("||A-LL^T||_F/(||A||_F*N*eps)= %16.7f ...... %s\n", r.residual, r.passed ? "PASSED" : "FAILED");
  if (r.mismatches >= 0)
    std::printf("factor against a sequential run of the same kernels: %ld elements differ ...... %s\n",
                r.mismatches, r.mismatches == 0 ? "BIT-IDENTICAL" : "FAILED");
  std::printf("%s", dash);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const options& o, const matrix& a, int threads, double peak,
               const std::vector<result>& rows) {
  FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "cholesky: cannot write --csv %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(out, "variant,rep,n,nb,p,q,threads,seconds,gflops,peak_gflops,residual,status\n");
  for (const result& r : rows) {
    const char* status = r.failed_order > 0 ? "NOT_SPD" : !r.checked ? "UNCHECKED" : r.passed ? "PASSED" : "FAILED";
    std::fprintf(out, "%s,%d,%ld,%d,%d,%d,%d,%.6f,%.4f,", name(r.v), r.rep, o.n, o.nb, a.grid_rows(), a.grid_cols(),
                 threads, r.seconds, r.gflops);
    if (peak > 0) std::fprintf(out, "%.4f", peak);
    std::fprintf(out, ",");
    if (r.checked) std::fprintf(out, "%.7g", r.residual);
    std::fprintf(out, ",%s\n", status);
  }
  if (out != stdout) std::fclose(out);
}

int run(int argc, char** argv) {
  const std::optional<options> parsed = parse(argc, argv);
  if (!parsed) return 0;  // --help
  options o = *parsed;
  hytask_apps::blas_single_threaded();  // the ranks and the tasks are the parallelism
  hytask_apps::mpi_job job("cholesky", argc, argv, MPI_THREAD_MULTIPLE, "cholesky needs MPI_THREAD_MULTIPLE");
  if (!job.ok()) return 1;
  const int size = job.size();
  const bool root = job.root();
  if (!hytask_apps::choose_grid("cholesky", size, root, o.p, o.q)) return 2;
  const int threads = o.threads > 0 ? o.threads : hytask_apps::default_threads(MPI_COMM_WORLD);
  int status = 0;
  {
    hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(threads)});
    double peak = 0;
    if (o.peak) peak = hytask_apps::dgemm_peak(MPI_COMM_WORLD, threads, std::max(o.nb, 512), CblasTrans, 4);
    std::vector<result> rows;
    {
      matrix a(o.n, o.n, o.nb, o.nb, o.p, o.q);  // the original, kept for the checks
      matrix w(o.n, o.n, o.nb, o.nb, o.p, o.q);  // what the variants factor
      generate(a, o);
      hytask::wait_all();
      if (root) {
        std::printf("%s", line);
        std::printf("cholesky (hytask, global dependencies): A = L L^T, tiled, 2-D block-cyclic; OpenBLAS kernels single-threaded\n");
        std::printf("N %ld, NB %d, P x Q = %d x %d, %d ranks, %d threads per rank (hytask, StarPU)\n", o.n, o.nb,
                    a.grid_rows(), a.grid_cols(), size, threads);
        if (peak > 0) std::printf("DGEMM peak: %.2f Gflop/s (%d ranks x %d single-threaded DGEMMs at once)\n", peak, size, threads);
        hytask_apps::report_blas(true);  // the BLAS and its kernels; warns if narrower than the CPU
        std::printf("%s", line);
        std::printf("T/V                N    NB     P     Q           Time           Gflops\n");
        std::printf("%s", dash);
      }
      for (int rep = 0; rep < o.repeat; ++rep)
        for (variant v : o.variants) {
          copy_local(a, w);
          factor_result f = v == variant::hytask    ? factor_hytask(w, o)
                            : v == variant::scalapack ? factor_scalapack(w, o)
                                                      : factor_starpu(w, o, threads);
          result r;
          r.v = v;
          r.rep = rep;
          MPI_Allreduce(&f.seconds, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          r.gflops = flops(o.n) / r.seconds / 1e9;
          long first = f.failed_order > 0 ? f.failed_order : LONG_MAX;
          MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
          r.failed_order = first == LONG_MAX ? 0 : first;
          if (o.not_spd >= 0) {
            // The run must find the indefinite minor exactly where it was planted.
            r.passed = r.failed_order == o.not_spd + 1;
            if (!r.passed && root)
              std::fprintf(stderr, "cholesky: %s did not report the matrix as not positive definite at order %ld "
                           "(it reported %ld)\n", name(v), o.not_spd + 1, r.failed_order);
          } else if (r.failed_order > 0) {
            r.passed = false;
          } else if (o.check && rep == o.repeat - 1) {
            r.checked = true;
            r.residual = scaled_residual(a, w, o);
            r.passed = std::isfinite(r.residual) && r.residual < threshold;
          }
          if (o.sequential && v == variant::hytask && o.not_spd < 0) {
            long bad = sequential_mismatches(w, o);
            MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
            r.mismatches = bad;
            if (bad != 0) r.passed = false;
          }
          if (!r.passed) status = 1;
          rows.push_back(r);
          if (root) print_result(o, a, r);
        }
      hytask::wait_all();
      starpu_finish();
      long rss = peak_rss_mib(), max_rss = 0;
      MPI_Allreduce(&rss, &max_rss, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
      if (root) {
        int passed = 0, failed = 0, not_spd = 0;
        for (const result& r : rows) (r.failed_order > 0 && r.passed ? not_spd : r.passed ? passed : failed)++;
        const double matrix_mib = static_cast<double>(o.n) * static_cast<double>(o.n) * 8 / size / 1048576.0;
        const double buffers_mib = 2.0 * (static_cast<double>(a.tile_rows()) + 1) * o.nb * o.nb * 8 / 1048576.0;
        std::printf("memory per rank: the matrix %.0f MiB (held twice: the original and the factor), hytask's "
                    "copyin buffers %.0f MiB (2 x (N/NB + 1) tiles), peak resident size %ld MiB (largest rank)\n",
                    matrix_mib, buffers_mib, max_rss);
        std::printf("Finished %zu runs: %d passed, %d failed, %d not positive definite as planted\n", rows.size(),
                    passed, failed, not_spd);
        if (!o.csv.empty()) write_csv(o.csv, o, a, threads, peak, rows);
      }
      if (status == 0 && o.not_spd >= 0) status = 3;  // reported, as asked
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_apps::app_main("cholesky", [&] { return run(argc, argv); });
}
