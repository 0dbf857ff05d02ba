// The StarPU-MPI variant (StarPU 1.3 from Debian), written from StarPU's documentation and
// headers: every rank registers the tiles on and below the diagonal (its own with their
// memory, the others' with none) with their owner in the same 2-D block-cyclic distribution
// and a tag, then inserts every task of the factorisation in sequential order with
// starpu_mpi_task_insert; StarPU-MPI runs each task on the owner of the tile it writes and
// moves the tiles it reads. potrf and trsm get StarPU's highest priority (the critical
// path), as StarPU's documentation does for this algorithm. Afterwards the tiles are
// unregistered, which brings every one home, into the tiled_matrix.
//
// Workers, and how StarPU starts inside hytask's MPI job: apps/common/starpu_support.hpp.
#include "cholesky.hpp"

#if HYTASK_HAVE_STARPU
#include <atomic>
#include <chrono>
#include <climits>
#include <vector>

#include "starpu_support.hpp"
#endif

namespace chol {

#if HYTASK_HAVE_STARPU

namespace {

std::atomic<long> g_failed{LONG_MAX};

void note_failure(long order) {
  long cur = g_failed.load();
  while (order < cur && !g_failed.compare_exchange_weak(cur, order)) {
  }
}

// Buffers are starpu_matrix_interface: nx rows (contiguous), ny columns, leading dimension ld.
using hytask_apps::starpu::ld;
using hytask_apps::starpu::nx;
using hytask_apps::starpu::ny;
using hytask_apps::starpu::ptr;

void potrf_cpu(void* buffers[], void* cl_arg) {
  long first_column = 0;
  starpu_codelet_unpack_args(cl_arg, &first_column);
  if (const int info = potrf(ptr(buffers[0]), nx(buffers[0]), ld(buffers[0]))) note_failure(first_column + info);
}

void trsm_cpu(void* buffers[], void*) {
  trsm(ptr(buffers[0]), ld(buffers[0]), ptr(buffers[1]), ld(buffers[1]), nx(buffers[1]), ny(buffers[1]));
}

void syrk_cpu(void* buffers[], void*) {
  syrk(ptr(buffers[0]), ld(buffers[0]), ptr(buffers[1]), ld(buffers[1]), nx(buffers[1]), ny(buffers[0]));
}

void gemm_cpu(void* buffers[], void*) {
  gemm(ptr(buffers[0]), ld(buffers[0]), ptr(buffers[1]), ld(buffers[1]), ptr(buffers[2]), ld(buffers[2]),
       nx(buffers[2]), ny(buffers[2]), ny(buffers[0]));
}

starpu_codelet cl_potrf, cl_trsm, cl_syrk, cl_gemm;

void start(int threads) {
  hytask_apps::starpu::start(threads);
  static const bool codelets = [] {
    using hytask_apps::starpu::codelet;
    cl_potrf = codelet(potrf_cpu, "potrf", {STARPU_RW});
    cl_trsm = codelet(trsm_cpu, "trsm", {STARPU_R, STARPU_RW});
    cl_syrk = codelet(syrk_cpu, "syrk", {STARPU_R, STARPU_RW});
    cl_gemm = codelet(gemm_cpu, "gemm", {STARPU_R, STARPU_R, STARPU_RW});
    return true;
  }();
  (void)codelets;
}

}  // namespace

factor_result factor_starpu(matrix& a, const options& o, int threads) {
  start(threads);
  const std::size_t nt = a.tile_rows();
  const int rank = starpu_mpi_world_rank();
  std::vector<starpu_data_handle_t> h(nt * nt, nullptr);
  auto handle = [&](std::size_t i, std::size_t j) -> starpu_data_handle_t& { return h[i * nt + j]; };
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      auto t = a.tile(i, j);
      handle(i, j) = hytask_apps::starpu::register_tile(t.local_data(), t.owner(), rank, a.mb(), a.tile_height(i),
                                                        a.tile_width(j), static_cast<starpu_mpi_tag_t>(i * nt + j));
    }
  g_failed.store(LONG_MAX);
  const int top = starpu_sched_get_max_priority();

  starpu_mpi_barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < nt; ++k) {
    const long first_column = static_cast<long>(k) * o.nb;
    starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_potrf, STARPU_VALUE, &first_column, sizeof first_column,
                           STARPU_PRIORITY, top, STARPU_RW, handle(k, k), 0);
    for (std::size_t i = k + 1; i < nt; ++i)
      starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_trsm, STARPU_PRIORITY, top, STARPU_R, handle(k, k), STARPU_RW,
                             handle(i, k), 0);
    for (std::size_t i = k + 1; i < nt; ++i) {
      for (std::size_t j = k + 1; j < i; ++j)
        starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_gemm, STARPU_R, handle(i, k), STARPU_R, handle(j, k), STARPU_RW,
                               handle(i, j), 0);
      starpu_mpi_task_insert(MPI_COMM_WORLD, &cl_syrk, STARPU_R, handle(i, k), STARPU_RW, handle(i, i), 0);
    }
  }
  starpu_task_wait_for_all();
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  starpu_mpi_barrier(MPI_COMM_WORLD);
  factor_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
  for (starpu_data_handle_t& x : h)
    if (x) starpu_data_unregister(x);
  const long f = g_failed.load();
  r.failed_order = f == LONG_MAX ? 0 : f;
  // StarPU's threads stay busy while it runs (the MPI progress thread polls): stopped after
  // each run, they cannot slow down the other variants' runs or the checks.
  starpu_finish();
  return r;
}

void starpu_finish() { hytask_apps::starpu::stop(); }

#else

factor_result factor_starpu(matrix&, const options&, int) {
  throw std::logic_error("the starpu variant was not built");
}
void starpu_finish() {}

#endif

}  // namespace chol
