// hpl: LU factorisation with partial pivoting of a random N x N system, block-cyclic over a
// P x Q grid, in the three arrangements of seed 004 (docs/hpl.md):
//   simple     factor, broadcast, update (Fig. 2a)
//   lookahead  depth-1 look-ahead with double-buffered panels and probing, as HPL (Fig. 2b)
//   tasks      the simple loop as hytask tasks with dependencies (Fig. 4)
// All three share the kernels and the communication below and differ only in their order.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dense_options.hpp"
#include "granularity.hpp"

namespace hpl {

enum class variant { simple, lookahead, tasks };
const char* name(variant v);

struct options : hytask_apps::dense_options {
  options() { n = 2000, nb = 128; }
  std::vector<variant> variants;
  int window = 4;          // tasks: panels in flight at most (each costs one panel buffer)
  int update_blocks = 0;   // tasks: column blocks per update task; 0: from the measured DGEMM
  double dilation = 0;     // f: each message of S bytes is followed by one of f*S bytes
  double noise_burst_ms = 0, noise_period_ms = 0;  // an extra thread per rank computing bursts
  bool singular = false;   // zero one column: the factorisation must report it
};

using usage_error = hytask_cli::usage_error;
// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv);

// The P x Q grid, row-major as HPL's default PMAP (rank = row * Q + col).
struct grid {
  int p = 1, q = 1, row = 0, col = 0, rank = 0, size = 1;
  MPI_Comm world = MPI_COMM_NULL;
  MPI_Comm row_comm = MPI_COMM_NULL;  // the Q processes of my row; my rank in it is col
  MPI_Comm col_comm = MPI_COMM_NULL;  // the P processes of my column; my rank in it is row
  grid(int p, int q, MPI_Comm world);
  ~grid();
  grid(const grid&) = delete;
  grid& operator=(const grid&) = delete;
};

// Block-cyclic bookkeeping for one dimension: nb-blocks dealt round-robin to np processes.
inline int owner_of(long g, int nb, int np) { return static_cast<int>((g / nb) % np); }
// How many of the indices 0..g-1 process ip owns: the local index of the first one >= g.
long count_below(long g, int nb, int ip, int np);
inline long global_of(long l, int nb, int ip, int np) { return (l / nb) * nb * np + long(ip) * nb + l % nb; }

// The local part of the N x (N+1) matrix [A | b], column-major. b is column N, so the
// factorisation also performs the forward substitution, as in HPL.
struct matrix {
  const grid& g;
  long n;
  int nb;
  long mloc, nloc, lda;
  double* a = nullptr;
  matrix(const grid& g, long n, int nb);
  ~matrix();
  matrix(const matrix&) = delete;
  matrix& operator=(const matrix&) = delete;
  double* col(long lj) const { return a + lj * lda; }
  long panels() const { return (n + nb - 1) / nb; }
};

// The value of A(i, j) (j == n: b(i)): uniform in [-0.5, 0.5), a pure function of
// (seed, i, j) so that the residual check regenerates the matrix instead of keeping a copy.
double element(std::uint64_t seed, long n, long i, long j, bool singular);
void generate(matrix& m, std::uint64_t seed, bool singular);

// Panel k: global columns [k*nb, k*nb + jb). Its broadcast buffer holds, for my process row,
// the jb pivots (global row indices, as doubles), the jb x jb diagonal block [L11\U11] and
// the ml2 x jb block L21 of my rows below it. All column-major.
struct panel {
  long k, r0;    // r0 = k * nb: the first global row and column
  int jb;
  long ml2;      // my rows at or below r0 + jb
  long lr2;      // local index of the first of them
  double* base;  // count() doubles
  double* piv() const { return base; }
  double* top() const { return base + jb; }
  double* l21() const { return base + jb + long(jb) * jb; }
  long count() const { return jb + long(jb) * jb + ml2 * jb; }
};
panel panel_at(const matrix& m, long k, double* storage);
long panel_capacity(const matrix& m);  // doubles for the largest panel of my process row

// The collectives the kernels need along a process column. The plain variants use MPI's
// blocking calls, the tasks variant hytask's task-aware ones (they suspend only the task).
struct column_ops {
  virtual ~column_ops() = default;
  virtual void allreduce(void* inout, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) = 0;
  virtual void allgatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
                          MPI_Comm comm) = 0;  // doubles
};
struct plain_column_ops final : column_ops {
  void allreduce(void* inout, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) override;
  void allgatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
                  MPI_Comm comm) override;
};

