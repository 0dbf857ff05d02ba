// The StarPU-MPI variant (StarPU 1.3 from Debian, Open MPI only): the tiled QR of the hytask
// variant as StarPU's sequential task flow. Every rank registers every tile of A, of the two T
// factors and of the workspaces (its own with their memory, the others' with none) with its
// owner in the same 2-D block-cyclic distribution and a tag, then inserts every task of the
// factorisation in the sequential reference's order with starpu_mpi_task_insert; StarPU-MPI
// runs each task on the owner of the tiles it writes and moves the tiles it reads.
// Afterwards the tiles are unregistered, which brings every one home, into the tiled_matrix.
//
// The data flow is the hytask variant's (docs/qr.md, "How the hytask variant is
// distributed"): a task's written tiles all live on one rank, so that no tile travels to be
// written and back.
// - geqrt's tile (k, k) is copied into a tile D_k of its owner for gemqrt to read, so that
//   group 0's tsqrt, which writes R in (k, k), need not wait for the readers of V (as the
//   hytask variant's copyin of (k, k); Chameleon's QR does the same).
// - The rows below k are eliminated by process row (elimination_groups); group 0 works on R
//   and row k in place, each later group on copies in its own workspace tiles, wr(p, k) and
//   wrow(p, j), which are on the ranks of its tiles of columns k and j; after the last group
//   R (its upper triangle) and row k are copied back into A.
// So each tile sees the same kernels on the same inputs in the same order as in the
// sequential reference, and --sequential compares this variant's factor too.
//
// Priorities: the panel (geqrt, tsqrt, the moves of R) and the update of column k + 1, which
// the next panel waits for, get StarPU's highest priority, as apps/cholesky gives potrf and
// trsm; the rest of the trailing update the default.
//
// Workers, and how StarPU starts inside hytask's MPI job: apps/common/starpu_support.hpp.
#include "qr.hpp"

#if HYTASK_HAVE_STARPU
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "starpu_support.hpp"
#endif

