// jacobi3d: seed 000's 3-D Jacobi proof of concept, every variant in one program
// (docs/jacobi3d.md).
//
//   mpiexec -n 2 build/apps/jacobi3d/jacobi3d --variant all --stencil 24 --decomposition 3d
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app_main.hpp"
#include "app_support.hpp"
#include "hytask/hytask.hpp"
#include "hytask/omp.hpp"
#include "options.hpp"
#include "variants.hpp"

namespace {

using namespace jacobi;

struct row {
  std::string variant;
  unsigned tests = 0;
  bool has_tests = false;
  int threads = 1;
  double t_iter = 0, t_comp = -1, t_comm = -1;  // seconds per iteration, max over ranks
  double inner = 0, boundary = 0;               // hybrid-blocking phases, per iteration
  // The compute's speed beside the exchange: per rank, time in sweeps without the exchange
  // over time in sweeps with it (compute_meter.hpp); the lowest over ranks. -1: not measured.
  double compute_speed = -1;
  double sweeps_alone = -1, sweeps = -1;  // seconds in sweeps per iteration, max over ranks
  std::uint64_t checksum = 0;
};

double max_over_ranks(double v, MPI_Comm comm) {
  double m = 0;
  MPI_Allreduce(&v, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

std::uint64_t checksum_over_ranks(std::uint64_t v, MPI_Comm comm) {
  std::uint64_t s = 0;
  MPI_Allreduce(&v, &s, 1, MPI_UINT64_T, MPI_SUM, comm);  // integer sum: order-independent
  return s;
}

using hytask_apps::default_threads;

std::string extent_text(const std::array<int, 3>& e) {
  auto one = [](int v) { return v == 0 ? std::string("all") : std::to_string(v); };
  return one(e[0]) + "x" + one(e[1]) + "x" + one(e[2]);
}

std::string percent(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * v);
  return b;
}

void print_header(const options& o, const domain& g, int threads, double t_comm) {
  std::printf("jacobi3d: %dx%dx%d points, %d-point stencil, %s decomposition (%dx%dx%d ranks), %s halos, "
              "blocks %s, %d iterations, %d threads per rank\n",
              o.size[0], o.size[1], o.size[2], o.stencil_points(), o.decomp == decomposition::d1 ? "1d" : "3d",
              g.dims[0], g.dims[1], g.dims[2], o.halo == halo_mode::datatype ? "datatype" : "packed",
              extent_text(o.block).c_str(), o.iters, threads);
  if (t_comm >= 0) std::printf("halo exchange alone: %.3f ms per iteration\n", 1e3 * t_comm);
  std::printf("%-24s %7s %9s %9s %9s %9s %8s %8s %7s  %s\n", "variant", "threads", "ms/iter", "compute", "comm",
              "ideal", "exposed", "overlap", "cspeed", "checksum");
}

void print_row(const row& r) {
  std::string name = r.variant + (r.has_tests ? " tests=" + std::to_string(r.tests) : "");
  char comp[32] = "-", comm[32] = "-", ideal[32] = "-", exposed[32] = "-", ov[32] = "-";
  if (r.t_comp >= 0) {
    std::snprintf(comp, sizeof comp, "%.3f", 1e3 * r.t_comp);
    std::snprintf(exposed, sizeof exposed, "%s", percent(std::max(0.0, r.t_iter - r.t_comp) / r.t_iter).c_str());
  }
  if (r.t_comm >= 0) std::snprintf(comm, sizeof comm, "%.3f", 1e3 * r.t_comm);
  if (r.t_comp >= 0 && r.t_comm >= 0) {
    std::snprintf(ideal, sizeof ideal, "%.3f", 1e3 * std::max(r.t_comp, r.t_comm));
    const double lo = std::min(r.t_comp, r.t_comm);
    if (lo > 0) std::snprintf(ov, sizeof ov, "%s", percent((r.t_comp + r.t_comm - r.t_iter) / lo).c_str());
  }
  char speed[32] = "-";
  if (r.compute_speed >= 0) std::snprintf(speed, sizeof speed, "%s", percent(r.compute_speed).c_str());
  std::printf("%-24s %7d %9.3f %9s %9s %9s %8s %8s %7s  checksum 0x%016" PRIx64 "\n", name.c_str(), r.threads,
              1e3 * r.t_iter, comp, comm, ideal, exposed, ov, speed, r.checksum);
  std::fflush(stdout);
}

void write_csv(const std::string& path, const options& o, const domain& g, const std::vector<row>& rows) {
  FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "jacobi3d: cannot write --csv %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fprintf(out, "variant,tests,ranks,threads,size_z,size_x,size_y,stencil,decomposition,halo,block,iters,"
                    "ms_per_iter,compute_ms,comm_ms,ideal_ms,exposed_comm,overlap,checksum,compute_speed,sweeps_alone_ms,"
                    "sweeps_ms\n");
  for (const row& r : rows) {
    const bool full = r.t_comp >= 0 && r.t_comm >= 0;
    const double lo = full ? std::min(r.t_comp, r.t_comm) : 0;
    std::fprintf(out, "%s,%s,%d,%d,%d,%d,%d,%d,%s,%s,%s,%d,%.6f,", r.variant.c_str(),
                 r.has_tests ? std::to_string(r.tests).c_str() : "", g.ranks, r.threads, o.size[0], o.size[1],
                 o.size[2], o.stencil_points(), o.decomp == decomposition::d1 ? "1d" : "3d",
                 o.halo == halo_mode::datatype ? "datatype" : "packed", extent_text(o.block).c_str(), o.iters,
                 1e3 * r.t_iter);
    if (r.t_comp >= 0) std::fprintf(out, "%.6f,", 1e3 * r.t_comp);
    else std::fprintf(out, ",");
    if (r.t_comm >= 0) std::fprintf(out, "%.6f,", 1e3 * r.t_comm);
    else std::fprintf(out, ",");
    if (full) std::fprintf(out, "%.6f,", 1e3 * std::max(r.t_comp, r.t_comm));
    else std::fprintf(out, ",");
    if (r.t_comp >= 0) std::fprintf(out, "%.4f,", std::max(0.0, r.t_iter - r.t_comp) / r.t_iter);
    else std::fprintf(out, ",");
    if (full && lo > 0) std::fprintf(out, "%.4f,", (r.t_comp + r.t_comm - r.t_iter) / lo);
    else std::fprintf(out, ",");
    std::fprintf(out, "0x%016" PRIx64 ",", r.checksum);
    if (r.compute_speed >= 0) std::fprintf(out, "%.4f,%.6f,%.6f\n", r.compute_speed, 1e3 * r.sweeps_alone, 1e3 * r.sweeps);
    else std::fprintf(out, ",,\n");
  }
  if (out != stdout) std::fclose(out);
}

// Seed 003 eq. (1)-(3): from masteronly's fractions, the predicted gain of reserving m = 1 of
// n threads for communication: eps = 1 / (f_non + max(f_comm / m, f_ov * n / (n - m))).
void print_model(const std::vector<row>& rows) {
  const row* mo = nullptr;
  const row* res = nullptr;
  for (const row& r : rows) {
    if (r.variant == "hybrid-blocking") mo = &r;
    if (r.variant == "hybrid-reserve") res = &r;
  }
  if (!mo || !res) return;
  const double n = mo->threads, m = 1;
  const double f_ov = mo->inner / mo->t_iter, f_non = mo->boundary / mo->t_iter;
  const double f_comm = std::max(0.0, 1.0 - f_ov - f_non);
  std::printf("Rabenseifner-Wellein model, masteronly fractions: f_comm %.3f, f_non %.3f, f_ov %.3f (n = %d threads, m = 1)\n",
              f_comm, f_non, f_ov, mo->threads);
  if (n < 2) {
    std::printf("Rabenseifner-Wellein model: needs n >= 2 threads (one reserved for MPI); measured eps = %.3f\n",
                mo->t_iter / res->t_iter);
    return;
  }
  const double eps = 1.0 / (f_non + std::max(f_comm / m, f_ov * n / (n - m)));
  std::printf("Rabenseifner-Wellein model: predicted eps = T(hybrid-blocking) / T(hybrid-reserve) = %.3f, measured %.3f\n", eps,
              mo->t_iter / res->t_iter);
}

int run(int argc, char** argv) {
  const std::optional<options> parsed = parse(argc, argv);
  if (!parsed) return 0;  // --help
  const options& o = *parsed;
  bool any_hytask = false, any_threads = false;
  for (variant v : o.variants) {
    any_hytask |= uses_hytask(v);
    any_hytask |= uses_omp_session(v);  // hytask::omp needs MPI_THREAD_MULTIPLE too
    any_threads |= !one_thread_only(v);
  }
  // MPICH starts its progress thread (MPICH_ASYNC_PROGRESS=1) only under MPI_THREAD_MULTIPLE.
  const char* async = std::getenv("MPICH_ASYNC_PROGRESS");
  const bool async_progress = async && std::strcmp(async, "0") != 0;
  const int needed = any_hytask || async_progress ? MPI_THREAD_MULTIPLE
                     : any_threads                 ? MPI_THREAD_FUNNELED
                                                   : MPI_THREAD_SINGLE;
  hytask_apps::mpi_job job("jacobi3d", argc, argv, needed,
                           "the hytask variants need MPI_THREAD_MULTIPLE and the hybrid ones MPI_THREAD_FUNNELED");
  if (!job.ok()) return 1;
  const int threads = o.threads > 0 ? o.threads : default_threads(MPI_COMM_WORLD);

  std::unique_ptr<domain> g;
  try {
    g = std::make_unique<domain>(o, MPI_COMM_WORLD);
  } catch (const usage_error& e) {
    if (*e.what()) std::fprintf(stderr, "jacobi3d: %s\n", e.what());  // from the rank that found it
    return 2;
  }
  const bool root = g->rank == 0;

  double t_comm = -1;
  if (o.breakdown) {
    fields scratch(*g);
    for (int p = 0; p < 2; ++p) g->init_planes(scratch[p], -g->radius, g->local[0] + g->radius);
    pass_args a{.iters = o.iters};
    t_comm = max_over_ranks(time_exchange(*g, scratch, a), g->comm) / o.iters;
  }
  if (root) print_header(o, *g, threads, t_comm);

  std::vector<row> rows;
  // A variant may refuse the settings (omp-detach under libomp with one thread): every rank
  // finds it before the variant communicates, and the run ends as a usage error.
  try {
    for (variant v : o.variants) {
      if (v == variant::sequential) {
        reference_result ref = run_sequential(o, g->comm);
        row r{.variant = name(v), .threads = 1};
        r.t_iter = max_over_ranks(ref.seconds, g->comm) / o.iters;
        MPI_Bcast(&ref.checksum, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
        r.checksum = ref.checksum;
        rows.push_back(r);
        if (root) print_row(r);
        continue;
      }
      const int t = one_thread_only(v) ? 1 : threads;
      std::vector<unsigned> tests = takes_tests(v) ? o.tests : std::vector<unsigned>{0};
      for (unsigned x : tests) {
        fields f(*g);
        std::optional<hytask::runtime> rt;
        if (uses_hytask(v)) rt.emplace(hytask::config{.threads = static_cast<unsigned>(t)});
        std::optional<hytask::omp::session> omp_session;  // no workers: OpenMP's threads compute
        if (uses_omp_session(v)) omp_session.emplace();
        auto pass = [&](bool communicate) {
          pass_args a{.iters = o.iters, .tests = x, .threads = t, .communicate = communicate};
          switch (v) {
            case variant::mpi_blocking: return run_mpi_blocking(*g, f, a);
            case variant::mpi_nonblocking: return run_mpi_nonblocking(*g, f, a);
            case variant::hybrid_blocking: return run_hybrid_blocking(*g, f, a);
            case variant::hybrid_nonblocking: return run_hybrid_nonblocking(*g, f, a);
            case variant::hybrid_reserve: return run_hybrid_reserve(*g, f, a);
            case variant::omp_detach: return run_omp_detach(*g, f, a);
            case variant::masteronly: return run_masteronly(*g, f, a);
            case variant::commtask: return run_commtask(*g, f, a);
            case variant::dataflow: return run_dataflow(*g, f, a);
            case variant::intercepted: return run_intercepted(*g, f, a);
            case variant::sequential: break;
          }
          return pass_result{};
        };
        row r{.variant = name(v), .tests = x, .has_tests = takes_tests(v), .threads = t};
        compute_meter meter;
        g->meter = &meter;
        double sweeps_alone = 0;
        if (o.breakdown) {
          r.t_comp = max_over_ranks(pass(false).seconds, g->comm) / o.iters;
          sweeps_alone = meter.seconds();
          meter.reset();
        }
        r.t_comm = t_comm;
        const hytask::omp::session_stats before =
            omp_session ? omp_session->stats() : hytask::omp::session_stats{};
        pass_result p = pass(true);
        g->meter = nullptr;
        hytask::omp::session_stats during{};
        if (omp_session) {
          const hytask::omp::session_stats after = omp_session->stats();
          during.thread_polls = after.thread_polls - before.thread_polls;
          during.thread_cpu_ns = after.thread_cpu_ns - before.thread_cpu_ns;
          during.ompt_polls = after.ompt_polls - before.ompt_polls;
          during.hook_polls = after.hook_polls - before.hook_polls;
          during.fulfilled = after.fulfilled - before.fulfilled;
        }
        if (o.breakdown) {
          r.sweeps_alone = max_over_ranks(sweeps_alone, g->comm) / o.iters;
          r.sweeps = max_over_ranks(meter.seconds(), g->comm) / o.iters;
          // -1 (shown as "-") when a pass timed no sweep on some rank.
          const double mine = meter.seconds() > 0 && sweeps_alone > 0 ? sweeps_alone / meter.seconds() : -1;
          MPI_Allreduce(&mine, &r.compute_speed, 1, MPI_DOUBLE, MPI_MIN, g->comm);
        }
        r.t_iter = max_over_ranks(p.seconds, g->comm) / o.iters;
        r.inner = max_over_ranks(p.inner_seconds, g->comm) / o.iters;
        r.boundary = max_over_ranks(p.boundary_seconds, g->comm) / o.iters;
        r.checksum = checksum_over_ranks(g->checksum(f[o.iters]), g->comm);
        rows.push_back(r);
        if (root) print_row(r);
        // How hytask::omp moved the requests of the measured pass: each of the thread's polls
        // is a wake-up that takes a core from the compute while it runs (rank 0's figures).
        if (root && omp_session)
          std::printf("  progress (rank 0): %.1f polls per iteration by the session's thread (%.2f ms "
                      "of its CPU), %.1f from OMPT callbacks, %.1f at task starts and ends; %.1f "
                      "events fulfilled\n",
                      static_cast<double>(during.thread_polls) / o.iters,
                      1e-6 * static_cast<double>(during.thread_cpu_ns) / o.iters,
                      static_cast<double>(during.ompt_polls) / o.iters,
                      static_cast<double>(during.hook_polls) / o.iters,
                      static_cast<double>(during.fulfilled) / o.iters);
      }
    }
  } catch (const usage_error& e) {
    if (root) std::fprintf(stderr, "jacobi3d: %s\n", e.what());
    return 2;
  }
  int status = 0;
  if (root) {
    print_model(rows);
    if (rows.size() > 1) {
      bool same = std::all_of(rows.begin(), rows.end(), [&](const row& r) { return r.checksum == rows[0].checksum; });
      std::printf("checksums: %s over %zu runs\n", same ? "all equal" : "DIFFER", rows.size());
      if (!same) status = 1;
    }
    if (!o.csv.empty()) write_csv(o.csv, o, *g, rows);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  g.reset();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_apps::app_main("jacobi3d", [&] { return run(argc, argv); });
}
