// The kernels every variant shares: panel factorisation, row interchanges, the trailing
// update, and the panel's ring broadcast.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "hpl.hpp"

namespace hpl {

namespace {

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, len));
}

// The reduction of the 2-D pivot search. Each element is one process's proposal,
// [|a|, global row, that row (jb), has-diagonal, the diagonal row (jb)]: keep the largest
// |a| (ties: the lowest row, as LAPACK's idamax), and the one diagonal row contributed.
void pivot_max(void* in, void* inout, int* len, MPI_Datatype* type) {
  int bytes = 0;
  MPI_Type_size(*type, &bytes);
  const int w = bytes / int(sizeof(double)), jb = (w - 3) / 2;
  for (int e = 0; e < *len; ++e) {
    const double* a = static_cast<const double*>(in) + std::size_t(e) * w;
    double* b = static_cast<double*>(inout) + std::size_t(e) * w;
    if (a[0] > b[0] || (a[0] == b[0] && a[1] < b[1])) std::memcpy(b, a, sizeof(double) * (2 + jb));
    if (a[2 + jb] != 0) std::memcpy(b + 2 + jb, a + 2 + jb, sizeof(double) * (1 + jb));
  }
}

// Copies rows [r, r + rows) x cols of column-major `src` into column-major `dst`.
void copy_block(long rows, long cols, const double* src, long lds, double* dst, long ldd) {
  if (rows <= 0) return;
  for (long c = 0; c < cols; ++c) std::memcpy(dst + c * ldd, src + c * lds, sizeof(double) * rows);
}

long factor_local(matrix& m, const panel& p) {
  const long lc = count_below(p.r0, m.nb, m.g.col, m.g.q);
  double* a = m.col(lc) + p.r0;
  const long ml = m.mloc - p.r0;
  std::vector<lapack_int> ipiv(p.jb);
  const lapack_int info =
      LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(ml), p.jb, a, static_cast<lapack_int>(m.lda),
                          ipiv.data());
  if (info < 0) throw std::runtime_error("dgetrf: argument " + std::to_string(-info) + " is invalid");
  for (int j = 0; j < p.jb; ++j) p.piv()[j] = double(p.r0 + ipiv[j] - 1);
  copy_block(p.jb, p.jb, a, m.lda, p.top(), p.jb);
  copy_block(p.ml2, p.jb, a + p.jb, m.lda, p.l21(), p.ml2);
  return info > 0 ? p.r0 + info : 0;
}

