// What the dense apps' StarPU-MPI variants share (apps/cholesky, apps/qr; StarPU 1.3 from
// Debian, built for Open MPI only): starting StarPU and StarPU-MPI inside a job whose MPI is
// already up, stopping them, codelets, and the matrix buffers' accessors. Include it only
// where StarPU-MPI was found (HYTASK_HAVE_STARPU).
//
// Workers: `threads` CPU workers per rank, bound to this rank's share of the node's cores.
// starpu_mpi_init_conf would reserve a core for StarPU-MPI's progress thread, which with one
// core per rank leaves no worker; its alternative, running the CPU driver on the MPI thread
// between polls (STARPU_MPI_DRIVER_CALL_FREQUENCY), hung StarPU 1.3.10 here (the MPI thread
// slept while tasks waited). So StarPU starts with starpu_init and StarPU-MPI with
// starpu_mpi_init_comm, which reserves nothing: the progress thread shares worker 0's core,
// as on any machine where every core computes.
//
// StarPU's threads stay busy while it runs (the MPI progress thread polls): a variant stops
// it after each run, so that it cannot slow down the other variants' runs or the checks.
#pragma once

#include <mpi.h>
#include <sched.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace hytask_apps::starpu {

// This rank's share of its node's cores: `threads` of the CPUs it may run on, after those of
// the node's lower ranks.
inline std::vector<int> my_cpus(int threads) {
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

inline bool started = false;

// Starts StarPU with `threads` CPU workers and StarPU-MPI on MPI_COMM_WORLD (MPI is the
// app's, initialised with MPI_THREAD_MULTIPLE). Collective; does nothing when running.
inline void start(int threads) {
  if (started) return;
  starpu_conf conf;
  starpu_conf_init(&conf);
  conf.ncpus = threads;
  conf.ncuda = 0;
  conf.nopencl = 0;
  const std::vector<int> cpus = my_cpus(threads);
  if (static_cast<int>(cpus.size()) == threads) {
    conf.use_explicit_workers_bindid = 1;
    for (int t = 0; t < threads; ++t)
      conf.workers_bindid[t] = static_cast<unsigned>(cpus[static_cast<std::size_t>(t)]);
    // The MPI thread shares worker 0's core (see the top of this file).
    setenv("STARPU_MPI_THREAD_CPUID", std::to_string(cpus[0]).c_str(), 0);
  }
  int rc = starpu_init(&conf);
  if (rc != 0) throw std::runtime_error("starpu_init failed: " + std::to_string(rc));
  int argc = 0;
  char** argv = nullptr;
  rc = starpu_mpi_init_comm(&argc, &argv, 0, MPI_COMM_WORLD);
  if (rc != 0) throw std::runtime_error("starpu_mpi_init_comm failed: " + std::to_string(rc));
  started = true;
}

// StarPU-MPI's and StarPU's end, if they were started: before the hytask runtime's.
inline void stop() {
  if (!started) return;
  starpu_mpi_shutdown();
  starpu_shutdown();
  started = false;
}

// A CPU codelet of `modes.size()` buffers.
inline starpu_codelet codelet(starpu_cpu_func_t f, const char* name,
                              std::initializer_list<starpu_data_access_mode> modes) {
  starpu_codelet cl;
  starpu_codelet_init(&cl);
  cl.cpu_funcs[0] = f;
  cl.nbuffers = static_cast<int>(modes.size());
  int i = 0;
  for (starpu_data_access_mode m : modes) cl.modes[i++] = m;
  cl.name = name;
  return cl;
}

// A starpu_matrix_interface buffer: nx rows (contiguous), ny columns, leading dimension ld.
// A copy StarPU makes of a tile on another rank is packed: its ld is its height.
inline int nx(void* b) { return static_cast<int>(STARPU_MATRIX_GET_NX(b)); }
inline int ny(void* b) { return static_cast<int>(STARPU_MATRIX_GET_NY(b)); }
inline int ld(void* b) { return static_cast<int>(STARPU_MATRIX_GET_LD(b)); }
inline double* ptr(void* b) { return reinterpret_cast<double*>(STARPU_MATRIX_GET_PTR(b)); }

// Registers a column-major tile of `rows` × `cols` doubles with leading dimension `ld` (at
// `data` on its owner, nowhere elsewhere) with StarPU-MPI, owned by `owner`, under `tag`.
inline starpu_data_handle_t register_tile(double* data, int owner, int rank, std::size_t ld, std::size_t rows,
                                          std::size_t cols, starpu_mpi_tag_t tag) {
  starpu_data_handle_t h = nullptr;
  const bool mine = owner == rank;
  starpu_matrix_data_register(&h, mine ? STARPU_MAIN_RAM : -1, mine ? reinterpret_cast<uintptr_t>(data) : 0,
                              static_cast<uint32_t>(ld), static_cast<uint32_t>(rows), static_cast<uint32_t>(cols),
                              sizeof(double));
  starpu_mpi_data_register(h, tag, owner);
  return h;
}

}  // namespace hytask_apps::starpu
