// ScaLAPACK's side of the dense apps' distribution: a BLACS grid of P x Q ranks in row-major
// order (as tiled_matrix deals its tiles) and the descriptor of an M x N matrix in NB x NB
// blocks on it, with this rank's local array. Only where ScaLAPACK is built
// (HYTASK_HAVE_SCALAPACK); each app declares the routines it calls (pdpotrf_, pdgeqrf_, ...).
#pragma once

#if HYTASK_HAVE_SCALAPACK

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
void Cblacs_get(int context, int what, int* value);
void Cblacs_gridinit(int* context, const char* order, int rows, int cols);
void Cblacs_gridinfo(int context, int* rows, int* cols, int* row, int* col);
void Cblacs_gridexit(int context);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc,
               const int* icsrc, const int* context, const int* lld, int* info);
}

namespace hytask_apps {

// The grid, this rank's place in it, and the matrix's descriptor and local array
// (column-major, leading dimension lld). The grid is released on destruction.
struct scalapack_matrix {
  int context = 0, myrow = 0, mycol = 0;
  int lld = 1, nloc = 0;
  int desc[9] = {};
  std::vector<double> local;

  scalapack_matrix(int P, int Q, int m, int n, int nb) {
    Cblacs_get(-1, 0, &context);  // the default system context: MPI_COMM_WORLD
    Cblacs_gridinit(&context, "Row", P, Q);
    int rows = 0, cols = 0;
    Cblacs_gridinfo(context, &rows, &cols, &myrow, &mycol);
    if (rows != P || cols != Q) {
      Cblacs_gridexit(context);
      throw std::runtime_error("BLACS made a " + std::to_string(rows) + "x" + std::to_string(cols) +
                               " grid for " + std::to_string(P) + "x" + std::to_string(Q));
    }
    const int zero = 0;
    lld = std::max(1, numroc_(&m, &nb, &myrow, &zero, &P));
    nloc = numroc_(&n, &nb, &mycol, &zero, &Q);
    int info = 0;
    descinit_(desc, &m, &n, &nb, &nb, &zero, &zero, &context, &lld, &info);
    if (info != 0) {
      Cblacs_gridexit(context);
      throw std::runtime_error("descinit failed: info " + std::to_string(info));
    }
    local.resize(static_cast<std::size_t>(lld) * static_cast<std::size_t>(std::max(1, nloc)));
  }
  ~scalapack_matrix() { Cblacs_gridexit(context); }
  scalapack_matrix(const scalapack_matrix&) = delete;
  scalapack_matrix& operator=(const scalapack_matrix&) = delete;
};

}  // namespace hytask_apps

#endif
