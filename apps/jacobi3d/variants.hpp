// The implementations of the Jacobi iteration (docs/jacobi3d.md).
#pragma once

#include <cstdint>

#include "domain.hpp"
#include "options.hpp"

namespace jacobi {

// The two copies of the domain; iteration k reads fields[k % 2] and writes the other.
struct fields {
  explicit fields(const domain& g) : a(g.cells()), b(g.cells()) {}
  untouched_array a, b;
  double* operator[](int i) const { return i % 2 == 0 ? a.data() : b.data(); }
};

struct pass_args {
  int iters = 1;
  unsigned tests = 0;        // MPI_Testall calls per iteration (the † variants)
  int threads = 1;
  bool communicate = true;   // false: compute alone, halos left as they are
};

// What one pass measured on this rank.
struct pass_result {
  double seconds = 0;        // from a barrier before the first iteration to one after the last
  double inner_seconds = 0;  // hybrid-blocking only: time in the inner and the boundary phases
  double boundary_seconds = 0;
};

// Each pass initialises the fields (first touch by the threads that compute on them), runs
// the iterations, and leaves the result in fields[iters % 2]. Collective over g.comm.
pass_result run_mpi_blocking(const domain& g, const fields& f, const pass_args& a);
pass_result run_mpi_nonblocking(const domain& g, const fields& f, const pass_args& a);
pass_result run_hybrid_blocking(const domain& g, const fields& f, const pass_args& a);
pass_result run_hybrid_nonblocking(const domain& g, const fields& f, const pass_args& a);
pass_result run_hybrid_reserve(const domain& g, const fields& f, const pass_args& a);
// These need a hytask::runtime with a.threads workers.
pass_result run_masteronly(const domain& g, const fields& f, const pass_args& a);
pass_result run_commtask(const domain& g, const fields& f, const pass_args& a);
pass_result run_dataflow(const domain& g, const fields& f, const pass_args& a);
// mpi-nonblocking's plain MPI exchange inside a hytask task per iteration, in dataflow's
// graph; linked with hytask::mpi_intercept, its MPI_Waitall suspends only that task.
pass_result run_intercepted(const domain& g, const fields& f, const pass_args& a);

// Needs a hytask::omp::session (and MPI_THREAD_MULTIPLE); a.threads OpenMP threads.
pass_result run_omp_detach(const domain& g, const fields& f, const pass_args& a);

// The halo exchange alone, with plain MPI from the calling thread, a.iters times: the
// communication time every variant has to hide.
double time_exchange(const domain& g, const fields& f, const pass_args& a);

// The reference: rank 0 allocates the whole domain and iterates plainly, written apart from
// the decomposed code. Returns the checksum (valid on rank 0) and the time.
struct reference_result {
  std::uint64_t checksum = 0;
  double seconds = 0;
};
reference_result run_sequential(const options& o, MPI_Comm comm);

}  // namespace jacobi
