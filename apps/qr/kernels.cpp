// The four tile kernels of the tiled QR factorisation (column-major), shared by every use —
// the hytask variant, the sequential reference and the checks' Q — so that they differ only
// in order and placement: LAPACK's geqrt, gemqrt, tpqrt and tpmqrt (with l = 0, the "TS"
// kernels of Buttari et al.), through LAPACKE's _work forms with a workspace per thread, so
// that a task allocates nothing. OpenBLAS single-threaded: the ranks and tasks are the
// parallelism.
#include <lapacke.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app_support.hpp"
#include "qr.hpp"

namespace qr {

namespace {

double* workspace(int elements) {
  thread_local std::vector<double> work;
  if (work.size() < static_cast<std::size_t>(elements)) work.resize(static_cast<std::size_t>(elements));
  return work.data();
}

// A negative info is an argument the code got wrong, not a property of the matrix.
void checked(const char* kernel, lapack_int info) {
  if (info != 0)
    hytask_apps::fail("qr", (std::string(kernel) + ": LAPACK rejects argument " + std::to_string(-info)).c_str(), 1);
}

}  // namespace

void geqrt(double* a, int lda, double* t, int ldt, int m, int n, int ib) {
  ib = std::min(ib, n);
  checked("dgeqrt", LAPACKE_dgeqrt_work(LAPACK_COL_MAJOR, m, n, ib, a, lda, t, ldt, workspace(ib * n)));
}

void gemqrt(char trans, const double* v, int ldv, const double* t, int ldt, double* c, int ldc, int m, int n,
            int k, int ib) {
  ib = std::min(ib, k);
  checked("dgemqrt", LAPACKE_dgemqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, ib, const_cast<double*>(v), ldv,
                                          const_cast<double*>(t), ldt, c, ldc, workspace(n * ib)));
}

void tsqrt(double* r, int ldr, double* b, int ldb, double* t, int ldt, int m, int k, int ib) {
  ib = std::min(ib, k);
  checked("dtpqrt", LAPACKE_dtpqrt_work(LAPACK_COL_MAJOR, m, k, 0, ib, r, ldr, b, ldb, t, ldt, workspace(ib * k)));
}

void tsmqr(char trans, const double* v, int ldv, const double* t, int ldt, double* a, int lda, double* b,
           int ldb, int m, int n, int k, int ib) {
  ib = std::min(ib, k);
  checked("dtpmqrt", LAPACKE_dtpmqrt_work(LAPACK_COL_MAJOR, 'L', trans, m, n, k, 0, ib, const_cast<double*>(v), ldv,
                                          const_cast<double*>(t), ldt, a, lda, b, ldb, workspace(n * ib)));
}

}  // namespace qr
