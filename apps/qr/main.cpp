// qr: the tiled Householder QR factorisation on global dependencies, beside ScaLAPACK's
// pdgeqrf and StarPU-MPI in the same job, on the same matrix, distribution and tiles
// (docs/qr.md).
//
//   mpiexec -n 2 build/apps/qr/qr -N 4096 --nb 256 --ib 32 --repeat 3 --peak
#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "app_main.hpp"
#include "app_support.hpp"
#include "blas_report.hpp"
#include "dgemm_peak.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "qr.hpp"

namespace {

using namespace qr;

constexpr double threshold = 16.0;  // HPL's, as for cholesky

struct result {
  variant v;
  int rep = 0;
  double seconds = 0, gflops = 0;
  bool checked = false;
  check_result check;
  long mismatches = -1;  // --sequential, hytask and starpu: elements that differ (-1: not compared)
  bool passed = true;
};

// Householder QR of an M × N matrix, M >= N: 2MN² − 2N³/3 (4N³/3 when square).
double flops(long m, long n) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  return 2 * dm * dn * dn - 2 * dn * dn * dn / 3;
}

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

bool within(double x) { return std::isfinite(x) && x < threshold; }

void print_result(const options& o, const matrix& a, const result& r) {
  std::printf("%-10s %7ld %7ld %5d %4d %4d %4d %12.3f %14.2f\n", name(r.v), o.m, o.n, o.nb, o.ib, a.grid_rows(),
              a.grid_cols(), r.seconds, r.gflops);
  if (r.checked) {
    std::printf("||A-QR||_F/(||A||_F*N*eps)= %16.7f ...... %s\n", r.check.residual,
                within(r.check.residual) ? "PASSED" : "FAILED");
    std::printf("||I-Q^TQ||_F/(N*eps)=       %16.7f ...... %s\n", r.check.orthogonality,
                within(r.check.orthogonality) ? "PASSED" : "FAILED");
  }
  if (r.mismatches >= 0)
    std::printf("factor and T against a sequential run of the same kernels: %ld elements differ ...... %s\n",
                r.mismatches, r.mismatches == 0 ? "BIT-IDENTICAL" : "FAILED");
  std::printf("%s", dash);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const options& o, const matrix& a, int threads, double peak,
               const std::vector<result>& rows) {
  FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "qr: cannot write --csv %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(out, "variant,rep,m,n,nb,ib,p,q,threads,seconds,gflops,peak_gflops,residual,orthogonality,status\n");
  for (const result& r : rows) {
    const char* status = !r.checked && r.mismatches < 0 ? "UNCHECKED" : r.passed ? "PASSED" : "FAILED";
    std::fprintf(out, "%s,%d,%ld,%ld,%d,%d,%d,%d,%d,%.6f,%.4f,", name(r.v), r.rep, o.m, o.n, o.nb, o.ib,
                 a.grid_rows(), a.grid_cols(), threads, r.seconds, r.gflops);
    if (peak > 0) std::fprintf(out, "%.4f", peak);
    std::fprintf(out, ",");
    if (r.checked) std::fprintf(out, "%.7g,%.7g", r.check.residual, r.check.orthogonality);
    else std::fprintf(out, ",");
    std::fprintf(out, ",%s\n", status);
  }
  if (out != stdout) std::fclose(out);
}