// Bandwidth dilation (seed 004 §6.3): after every message of S bytes, one of f*S bytes
// between dummy buffers. A dilation owns the send side; receivers bring their own buffer.
struct dilation {
  double f = 0;
  std::vector<double> send_dummy;
  void reserve(long doubles);  // the largest message that will be dilated
  long extra(long doubles) const { return f > 0 ? static_cast<long>(f * doubles) : 0; }
};

// The kernels. Each touches only the local columns it is given.
// Factors panel k in place (every process of the panel's column calls it) and fills the
// panel buffer p. Returns 0, or 1 + the global column of the first exactly zero pivot.
long factor_panel(matrix& m, const panel& p, column_ops& ops);
// Applies panel p's row interchanges to local columns [lc0, lc1), solves U12 = L11^-1 U12
// and leaves U12 (jb x (lc1 - lc0)) where u_rows() says. In 2-D the interchanges move rows
// between processes: one coarse collective on the column (seed 004 §5.2), into `ubuf`.
void pivot_columns(matrix& m, const panel& p, long lc0, long lc1, double* ubuf, column_ops& ops,
                   const dilation& dil);
// Where U12 of local column lc is after pivot_columns: the matrix itself in 1-D, else ubuf.
struct u_rows {
  const double* p;
  long ld;
};
u_rows u_of(const matrix& m, const panel& p, long lc, const double* ubuf, long ubuf_lc0);
// A22 -= L21 * U12 on local columns [lc0, lc1).
void update_columns(matrix& m, const panel& p, long lc0, long lc1, u_rows u);
long ubuf_capacity(const matrix& m);  // doubles of ubuf for the widest pivot_columns call

// Local columns of the trailing matrix of panel k: [trailing_begin, nloc).
long trailing_begin(const matrix& m, const panel& p);
// The local columns of global block b, clipped to [lc_from, nloc): empty unless mine.
void block_columns(const matrix& m, long b, long lc_from, long& lc0, long& lc1);

// The panel's broadcast along the process row: an increasing ring from the owning column,
// each process receiving from its predecessor and forwarding to its successor (HPL's 1ring,
// the point-to-point form seed 004 taskified). Non-blocking: start, then test or wait.
int panel_tag(long k);
int dummy_tag(long k);
struct ring {
  int pred, succ;  // -1: none
};
ring ring_of(const grid& g, long k);

class panel_bcast {
 public:
  panel_bcast() = default;
  void start(const grid& g, const panel& p, const dilation& dil, double* recv_dummy);
  bool test();  // advances: forwards on arrival; true when my part is complete
  void wait();

 private:
  void forward();
  const grid* g_ = nullptr;
  panel p_{};
  const dilation* dil_ = nullptr;
  double* recv_dummy_ = nullptr;
  ring r_{};
  MPI_Request req_[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  bool received_ = false, active_ = false;
};

// Back substitution U x = y (y: the factored b column); every process gets all of x.
std::vector<double> solve(const matrix& m);

struct residual {
  double scaled = 0;  // ||Ax-b||_oo / (eps * (||A||_oo * ||x||_oo + ||b||_oo) * N)
  bool passed = false;
};
residual check(const matrix& m, std::uint64_t seed, bool singular, const std::vector<double>& x);

// One factorisation by one variant. Returns the info of factor_panel, agreed by all ranks.
struct run_args {
  const options& o;
  matrix& m;
  dilation& dil;
  double pack_columns = 0;  // out, tasks without --update-blocks: the measured pack_columns()
};
// a / b of granularity.hpp's cost model, from a few small DGEMMs of the update's shape
// (k = nb) timed on this core (about 3 ms); 0 when the timings make no sense.
double pack_columns(int nb);

long run_simple(run_args& a);
long run_lookahead(run_args& a);
long run_tasks(run_args& a);

// Seed 004 §6.4's OS noise: a thread that computes for `burst` every `period`.
class noise {
 public:
  noise(double burst_ms, double period_ms);
  ~noise();
  noise(const noise&) = delete;
  noise& operator=(const noise&) = delete;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace hpl
