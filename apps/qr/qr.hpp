// qr: the tiled Householder QR factorisation A = Q·R of an M × N matrix (M ≥ N) of Buttari,
// Langou, Kurzak and Dongarra ("A class of parallel tiled linear algebra algorithms for
// multicore architectures": geqrt, unmqr, tsqrt, tsmqr on a flat tree) on a
// hytask::tiled_matrix<double>, 2-D block-cyclic over P × Q ranks, beside ScaLAPACK's
// pdgeqrf and StarPU-MPI on the same matrix, tiles and owners (docs/qr.md).
//
//   hytask     tasks with global dependencies, copyin / copyin_r for remote tiles, phases
//   scalapack  pdgeqrf on the same block-cyclic distribution (its own local layout)
//   starpu     StarPU-MPI's sequential task flow (starpu_mpi_task_insert) on the same tiles
//
// Every variant factors a copy of the same matrix into the same tiled_matrix; the checks
// (‖A − Q·R‖_F / (‖A‖_F·N·ε) and ‖I − QᵀQ‖_F / (N·ε)) gather R and an explicit Q on rank 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_options.hpp"
#include "hytask/global.hpp"

namespace qr {

enum class variant { hytask, scalapack, starpu };
const char* name(variant v);
// Whether the variant was built (ScaLAPACK and StarPU-MPI are optional at build time).
bool built(variant v);

struct options : hytask_apps::dense_options {
  options() { n = 4096, nb = 256; }
  std::vector<variant> variants;
  long m = 0;            // rows; 0: N (square)
  int ib = 32;           // inner block of the tile kernels (the T factors are IB × NB tiles)
  bool check = true;     // residual and orthogonality of each variant's last run
  bool sequential = false;  // hytask, starpu: compare with a sequential run of the same kernels
};

using usage_error = hytask_cli::usage_error;
// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv);

using matrix = hytask::tiled_matrix<double>;

// The test matrix: entries in [-0.5, 0.5), a pure function of (i, j) and the seed.
double element(long i, long j, std::uint64_t seed);
// Fills this rank's tiles (called from main).
void generate(matrix& a, const options& o);
// This rank's tiles of `from` into `to` (the same shape and grid).
void copy_local(const matrix& from, matrix& to);
// Zeroes this rank's tiles (the T factors before a run, so that runs compare bit for bit).
void zero_local(matrix& a);

// A whole tiled matrix in one process, tile (i, j) column-major with leading dimension mb:
// the sequential reference and what the checks gather on rank 0.
struct tile_set {
  std::size_t mt = 0, nt = 0, mb = 0, nb = 0;
  std::vector<double> data;
  tile_set() = default;
  tile_set(std::size_t mt_, std::size_t nt_, std::size_t mb_, std::size_t nb_)
      : mt(mt_), nt(nt_), mb(mb_), nb(nb_), data(mt_ * nt_ * mb_ * nb_, 0.0) {}
  double* tile(std::size_t i, std::size_t j) { return data.data() + (i * nt + j) * mb * nb; }
  const double* tile(std::size_t i, std::size_t j) const { return data.data() + (i * nt + j) * mb * nb; }
};
// All tiles of `a` on rank 0 (an empty set elsewhere). Collective, from main, no task running.
tile_set gather(const matrix& a);

// The shape of the tiled problem: M × N in NB × NB tiles, T factors in IB × NB tiles.
struct shape {
  long m, n;
  int nb, ib;
  std::size_t mt, nt;
  int height(std::size_t i) const { return static_cast<int>(i + 1 < mt ? nb : m - static_cast<long>(i) * nb); }
  int width(std::size_t j) const { return static_cast<int>(j + 1 < nt ? nb : n - static_cast<long>(j) * nb); }
};
shape shape_of(const options& o);

// The flat tree's elimination order at step k: the tile rows below k, grouped by process row,
// starting with the row of tile (k, k) and going down the grid (P groups, some maybe empty),
// ascending within a group. Any order yields a QR factorisation; this one keeps each group's
// chain of tsqrt (and of tsmqr on row k) on one rank, so that a step needs P hand-overs of
// R and of row k between ranks, not one per tile row (docs/qr.md).
std::vector<std::vector<std::size_t>> elimination_groups(std::size_t k, std::size_t mt, int p);

// Tile kernels (LAPACKE's _work forms over OpenBLAS, single-threaded), column-major tiles,
// each with its leading dimension; ib is clamped to the number of reflectors where a tile is
// narrower. A bad argument is a bug: the job ends with a message.
// QR of the m × n tile a (m >= n): V below the diagonal, R on and above; T (ldt >= ib).
void geqrt(double* a, int lda, double* t, int ldt, int m, int n, int ib);
// c := Qᵀ·c (trans 'T') or Q·c ('N'), Q = I − V·T·Vᵀ from geqrt's k reflectors; c is m × n.
void gemqrt(char trans, const double* v, int ldv, const double* t, int ldt, double* c, int ldc, int m, int n,
            int k, int ib);
// QR of [r; b]: r the k × k upper triangle (its strict lower part is not touched), b m × k;
// R in r, V in b, T in t.
void tsqrt(double* r, int ldr, double* b, int ldb, double* t, int ldt, int m, int k, int ib);
// [a; b] := Qᵀ·[a; b] ('T') or Q·[a; b] ('N') with tsqrt's reflectors V (m × k) and T;
// a is k × n, b m × n.
void tsmqr(char trans, const double* v, int ldv, const double* t, int ldt, double* a, int lda, double* b,
           int ldb, int m, int n, int k, int ib);

// The tiled algorithm in one process, in the variants' order: a, t, t2 are the whole matrix,
// geqrt's T factors (tiles (k, k)) and tsqrt's (tiles (i, k), i > k).
void factor_sequential(tile_set& a, tile_set& t, tile_set& t2, const shape& s, int p);
// The explicit M × N Q (the first N columns of the full one) from the factored a, t, t2:
// the reflectors applied, in reverse order, to the first N columns of the identity.
tile_set form_q(const tile_set& a, const tile_set& t, const tile_set& t2, const shape& s, int p);
// Elements of this rank's tiles of a, t, t2 that differ bit for bit from factor_sequential
// on the whole matrix (every rank runs it).
long sequential_mismatches(const matrix& a, const matrix& t, const matrix& t2, const options& o);

// A variant's run: its time.
struct factor_result {
  double seconds = 0;
};

// The variants factor `a` in place (R on and above the diagonal, the reflectors below).
// hytask and starpu leave their T factors in t (tiles (k, k)) and t2 (tiles (i, k), i > k),
// IB × NB tiles distributed like a. scalapack writes its explicit Q (pdorgqr, outside the
// timed region) into q when q is given. Collective, from main.
factor_result factor_hytask(matrix& a, matrix& t, matrix& t2, const options& o);
factor_result factor_scalapack(matrix& a, matrix* q, const options& o);
factor_result factor_starpu(matrix& a, matrix& t, matrix& t2, const options& o, int threads);
// StarPU's end (if it was started): before the hytask runtime's.
void starpu_finish();

// The checks, on rank 0 over the gathered matrix; every rank gets the values. Collective.
struct check_result {
  double residual = 0;       // ‖A − Q·R‖_F / (‖A‖_F · N · ε)
  double orthogonality = 0;  // ‖I − QᵀQ‖_F / (N · ε)
};
// Q from the tiled variants' factor and T factors (applied to the first N columns of I).
check_result check_tiled(const matrix& f, const matrix& t, const matrix& t2, const options& o);
// Q given explicitly (M × N, tiled like f).
check_result check_explicit(const matrix& f, const matrix& q, const options& o);

}  // namespace qr