// Right-looking unblocked LU of a panel spread over the process column: per column one
// allreduce finds the pivot and carries both the pivot row and the diagonal row, so the
// swap needs no further message (HPL's pdmxswp does the same).
long factor_distributed(matrix& m, const panel& p, column_ops& ops) {
  const grid& g = m.g;
  const int jb = p.jb, w = 2 * jb + 3;
  const long lda = m.lda;
  double* a = m.col(count_below(p.r0, m.nb, g.col, g.q));
  std::vector<double> buf(w);
  MPI_Datatype type;
  MPI_Op op;
  MPI_Type_contiguous(w, MPI_DOUBLE, &type);
  MPI_Type_commit(&type);
  MPI_Op_create(pivot_max, 1, &op);
  long info = 0;
  for (int j = 0; j < jb; ++j) {
    const long gr = p.r0 + j;
    const long ls = count_below(gr, m.nb, g.row, g.p);  // my first row at or below gr
    const bool own_diag = owner_of(gr, m.nb, g.p) == g.row;
    std::fill(buf.begin(), buf.end(), 0.0);
    buf[0] = -1;
    buf[1] = DBL_MAX;
    if (ls < m.mloc) {
      const long i = ls + static_cast<long>(cblas_idamax(static_cast<int>(m.mloc - ls), a + j * lda + ls, 1));
      buf[0] = std::fabs(a[i + j * lda]);
      buf[1] = double(global_of(i, m.nb, g.row, g.p));
      for (int c = 0; c < jb; ++c) buf[2 + c] = a[i + c * lda];
    }
    if (own_diag) {
      buf[2 + jb] = 1;
      for (int c = 0; c < jb; ++c) buf[3 + jb + c] = a[ls + c * lda];
    }
    ops.allreduce(buf.data(), 1, type, op, g.col_comm);
    const long gp = static_cast<long>(buf[1]);
    const double* prow = buf.data() + 2;
    const double* drow = buf.data() + 3 + jb;
    p.piv()[j] = double(gp);
    if (gp != gr && owner_of(gp, m.nb, g.p) == g.row) {
      const long li = count_below(gp, m.nb, g.row, g.p);
      for (int c = 0; c < jb; ++c) a[li + c * lda] = drow[c];
    }
    if (own_diag)
      for (int c = 0; c < jb; ++c) a[ls + c * lda] = prow[c];
    for (int c = 0; c < jb; ++c) p.top()[j + long(c) * jb] = prow[c];
    const double piv = prow[j];
    const long lb = count_below(gr + 1, m.nb, g.row, g.p);
    const int rows = static_cast<int>(m.mloc - lb);
    if (piv == 0) {
      if (!info) info = gr + 1;  // as LAPACK: leave the column, go on
    } else if (rows > 0) {
      if (std::fabs(piv) >= DBL_MIN) cblas_dscal(rows, 1.0 / piv, a + j * lda + lb, 1);
      else
        for (long i = lb; i < m.mloc; ++i) a[i + j * lda] /= piv;
      if (j + 1 < jb)
        cblas_dger(CblasColMajor, rows, jb - j - 1, -1.0, a + j * lda + lb, 1, prow + j + 1, 1, a + (j + 1) * lda + lb,
                   static_cast<int>(lda));
    }
  }
  MPI_Op_free(&op);
  MPI_Type_free(&type);
  copy_block(p.ml2, jb, a + p.lr2, lda, p.l21(), p.ml2);
  return info;
}

}  // namespace

void plain_column_ops::allreduce(void* inout, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, inout, count, type, op, comm), "MPI_Allreduce (pivot search)");
}

void plain_column_ops::allgatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
                                  MPI_Comm comm) {
  check_mpi(MPI_Allgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, comm),
            "MPI_Allgatherv (row interchanges)");
}

void dilation::reserve(long doubles) {
  const long need = extra(doubles);
  if (need > static_cast<long>(send_dummy.size())) send_dummy.assign(need, 0.0);
}

long factor_panel(matrix& m, const panel& p, column_ops& ops) {
  return m.g.p == 1 ? factor_local(m, p) : factor_distributed(m, p, ops);
}