int run(int argc, char** argv) {
  const std::optional<options> parsed = parse(argc, argv);
  if (!parsed) return 0;  // --help
  options o = *parsed;
  hytask_apps::blas_single_threaded();  // the ranks and the tasks are the parallelism
  hytask_apps::mpi_job job("qr", argc, argv, MPI_THREAD_MULTIPLE, "qr needs MPI_THREAD_MULTIPLE");
  if (!job.ok()) return 1;
  const int size = job.size();
  const bool root = job.root();
  if (!hytask_apps::choose_grid("qr", size, root, o.p, o.q)) return 2;
  const int threads = o.threads > 0 ? o.threads : hytask_apps::default_threads(MPI_COMM_WORLD);
  int status = 0;
  {
    hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(threads)});
    double peak = 0;
    if (o.peak) peak = hytask_apps::dgemm_peak(MPI_COMM_WORLD, threads, std::max(o.nb, 512), CblasNoTrans, 4);
    std::vector<result> rows;
    {
      const auto m = static_cast<std::size_t>(o.m), n = static_cast<std::size_t>(o.n);
      const auto nb = static_cast<std::size_t>(o.nb), ib = static_cast<std::size_t>(o.ib);
      matrix a(m, n, nb, nb, o.p, o.q);  // the original, kept for a fresh copy per run
      matrix w(m, n, nb, nb, o.p, o.q);  // what the variants factor
      // The T factors, IB × NB tiles distributed like A: geqrt's on the diagonal, tsqrt's below.
      const std::size_t mt = a.tile_rows(), nt = a.tile_cols();
      matrix t(mt * ib, nt * nb, ib, nb, o.p, o.q);
      matrix t2(mt * ib, nt * nb, ib, nb, o.p, o.q);
      std::optional<matrix> q;  // ScaLAPACK's explicit Q, for its checks
      if (o.check && std::find(o.variants.begin(), o.variants.end(), variant::scalapack) != o.variants.end())
        q.emplace(m, n, nb, nb, o.p, o.q);
      generate(a, o);
      hytask::wait_all();
      if (root) {
        std::printf("%s", line);
        std::printf("qr (hytask, global dependencies): A = QR, tiled Householder (flat tree), 2-D block-cyclic;\n"
                    "LAPACKE tile kernels over OpenBLAS, single-threaded\n");
        std::printf("M %ld, N %ld, NB %d, IB %d, P x Q = %d x %d, %d ranks, %d threads per rank (hytask, StarPU)\n", o.m, o.n,
                    o.nb, o.ib, a.grid_rows(), a.grid_cols(), size, threads);
        if (peak > 0) std::printf("DGEMM peak: %.2f Gflop/s (%d ranks x %d single-threaded DGEMMs at once)\n", peak, size, threads);
        hytask_apps::report_blas(true);  // the BLAS and its kernels; warns if narrower than the CPU
        std::printf("%s", line);
        std::printf("T/V              M       N    NB   IB    P    Q         Time         Gflops\n");
        std::printf("%s", dash);
      }
      for (int rep = 0; rep < o.repeat; ++rep)
        for (variant v : o.variants) {
          copy_local(a, w);
          zero_local(t);
          zero_local(t2);
          factor_result f = v == variant::hytask      ? factor_hytask(w, t, t2, o)
                            : v == variant::scalapack ? factor_scalapack(w, q ? &*q : nullptr, o)
                                                      : factor_starpu(w, t, t2, o, threads);
          // hytask and starpu leave T factors for the tiled Q; ScaLAPACK an explicit Q.
          const bool tiled = v != variant::scalapack;
          result r;
          r.v = v;
          r.rep = rep;
          MPI_Allreduce(&f.seconds, &r.seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          r.gflops = flops(o.m, o.n) / r.seconds / 1e9;
          if (o.check && rep == o.repeat - 1) {
            r.checked = true;
            r.check = tiled ? check_tiled(w, t, t2, o) : check_explicit(w, *q, o);
            r.passed = within(r.check.residual) && within(r.check.orthogonality);
          }
          if (o.sequential && tiled) {
            long bad = sequential_mismatches(w, t, t2, o);
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
        int passed = 0, failed = 0;
        for (const result& r : rows) (r.passed ? passed : failed)++;
        const double mib = 1048576.0;
        const double matrix_mib = static_cast<double>(o.m) * static_cast<double>(o.n) * 8 / size / mib;
        const double t_mib = 2.0 * static_cast<double>(mt * nt * ib * nb) * 8 / size / mib;
        // factor_hytask's buffers: 2 x (3 + 2 MT) + 4 NT tiles, 2 x (1 + MT) T tiles, and its
        // workspaces, 2 x P x NT tiles over all ranks.
        const double tiles = 2.0 * (3 + 2 * static_cast<double>(mt)) + 4.0 * static_cast<double>(nt) +
                             2.0 * o.p * static_cast<double>(nt) / size;
        const double buffers_mib =
            (tiles * static_cast<double>(nb * nb) + 2.0 * (1 + static_cast<double>(mt)) * static_cast<double>(ib * nb)) *
            8 / mib;
        std::printf("memory per rank: the matrix %.0f MiB (held twice: the original and the factor%s), the T "
                    "factors %.0f MiB, hytask's copyin buffers and workspaces %.0f MiB, peak resident size %ld MiB "
                    "(largest rank)\n",
                    matrix_mib, q ? "; and ScaLAPACK's Q" : "", t_mib, buffers_mib, max_rss);
        std::printf("Finished %zu runs: %d passed, %d failed\n", rows.size(), passed, failed);
        if (!o.csv.empty()) write_csv(o.csv, o, a, threads, peak, rows);
      }
    }
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_apps::app_main("qr", [&] { return run(argc, argv); });
}
