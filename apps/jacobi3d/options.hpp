// jacobi3d's command line: which variants to run on which problem.
#pragma once

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace jacobi {

// The implementations of one Jacobi iteration (docs/jacobi3d.md; seed 000 ch. 5).
enum class variant {
  mpi_blocking,        // MPI only: exchange, then compute
  mpi_nonblocking,     // MPI only: post, compute inner (X tests), wait, compute boundary
  hybrid_blocking,     // fork-join threads; the master exchanges between parallel phases
  hybrid_nonblocking,  // fork-join threads; the master posts, tests X times, waits
  hybrid_reserve,      // thread 0 communicates while the other threads compute the inner domain
  omp_detach,          // OpenMP tasks per block, halos as detached tasks (hytask::omp's progress)
  masteronly,          // hytask: main exchanges, then tasks compute (traced for hytask-model)
  commtask,            // hytask: requests + inner blocks as tasks, boundary released by requests
  dataflow,            // hytask: block tasks with dependencies across iterations, no barrier
  intercepted,         // mpi-nonblocking's plain MPI exchange in a task, in dataflow's graph
  sequential,          // the reference: rank 0 computes the whole domain, plainly
};
const char* name(variant v);
bool uses_hytask(variant v);
bool takes_tests(variant v);     // the variants that also run with --tests X
bool one_thread_only(variant v);  // MPI-only variants: one rank per core
bool uses_omp_session(variant v);  // omp-detach: a hytask::omp::session around the pass

enum class decomposition { d1, d3 };
enum class halo_mode { datatype, packed };

// dataflow's and intercepted's run-ahead window when --window is not given.
inline constexpr int default_window = 3;

struct options {
  std::vector<variant> variants;
  std::vector<unsigned> tests = {0};     // X: MPI_Testall calls per iteration (mpi/hybrid-nonblocking)
  std::array<int, 3> size = {256, 256, 256};  // global interior points, z x y (y is unit stride)
  std::array<int, 3> block = {8, 64, 0};      // task / cache block, z x y; 0 = the whole extent
  int iters = 100;
  int radius = 1;                        // 1: the 6-point stencil, 4: the 24-point stencil
  decomposition decomp = decomposition::d1;
  halo_mode halo = halo_mode::datatype;
  int window = 0;                        // iterations in flight at most; 0: the variant's default
  int threads = 0;                       // 0: cores available to this process / ranks on its node
  bool breakdown = true;                 // also time compute alone and communication alone
  std::string csv;                       // file, or "-" for stdout

  int stencil_points() const { return 6 * radius; }
};

// A problem with the command line: main prints it and exits with 2.
using usage_error = hytask_cli::usage_error;

// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv);

}  // namespace jacobi