void pivot_columns(matrix& m, const panel& p, long lc0, long lc1, double* ubuf, column_ops& ops,
                   const dilation& dil) {
  const long ncols = lc1 - lc0;
  if (ncols <= 0) return;
  const grid& g = m.g;
  const int jb = p.jb;
  if (g.p == 1) {
    std::vector<lapack_int> ip(jb);
    for (int j = 0; j < jb; ++j) ip[j] = static_cast<lapack_int>(long(p.piv()[j]) - p.r0 + 1);
    double* b = m.col(lc0) + p.r0;
    LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, static_cast<lapack_int>(ncols), b, static_cast<lapack_int>(m.lda), 1, jb,
                        ip.data(), 1);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, jb, static_cast<int>(ncols), 1.0,
                p.top(), jb, b, static_cast<int>(m.lda));
    return;
  }
  // Which original row ends where after the jb interchanges. Rows below the panel's top
  // only ever receive original top rows.
  std::unordered_map<long, long> content;
  auto at = [&](long r) {
    auto it = content.find(r);
    return it == content.end() ? r : it->second;
  };
  for (int j = 0; j < jb; ++j) {
    const long x = p.r0 + j, y = long(p.piv()[j]);
    const long cx = at(x), cy = at(y);
    content[x] = cy;
    content[y] = cx;
  }
  const long top_end = p.r0 + jb;
  const int pr = owner_of(p.r0, m.nb, g.p);
  // Contributions: the top's process row sends all jb original top rows; every process
  // sends the rows below the top that move up, in the order of the pivots.
  std::vector<int> counts(g.p, 0), displs(g.p, 0);
  counts[pr] = jb;
  std::vector<long> src(jb);
  for (int j = 0; j < jb; ++j) {
    src[j] = at(p.r0 + j);
    if (src[j] >= top_end) ++counts[owner_of(src[j], m.nb, g.p)];
  }
  for (int i = 1; i < g.p; ++i) displs[i] = displs[i - 1] + counts[i - 1];
  const long total = displs[g.p - 1] + counts[g.p - 1];
  std::vector<double> send(std::size_t(counts[g.row]) * ncols), recv(std::size_t(total) * ncols);
  auto pack_row = [&](long li, double* out) {
    for (long c = 0; c < ncols; ++c) out[c] = m.col(lc0 + c)[li];
  };
  long n_sent = 0;
  if (g.row == pr) {
    const long lt = count_below(p.r0, m.nb, g.row, g.p);
    for (int j = 0; j < jb; ++j) pack_row(lt + j, send.data() + (n_sent++) * ncols);
  }
  for (int j = 0; j < jb; ++j)
    if (src[j] >= top_end && owner_of(src[j], m.nb, g.p) == g.row)
      pack_row(count_below(src[j], m.nb, g.row, g.p), send.data() + (n_sent++) * ncols);
  std::vector<int> dcounts(g.p), ddispls(g.p);
  for (int i = 0; i < g.p; ++i) {
    dcounts[i] = counts[i] * static_cast<int>(ncols);
    ddispls[i] = displs[i] * static_cast<int>(ncols);
  }
  ops.allgatherv(send.data(), dcounts[g.row], recv.data(), dcounts.data(), ddispls.data(), g.col_comm);
  if (dil.f > 0) {  // the same exchange again, f times as large, between dummy buffers
    std::vector<int> xcounts(g.p), xdispls(g.p, 0);
    for (int i = 0; i < g.p; ++i) xcounts[i] = static_cast<int>(dil.extra(dcounts[i]));
    for (int i = 1; i < g.p; ++i) xdispls[i] = xdispls[i - 1] + xcounts[i - 1];
    std::vector<double> sink(std::size_t(xdispls[g.p - 1]) + xcounts[g.p - 1]);
    ops.allgatherv(dil.send_dummy.data(), xcounts[g.row], sink.data(), xcounts.data(), xdispls.data(), g.col_comm);
  }
  // U12 = the source rows, in pivot order.
  auto original_top = [&](long r) { return recv.data() + (std::size_t(displs[pr]) + (r - p.r0)) * ncols; };
  std::vector<long> next(g.p);
  for (int i = 0; i < g.p; ++i) next[i] = displs[i] + (i == pr ? jb : 0);
  for (int j = 0; j < jb; ++j) {
    const double* row = src[j] < top_end ? original_top(src[j])
                                         : recv.data() + std::size_t(next[owner_of(src[j], m.nb, g.p)]++) * ncols;
    for (long c = 0; c < ncols; ++c) ubuf[j + c * jb] = row[c];
  }
  // Rows below the top that were swapped out receive their original top row.
  for (const auto& [dest, from] : content) {
    if (dest < top_end || from == dest || owner_of(dest, m.nb, g.p) != g.row) continue;
    const long li = count_below(dest, m.nb, g.row, g.p);
    const double* row = original_top(from);
    for (long c = 0; c < ncols; ++c) m.col(lc0 + c)[li] = row[c];
  }
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, jb, static_cast<int>(ncols), 1.0,
              p.top(), jb, ubuf, jb);
  if (g.row == pr)
    copy_block(jb, ncols, ubuf, jb, m.col(lc0) + count_below(p.r0, m.nb, g.row, g.p), m.lda);
}

u_rows u_of(const matrix& m, const panel& p, long lc, const double* ubuf, long ubuf_lc0) {
  if (m.g.p == 1) return {m.col(lc) + p.r0, m.lda};
  return {ubuf + (lc - ubuf_lc0) * p.jb, p.jb};
}

void update_columns(matrix& m, const panel& p, long lc0, long lc1, u_rows u) {
  const long ncols = lc1 - lc0;
  if (ncols <= 0 || p.ml2 <= 0) return;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(p.ml2), static_cast<int>(ncols), p.jb, -1.0,
              p.l21(), static_cast<int>(p.ml2), u.p, static_cast<int>(u.ld), 1.0, m.col(lc0) + p.lr2,
              static_cast<int>(m.lda));
}

