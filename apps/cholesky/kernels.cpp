// The four tile kernels of the tiled Cholesky factorisation (lower, column-major), shared by
// every variant and by the sequential reference, so that they differ only in order and
// placement. OpenBLAS single-threaded: the ranks and tasks are the parallelism.
#include <cblas.h>
#include <lapacke.h>

#include "cholesky.hpp"

namespace chol {

int potrf(double* a, int n, int ld) { return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, a, ld); }

void trsm(const double* l_kk, int ld_l, double* a_ik, int ld_a, int m, int n) {
  cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, m, n, 1.0, l_kk, ld_l,
              a_ik, ld_a);
}

void syrk(const double* a_ik, int ld_a, double* a_ii, int ld_c, int n, int k) {
  cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, k, -1.0, a_ik, ld_a, 1.0, a_ii, ld_c);
}

void gemm(const double* a_ik, int ld_a, const double* a_jk, int ld_b, double* a_ij, int ld_c, int m, int n,
          int k) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, m, n, k, -1.0, a_ik, ld_a, a_jk, ld_b, 1.0, a_ij,
              ld_c);
}

}  // namespace chol
