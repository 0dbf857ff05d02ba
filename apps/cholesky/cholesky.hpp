// cholesky: the right-looking tiled Cholesky factorisation A = L·Lᵀ of seed 001 (Listing 2.5,
// Appendix B) on a hytask::tiled_matrix<double>, 2-D block-cyclic over P × Q ranks, beside
// ScaLAPACK's pdpotrf and StarPU-MPI on the same matrix, tiles and owners (docs/cholesky.md).
//
//   hytask     tasks with global dependencies, copyin_r for remote tiles, a phase per step
//   scalapack  pdpotrf on the same block-cyclic distribution (its own local layout)
//   starpu     StarPU-MPI's sequential task flow (starpu_mpi_task_insert) on the same tiles
//
// Every variant factors a copy of the same matrix into the same tiled_matrix, so that one
// check (‖A − L·Lᵀ‖_F / (‖A‖_F·N·ε), computed with hytask tasks) serves them all.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_options.hpp"
#include "hytask/global.hpp"

namespace chol {

enum class variant { hytask, scalapack, starpu };
const char* name(variant v);
// Whether the variant was built (ScaLAPACK and StarPU-MPI are optional at build time).
bool built(variant v);

struct options : hytask_apps::dense_options {
  options() { n = 4096, nb = 256; }
  std::vector<variant> variants;
  bool check = true;     // the residual ‖A − L·Lᵀ‖ of each variant's last run
  bool sequential = false;  // hytask: compare with a sequential run of the same kernels
  long not_spd = -1;     // >= 0: make the matrix indefinite at this column
};

using usage_error = hytask_cli::usage_error;
// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv);

using matrix = hytask::tiled_matrix<double>;

// The test matrix: symmetric, entries in [-0.5, 0.5) off the diagonal and n on it (diagonally
// dominant, so positive definite), a pure function of (i, j) and the seed; with not_spd = c,
// a(c, c) = -n, and the leading minor of order c + 1 is the first not positive definite.
double element(long i, long j, long n, std::uint64_t seed, long not_spd);
// Fills this rank's tiles on and below the diagonal (called from main).
void generate(matrix& a, const options& o);
// This rank's tiles of `from` into `to` (the same shape and grid).
void copy_local(const matrix& from, matrix& to);

// Tile kernels (OpenBLAS, LAPACKE), column-major tiles, each with its leading dimension (a
// tile in the tiled_matrix has mb; a copy StarPU makes of a partial tile has its height).
// potrf returns LAPACK's info: 0, or the order of the first leading minor that is not
// positive definite within the tile.
int potrf(double* a, int n, int ld);
// a_ik := a_ik·L_kkᵀ⁻¹ (a_ik is m × n)
void trsm(const double* l_kk, int ld_l, double* a_ik, int ld_a, int m, int n);
// a_ii -= a_ik·a_ikᵀ (a_ii is n × n, a_ik n × k)
void syrk(const double* a_ik, int ld_a, double* a_ii, int ld_c, int n, int k);
// a_ij -= a_ik·a_jkᵀ (a_ij is m × n, a_ik m × k, a_jk n × k)
void gemm(const double* a_ik, int ld_a, const double* a_jk, int ld_b, double* a_ij, int ld_c, int m, int n,
          int k);

// A variant's run: its time, and where it found the matrix not positive definite.
struct factor_result {
  double seconds = 0;
  long failed_order = 0;  // 0, or the order of the first leading minor not positive definite
};

// The variants factor `a` in place (its lower tiles). Collective, from main.
factor_result factor_hytask(matrix& a, const options& o);
factor_result factor_scalapack(matrix& a, const options& o);
factor_result factor_starpu(matrix& a, const options& o, int threads);
// StarPU's end (if it was started): before the hytask runtime's.
void starpu_finish();

// ‖A − L·Lᵀ‖_F / (‖A‖_F · N · ε) of the factor in `l` against the original `a`, over the
// whole symmetric matrix. Collective, from main (hytask tasks with global dependencies).
double scaled_residual(const matrix& a, const matrix& l, const options& o);
// Elements of this rank's lower tiles of `l` that differ bit for bit from a sequential run of
// the same kernels in the same order on the whole matrix (every rank runs it).
long sequential_mismatches(const matrix& l, const options& o);

}  // namespace chol