namespace qr {

#if HYTASK_HAVE_STARPU

namespace {

using hytask_apps::starpu::ld;
using hytask_apps::starpu::nx;
using hytask_apps::starpu::ny;
using hytask_apps::starpu::ptr;

// A kernel's sizes, from the problem's shape (the tiles' own sizes may be those of a packed
// copy): rows m, columns n, reflectors k, inner block ib.
struct dims {
  int m = 0, n = 0, k = 0, ib = 0;
};

dims unpack(void* cl_arg) {
  dims d;
  starpu_codelet_unpack_args(cl_arg, &d);
  return d;
}

// A_kk (RW), T_kk (W)
void geqrt_cpu(void* b[], void* arg) {
  const dims d = unpack(arg);
  geqrt(ptr(b[0]), ld(b[0]), ptr(b[1]), ld(b[1]), d.m, d.n, d.ib);
}

// D_k = V (R), T_kk (R), A_kj (RW)
void gemqrt_cpu(void* b[], void* arg) {
  const dims d = unpack(arg);
  gemqrt('T', ptr(b[0]), ld(b[0]), ptr(b[1]), ld(b[1]), ptr(b[2]), ld(b[2]), d.m, d.n, d.k, d.ib);
}

// R (RW), A_ik (RW), T2_ik (W)
void tsqrt_cpu(void* b[], void* arg) {
  const dims d = unpack(arg);
  tsqrt(ptr(b[0]), ld(b[0]), ptr(b[1]), ld(b[1]), ptr(b[2]), ld(b[2]), d.m, d.k, d.ib);
}

// V = A_ik (R), T2_ik (R), row k's tile j (RW), A_ij (RW)
void tsmqr_cpu(void* b[], void* arg) {
  const dims d = unpack(arg);
  tsmqr('T', ptr(b[0]), ld(b[0]), ptr(b[1]), ld(b[1]), ptr(b[2]), ld(b[2]), ptr(b[3]), ld(b[3]), d.m, d.n, d.k,
        d.ib);
}

// src (R) into dst (W), the same nx × ny (each with its leading dimension).
void copy_cpu(void* b[], void*) {
  const int rows = nx(b[0]), cols = ny(b[0]);
  for (int c = 0; c < cols; ++c)
    std::memcpy(ptr(b[1]) + static_cast<std::size_t>(c) * static_cast<std::size_t>(ld(b[1])),
                ptr(b[0]) + static_cast<std::size_t>(c) * static_cast<std::size_t>(ld(b[0])),
                sizeof(double) * static_cast<std::size_t>(rows));
}

// The upper triangle of src (R) into dst (RW): R back into A_kk, whose strict lower triangle
// holds geqrt's reflectors.
void copy_upper_cpu(void* b[], void*) {
  const int rows = nx(b[0]), cols = ny(b[0]);
  for (int c = 0; c < cols; ++c)
    std::memcpy(ptr(b[1]) + static_cast<std::size_t>(c) * static_cast<std::size_t>(ld(b[1])),
                ptr(b[0]) + static_cast<std::size_t>(c) * static_cast<std::size_t>(ld(b[0])),
                sizeof(double) * static_cast<std::size_t>(std::min(c + 1, rows)));
}

starpu_codelet cl_geqrt, cl_gemqrt, cl_tsqrt, cl_tsmqr, cl_copy, cl_copy_upper;

void start(int threads) {
  hytask_apps::starpu::start(threads);
  static const bool codelets = [] {
    using hytask_apps::starpu::codelet;
    cl_geqrt = codelet(geqrt_cpu, "geqrt", {STARPU_RW, STARPU_W});
    cl_gemqrt = codelet(gemqrt_cpu, "gemqrt", {STARPU_R, STARPU_R, STARPU_RW});
    cl_tsqrt = codelet(tsqrt_cpu, "tsqrt", {STARPU_RW, STARPU_RW, STARPU_W});
    cl_tsmqr = codelet(tsmqr_cpu, "tsmqr", {STARPU_R, STARPU_R, STARPU_RW, STARPU_RW});
    cl_copy = codelet(copy_cpu, "copy", {STARPU_R, STARPU_W});
    cl_copy_upper = codelet(copy_upper_cpu, "copy_upper", {STARPU_R, STARPU_RW});
    return true;
  }();
  (void)codelets;
}

// The handles of one tiled matrix, row-major by tile.
struct handles {
  std::size_t cols = 0;
  std::vector<starpu_data_handle_t> h;
  starpu_data_handle_t& operator()(std::size_t i, std::size_t j) { return h[i * cols + j]; }
};

}  // namespace

factor_result factor_starpu(matrix& a, matrix& t, matrix& t2, const options& o, int threads) {
  const shape s = shape_of(o);
  const int P = a.grid_rows(), Q = a.grid_cols();
  const auto pp = static_cast<std::size_t>(P);
  const std::size_t nb = a.nb();
  // The workspaces of groups g > 0, as the hytask variant's: row p of wr holds R, row p of
  // wrow row k, on the ranks of process row p (tile (p, j) on the rank of column j mod Q, like
  // A's tiles (i, j) with i mod P = p).
  matrix wr(pp * nb, s.nt * nb, nb, nb, P, Q);
  matrix wrow(pp * nb, s.nt * nb, nb, nb, P, Q);
  start(threads);
  const int rank = starpu_mpi_world_rank();

  // Every rank registers every tile, in the same order: the tags agree.
  starpu_mpi_tag_t tag = 0;
  auto reg = [&](matrix& x, std::size_t i, std::size_t j, std::size_t rows, std::size_t cols) {
    auto tile = x.tile(i, j);
    return hytask_apps::starpu::register_tile(tile.local_data(), tile.owner(), rank, x.mb(), rows, cols, tag++);
  };
  handles ha{s.nt, std::vector<starpu_data_handle_t>(s.mt * s.nt)};
  handles ht{s.nt, std::vector<starpu_data_handle_t>(s.nt)};                       // (k, k) of t
  handles ht2{s.nt, std::vector<starpu_data_handle_t>(s.mt * s.nt, nullptr)};      // (i, k) of t2, i > k
  handles hwr{s.nt, std::vector<starpu_data_handle_t>(pp * s.nt)};
  handles hwrow{s.nt, std::vector<starpu_data_handle_t>(pp * s.nt)};
  std::vector<starpu_data_handle_t> hd(s.nt);
  for (std::size_t i = 0; i < s.mt; ++i)
    for (std::size_t j = 0; j < s.nt; ++j) {
      ha(i, j) = reg(a, i, j, a.tile_height(i), a.tile_width(j));
      if (i < s.nt && i == j) ht(0, j) = reg(t, j, j, t.mb(), t.nb());
      if (i > j) ht2(i, j) = reg(t2, i, j, t2.mb(), t2.nb());
    }
  // Workspaces are only used while rows remain below k, that is with full-height tiles.
  for (std::size_t p = 0; p < pp; ++p)
    for (std::size_t j = 0; j < s.nt; ++j) {
      hwr(p, j) = reg(wr, p, j, nb, a.tile_width(j));
      hwrow(p, j) = reg(wrow, p, j, nb, a.tile_width(j));
    }
  // D_k: a copy of tile (k, k) on its owner, a buffer of nb × nb there.
  std::vector<std::vector<double>> d_buffers;
  for (std::size_t k = 0; k < s.nt; ++k) {
    auto akk = a.tile(k, k);
    double* mem = nullptr;
    if (akk.is_local()) mem = d_buffers.emplace_back(nb * nb).data();
    hd[k] = hytask_apps::starpu::register_tile(mem, akk.owner(), rank, nb, a.tile_height(k), a.tile_width(k), tag++);
  }

  const int top = starpu_sched_get_max_priority();
  const int normal = STARPU_DEFAULT_PRIO;
  auto insert = [](starpu_codelet* cl, int priority, const dims& d, auto... buffers) {
    const int rc = starpu_mpi_task_insert(MPI_COMM_WORLD, cl, STARPU_PRIORITY, priority, STARPU_VALUE, &d,
                                          sizeof d, buffers..., 0);
    if (rc != 0) throw std::runtime_error(std::string("starpu_mpi_task_insert (") + cl->name + ") failed: " +
                                          std::to_string(rc));
  };

  starpu_mpi_barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<starpu_data_handle_t> row(s.nt);  // where row k's tiles are: in A or in wrow
  for (std::size_t k = 0; k < s.nt; ++k) {
    const int mk = s.height(k), nk = s.width(k);
    auto prio = [&](std::size_t j) { return j == k + 1 ? top : normal; };
    insert(&cl_geqrt, top, dims{mk, nk, nk, o.ib}, STARPU_RW, ha(k, k), STARPU_W, ht(0, k));
    insert(&cl_copy, top, dims{}, STARPU_R, ha(k, k), STARPU_W, hd[k]);
    for (std::size_t j = k + 1; j < s.nt; ++j)
      insert(&cl_gemqrt, prio(j), dims{mk, s.width(j), nk, o.ib}, STARPU_R, hd[k], STARPU_R, ht(0, k), STARPU_RW,
             ha(k, j));
    starpu_data_handle_t r = ha(k, k);
    for (std::size_t j = k + 1; j < s.nt; ++j) row[j] = ha(k, j);
    const auto groups = elimination_groups(k, s.mt, P);
    for (std::size_t g = 0; g < pp; ++g) {
      if (groups[g].empty()) continue;
      if (g > 0) {  // R and row k move to this group's workspaces
        const std::size_t prow = (k + g) % pp;
        insert(&cl_copy, top, dims{}, STARPU_R, r, STARPU_W, hwr(prow, k));
        r = hwr(prow, k);
        for (std::size_t j = k + 1; j < s.nt; ++j) {
          insert(&cl_copy, prio(j), dims{}, STARPU_R, row[j], STARPU_W, hwrow(prow, j));
          row[j] = hwrow(prow, j);
        }
      }
      for (std::size_t i : groups[g]) {
        const int mi = s.height(i);
        insert(&cl_tsqrt, top, dims{mi, nk, nk, o.ib}, STARPU_RW, r, STARPU_RW, ha(i, k), STARPU_W, ht2(i, k));
        for (std::size_t j = k + 1; j < s.nt; ++j)
          insert(&cl_tsmqr, prio(j), dims{mi, s.width(j), nk, o.ib}, STARPU_R, ha(i, k), STARPU_R, ht2(i, k),
                 STARPU_RW, row[j], STARPU_RW, ha(i, j));
      }
    }
    if (r != ha(k, k)) {  // back into A
      insert(&cl_copy_upper, top, dims{}, STARPU_R, r, STARPU_RW, ha(k, k));
      for (std::size_t j = k + 1; j < s.nt; ++j) insert(&cl_copy, prio(j), dims{}, STARPU_R, row[j], STARPU_W, ha(k, j));
    }
  }
  starpu_task_wait_for_all();
  starpu_mpi_wait_for_all(MPI_COMM_WORLD);
  starpu_mpi_barrier(MPI_COMM_WORLD);
  factor_result res;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  starpu_mpi_cache_flush_all_data(MPI_COMM_WORLD);
  for (handles* x : {&ha, &ht, &ht2, &hwr, &hwrow})
    for (starpu_data_handle_t h : x->h)
      if (h) starpu_data_unregister(h);
  for (starpu_data_handle_t h : hd) starpu_data_unregister(h);
  // StarPU's threads stay busy while it lives: stopped after each run.
  starpu_finish();
  return res;
}

void starpu_finish() { hytask_apps::starpu::stop(); }

#else

factor_result factor_starpu(matrix&, matrix&, matrix&, const options&, int) {
  throw std::logic_error("the starpu variant was not built");
}
void starpu_finish() {}

#endif

}  // namespace qr