double pack_columns(int nb) {
  // 1024 rows are enough (both the packing and the update grow with m; fewer rows make the
  // fixed cost of a call look like packing); the best of three rounds leaves out a round that
  // lost the core. About 150 Mflop: 3 ms at 50 Gflop/s, counted in the factorisation's time.
  const int m = 1024, w1 = 32, w2 = 160;
  std::vector<double> a(std::size_t(m) * nb, 0.25), b(std::size_t(nb) * w2, 0.5), c(std::size_t(m) * w2, 0.0);
  auto time = [&](int w) {
    double best = 1e30;
    for (int round = 0; round < 3; ++round) {
      const auto t0 = std::chrono::steady_clock::now();
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, w, nb, -1.0, a.data(), m, b.data(), nb, 1.0, c.data(),
                  m);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  const double t1 = time(w1), t2 = time(w2);
  // t(w) = m (a + b w): a / b from the two widths; 0 when the timings make no sense.
  if (!(t2 > t1)) return 0;
  return std::max(0.0, (w2 * t1 - w1 * t2) / (t2 - t1));
}

int panel_tag(long k) { return static_cast<int>(2 * (k % 16000) + 1); }
int dummy_tag(long k) { return panel_tag(k) + 1; }

ring ring_of(const grid& g, long k) {
  ring r{-1, -1};
  if (g.q == 1) return r;
  const int root = static_cast<int>(k % g.q);
  if (g.col != root) r.pred = (g.col - 1 + g.q) % g.q;
  const int next = (g.col + 1) % g.q;
  if (next != root) r.succ = next;
  return r;
}

void panel_bcast::start(const grid& g, const panel& p, const dilation& dil, double* recv_dummy) {
  g_ = &g;
  p_ = p;
  dil_ = &dil;
  recv_dummy_ = recv_dummy;
  r_ = ring_of(g, p.k);
  active_ = true;
  received_ = r_.pred < 0;
  const int count = static_cast<int>(p.count()), extra = static_cast<int>(dil.extra(p.count()));
  if (!received_) {
    check_mpi(MPI_Irecv(p.base, count, MPI_DOUBLE, r_.pred, panel_tag(p.k), g.row_comm, &req_[0]), "MPI_Irecv (panel)");
    if (extra > 0)
      check_mpi(MPI_Irecv(recv_dummy, extra, MPI_DOUBLE, r_.pred, dummy_tag(p.k), g.row_comm, &req_[1]),
                "MPI_Irecv (dilation)");
  } else {
    forward();
  }
}

void panel_bcast::forward() {
  if (r_.succ < 0) return;
  const int count = static_cast<int>(p_.count()), extra = static_cast<int>(dil_->extra(p_.count()));
  check_mpi(MPI_Isend(p_.base, count, MPI_DOUBLE, r_.succ, panel_tag(p_.k), g_->row_comm, &req_[2]),
            "MPI_Isend (panel)");
  if (extra > 0)
    check_mpi(MPI_Isend(dil_->send_dummy.data(), extra, MPI_DOUBLE, r_.succ, dummy_tag(p_.k), g_->row_comm, &req_[3]),
              "MPI_Isend (dilation)");
}

bool panel_bcast::test() {
  if (!active_) return true;
  int done = 0;
  if (!received_) {
    check_mpi(MPI_Testall(2, req_, &done, MPI_STATUSES_IGNORE), "MPI_Testall (panel)");
    if (!done) return false;
    received_ = true;
    forward();
  }
  check_mpi(MPI_Testall(2, req_ + 2, &done, MPI_STATUSES_IGNORE), "MPI_Testall (panel forward)");
  if (done) active_ = false;
  return done != 0;
}

void panel_bcast::wait() {
  if (!active_) return;
  if (!received_) {
    check_mpi(MPI_Waitall(2, req_, MPI_STATUSES_IGNORE), "MPI_Waitall (panel)");
    received_ = true;
    forward();
  }
  check_mpi(MPI_Waitall(2, req_ + 2, MPI_STATUSES_IGNORE), "MPI_Waitall (panel forward)");
  active_ = false;
}

}  // namespace hpl
