// The StarPU-MPI variant (StarPU 1.3 from Debian), written from StarPU's documentation and
// headers: every rank registers the tiles on and below the diagonal (its own with their
// memory, the others' with none) with their owner in the same 2-D block-cyclic distribution
// and a tag, then inserts every task of the factorisation in sequential order with
// starpu_mpi_task_insert; StarPU-MPI runs each task on the owner of the tile it writes and
// moves the tiles it reads. potrf and trsm get StarPU's highest priority (the critical
// path), as StarPU's documentation does for this algorithm. Afterwards the tiles are
// unregistered, which brings every one home, into the tiled_matrix.
//
// Workers: `threads` CPU workers per rank, bound to this rank's share of the node's cores.
// starpu_mpi_init_conf would reserve a core for StarPU-MPI's progress thread, which with one
// core per rank leaves no worker; its alternative, running the CPU driver on the MPI
// thread between polls (STARPU_MPI_DRIVER_CALL_FREQUENCY), hung StarPU 1.3.10 here (the
// MPI thread slept while tasks waited). So StarPU starts with starpu_init and StarPU-MPI
// with starpu_mpi_init_comm, which reserves nothing: the progress thread shares worker 0's
// core, as on any machine where every core computes.
#include "cholesky.hpp"

#if HYTASK_HAVE_STARPU
#include <mpi.h>
#include <sched.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>
#endif

namespace chol {

#if HYTASK_HAVE_STARPU

namespace {

bool g_started = false;
std::atomic<long> g_failed{LONG_MAX};

void note_failure(long order) {
  long cur = g_failed.load();
  while (order < cur && !g_failed.compare_exchange_weak(cur, order)) {
  }
}

// Buffers are starpu_matrix_interface: nx rows (contiguous), ny columns, leading dimension ld.
void potrf_cpu(void* buffers[], void* cl_arg) {
  const int n = static_cast<int>(STARPU_MATRIX_GET_NX(buffers[0]));
  const int lda = static_cast<int>(STARPU_MATRIX_GET_LD(buffers[0]));
  auto* a = reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(buffers[0]));
  long first_column = 0;
  starpu_codelet_unpack_args(cl_arg, &first_column);
  if (const int info = potrf(a, n, lda)) note_failure(first_column + info);
}

int nx(void* b) { return static_cast<int>(STARPU_MATRIX_GET_NX(b)); }
int ny(void* b) { return static_cast<int>(STARPU_MATRIX_GET_NY(b)); }
int ld(void* b) { return static_cast<int>(STARPU_MATRIX_GET_LD(b)); }
double* ptr(void* b) { return reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(b)); }

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

starpu_codelet make_codelet(starpu_cpu_func_t f, const char* name, std::vector<starpu_data_access_mode> modes) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = f;
  cl.nbuffers = static_cast<int>(modes.size());
  for (std::size_t i = 0; i < modes.size(); ++i) cl.modes[i] = modes[i];
  cl.name = name;
  return cl;
}

starpu_codelet cl_potrf, cl_trsm, cl_syrk, cl_gemm;

// This rank's share of its node's cores: `threads` of the CPUs it may run on, after those of
// the node's lower ranks.
std::vector<int> my_cpus(int threads) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> allowed;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) allowed.push_back(c);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  std::vector<int> mine;
  for (int t = 0; t < threads && !allowed.empty(); ++t)
    mine.push_back(allowed[static_cast<std::size_t>(local * threads + t) % allowed.size()]);
  return mine;
}

void start(int threads, int& argc_dummy, char**& argv_dummy) {
  if (g_started) return;
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  const std::vector<int> cpus = my_cpus(threads);
  if (static_cast<int>(cpus.size()) == threads) {
    conf.use_explicit_workers_bindid = 1;
    for (int t = 0; t < threads; ++t) conf.workers_bindid[t] = static_cast<unsigned>(cpus[static_cast<std::size_t>(t)]);
    // The MPI thread shares worker 0's core (see the top of this file).
    setenv("STARPU_MPI_THREAD_CPUID", std::to_string(cpus[0]).c_str(), 0);
  }
  int rc = starpu_init(&conf);
  if (rc != 0) throw std::runtime_error("starpu_init failed: " + std::to_string(rc));
  // MPI is hytask's, initialised with MPI_THREAD_MULTIPLE.
  rc = starpu_mpi_init_comm(&argc_dummy, &argv_dummy, 0, MPI_COMM_WORLD);
  if (rc != 0) throw std::runtime_error("starpu_mpi_init_comm failed: " + std::to_string(rc));
  cl_potrf = make_codelet(potrf_cpu, "potrf", {STARPU_RW});
  cl_trsm = make_codelet(trsm_cpu, "trsm", {STARPU_R, STARPU_RW});
  cl_syrk = make_codelet(syrk_cpu, "syrk", {STARPU_R, STARPU_RW});
  cl_gemm = make_codelet(gemm_cpu, "gemm", {STARPU_R, STARPU_R, STARPU_RW});
  g_started = true;
}

}  // namespace

factor_result factor_starpu(matrix& a, const options& o, int threads) {
  int argc = 0;
  char** argv = nullptr;
  start(threads, argc, argv);
  const std::size_t nt = a.tile_rows();
  const int rank = starpu_mpi_world_rank();
  std::vector<starpu_data_handle_t> h(nt * nt, nullptr);
  auto handle = [&](std::size_t i, std::size_t j) -> starpu_data_handle_t& { return h[i * nt + j]; };
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      auto t = a.tile(i, j);
      const int owner = t.owner();
      double* p = t.local_data();
      starpu_matrix_data_register(&handle(i, j), owner == rank ? STARPU_MAIN_RAM : -1,
                                  reinterpret_cast<uintptr_t>(p), static_cast<uint32_t>(a.mb()),
                                  static_cast<uint32_t>(a.tile_height(i)), static_cast<uint32_t>(a.tile_width(j)),
                                  sizeof(double));
      starpu_mpi_data_register(handle(i, j), static_cast<starpu_mpi_tag_t>(i * nt + j), owner);
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

void starpu_finish() {
  if (!g_started) return;
  starpu_mpi_shutdown();
  starpu_shutdown();
  g_started = false;
}

#else

factor_result factor_starpu(matrix&, const options&, int) {
  throw std::logic_error("the starpu variant was not built");
}
void starpu_finish() {}

#endif

}  // namespace chol
