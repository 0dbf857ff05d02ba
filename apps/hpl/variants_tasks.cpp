// Seed 004 Fig. 4: the simple loop, each step a task with its data dependencies. hytask's
// task-aware MPI suspends only the task that waits for a message, the panel's factorisation,
// communication and the update of the next panel run at high priority, and the look-ahead
// depth is whatever the dependencies allow within --window panel buffers.
#include <algorithm>
#include <atomic>
#include <climits>
#include <vector>

#include "hpl.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace hpl {

namespace {

namespace mpi = hytask::mpi;

struct task_column_ops final : column_ops {
  void allreduce(void* inout, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) override {
    mpi::allreduce(MPI_IN_PLACE, inout, count, type, op, comm);
  }
  void allgatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
                  MPI_Comm comm) override {
    mpi::allgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, comm);
  }
};

constexpr int high = 1;

}  // namespace

long run_tasks(run_args& a) {
  matrix& m = a.m;
  const grid& g = m.g;
  const dilation& dil = a.dil;
  task_column_ops ops;
  const long npanels = m.panels();
  const int W = static_cast<int>(std::min<long>(a.o.window, npanels));
  const long cap = panel_capacity(m), extra = dil.extra(cap);
  std::vector<std::vector<double>> pbuf(W, std::vector<double>(cap)), dummy(W, std::vector<double>(extra));
  std::vector<std::vector<double>> ubuf(g.p > 1 ? W : 0, std::vector<double>(ubuf_capacity(m)));
  std::atomic<long> first_zero{LONG_MAX};
  // Breadth before depth: the updates of panel k (but the first block) start only when every
  // update of panel k - D is done. Without it a worker followed one column through panel
  // after panel (the next slot runs the task its predecessor released), the oldest panel's
  // updates came last, its buffer stayed busy, and the receive of panel k + W was posted up
  // to 800 ms after the other rank had sent it (traces, N = 8000, dilation 3): its transfer,
  // on the critical path, waited for the post. `done` tokens: the updates of panel k read
  // done[k % W]; a drain task writes it after them and then opens gate[k % W].
  const long D = std::max(1, W - 2);
  std::vector<char> done(W), gate(W);
  const bool two_d = g.p > 1;
  // The width of the update tasks: --update-blocks, or from the DGEMM's measured packing cost.
  const int workers = static_cast<int>(hytask::worker_count());
  a.pack_columns = a.o.update_blocks > 0 ? 0 : pack_columns(m.nb);
  auto chunk_width = [&](long cols) {
    return a.o.update_blocks > 0 ? long(m.nb) * a.o.update_blocks
                                 : update_width(cols, m.nb, workers, a.pack_columns);
  };

  auto columns = [&](long lc0, long lc1) { return hytask::inout(m.col(lc0), std::size_t(lc1 - lc0) * m.lda); };
  // A task that calls collectives on the process column declares it, so that every process
  // of the column posts them in the same (spawn) order.
  auto spawn_on_column = [&](bool collective, hytask::task_options opts, auto&& body, const auto&... acc) {
    if (collective) hytask::spawn(opts, body, acc..., mpi::collective(g.col_comm));
    else hytask::spawn(opts, body, acc...);
  };

  auto factor = [&](long k) {
    const panel p = panel_at(m, k, pbuf[k % W].data());
    if (owner_of(p.r0, m.nb, g.q) != g.col) return;
    const long lc = count_below(p.r0, m.nb, g.col, g.q);
    spawn_on_column(two_d, {.priority = high, .name = "factor"},
                    [&m, &ops, &first_zero, p] {
                      const long i = factor_panel(m, p, ops);
                      if (i) {
                        long cur = first_zero.load();
                        while (i < cur && !first_zero.compare_exchange_weak(cur, i)) {
                        }
                      }
                    },
                    columns(lc, lc + p.jb), hytask::out(p.base, std::size_t(p.count())));
  };

  // The ring broadcast of panel k, every message its own task (seed 004 Fig. 3). With
  // dilation, the extra message is a task of its own too: the panel's consumers depend on the
  // panel only, while the extra bytes still cross the same link behind it. (The plain
  // variants' broadcast, as HPL's, completes when both have arrived.)
  auto broadcast = [&](long k) {
    const panel p = panel_at(m, k, pbuf[k % W].data());
    const ring r = ring_of(g, k);
    double* sink = dummy[k % W].data();
    const int count = static_cast<int>(p.count()), x = static_cast<int>(dil.extra(p.count()));
    const auto panel_bytes = std::size_t(p.count());
    auto transfer = [&g](bool send, double* buf, int n, int peer, int tag) {
      return [&g, send, buf, n, peer, tag] {
        mpi::request req = send ? mpi::isend(buf, n, MPI_DOUBLE, peer, tag, g.row_comm)
                                : mpi::irecv(buf, n, MPI_DOUBLE, peer, tag, g.row_comm);
        mpi::wait(req);
      };
    };
    if (r.pred >= 0) {
      hytask::spawn({.priority = high, .name = "receive panel"}, transfer(false, p.base, count, r.pred, panel_tag(k)),
                    hytask::out(p.base, panel_bytes));
      if (x > 0)
        hytask::spawn({.priority = high, .name = "receive dilation"}, transfer(false, sink, x, r.pred, dummy_tag(k)),
                      hytask::out(sink, std::size_t(x)));
    }
    if (r.succ < 0) return;
    if (r.pred < 0) {  // the root: the panel first, then its extra bytes, in one task
      hytask::spawn({.priority = high, .name = "send panel"},
                    [&g, &dil, p, r, count, x] {
                      std::vector<mpi::request> req;
                      req.push_back(mpi::isend(p.base, count, MPI_DOUBLE, r.succ, panel_tag(p.k), g.row_comm));
                      if (x > 0)
                        req.push_back(
                            mpi::isend(dil.send_dummy.data(), x, MPI_DOUBLE, r.succ, dummy_tag(p.k), g.row_comm));
                      mpi::waitall(req);
                    },
                    hytask::in(p.base, panel_bytes));
      return;
    }
    // Inside the ring: forward each message when it has arrived.
    hytask::spawn({.priority = high, .name = "forward panel"}, transfer(true, p.base, count, r.succ, panel_tag(k)),
                  hytask::in(p.base, panel_bytes));
    if (x > 0)
      hytask::spawn({.priority = high, .name = "forward dilation"}, transfer(true, sink, x, r.succ, dummy_tag(k)),
                    hytask::in(sink, std::size_t(x)));
  };

  // The update of block k+1 by panel k: on the critical path when k+1 is my panel.
  auto update_next = [&](long k) {
    const panel p = panel_at(m, k, pbuf[k % W].data());
    long la0 = 0, la1 = 0;
    if (k + 1 < npanels) block_columns(m, k + 1, trailing_begin(m, p), la0, la1);
    if (la1 <= la0) return;
    double* u = two_d ? ubuf[k % W].data() + la0 * p.jb : nullptr;
    spawn_on_column(two_d, {.priority = high, .name = "update next panel"},
                    [&m, &ops, &dil, p, la0, la1, u] {
                      pivot_columns(m, p, la0, la1, u, ops, dil);
                      update_columns(m, p, la0, la1, u_of(m, p, la0, u, la0));
                    },
                    hytask::in(p.base, std::size_t(p.count())), columns(la0, la1),
                    hytask::out(u, u ? std::size_t(la1 - la0) * p.jb : 0), hytask::in(&done[k % W], 1));
  };

  // The rest of panel k's update, in chunks of chunk_width() columns. Its first block, when
  // it is mine, is the next panel I will factor: a chunk of its own, spawned first so that it
  // starts before the rest (equal priorities start in spawn order). It stays at priority 0:
  // at high priority it ran before the next panel's update and factorisation and before the
  // send, and lengthened every step of the critical path (fact -> send -> update of the
  // first unfinished panel -> fact, seed 004 §5.1) by two block updates.
  auto update_rest = [&](long k) {
    const panel p = panel_at(m, k, pbuf[k % W].data());
    const long lc_tr = trailing_begin(m, p);
    long la0 = 0, la1 = 0;
    if (k + 1 < npanels) block_columns(m, k + 1, lc_tr, la0, la1);
    const long rest0 = la1 > la0 ? la1 : lc_tr;
    if (rest0 >= m.nloc) return;
    // Chunks: the first block alone, then `width` columns each.
    std::vector<std::pair<long, long>> chunks;
    const long first_end = std::min(m.nloc, (rest0 / m.nb + 1) * m.nb);
    const long width = chunk_width(m.nloc - first_end);
    chunks.emplace_back(rest0, first_end);
    for (long c0 = first_end; c0 < m.nloc; c0 += width) chunks.emplace_back(c0, std::min(m.nloc, c0 + width));
    auto opts = [&](std::size_t i) {
      return hytask::task_options{.priority = 0, .name = i == 0 ? "update first block" : "update"};
    };
    auto order = [&](std::size_t i) {  // the first block is not held back
      return hytask::in(&gate[(k - D + W * D) % W], i > 0 && k >= D ? 1 : 0);
    };
    const auto mine = hytask::in(&done[k % W], 1);
    if (!two_d) {
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        const auto [c0, c1] = chunks[i];
        hytask::spawn(opts(i),
                      [&m, &ops, &dil, p, c0, c1] {
                        pivot_columns(m, p, c0, c1, nullptr, ops, dil);
                        update_columns(m, p, c0, c1, u_of(m, p, c0, nullptr, c0));
                      },
                      hytask::in(p.base, std::size_t(p.count())), columns(c0, c1), mine, order(i));
      }
      return;
    }
    // 2-D: the row interchanges of all these columns are one coarse task (seed 004 §5.2).
    double* u = ubuf[k % W].data() + rest0 * p.jb;
    spawn_on_column(true, {.priority = high, .name = "pivot"},
                    [&m, &ops, &dil, p, rest0, u] { pivot_columns(m, p, rest0, m.nloc, u, ops, dil); },
                    hytask::in(p.base, std::size_t(p.count())), columns(rest0, m.nloc),
                    hytask::out(u, std::size_t(m.nloc - rest0) * p.jb));
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const auto [c0, c1] = chunks[i];
      const double* uc = u + (c0 - rest0) * p.jb;
      hytask::spawn(opts(i), [&m, p, c0, c1, uc] { update_columns(m, p, c0, c1, u_of(m, p, c0, uc, c0)); },
                    hytask::in(p.base, std::size_t(p.count())), hytask::in(uc, std::size_t(c1 - c0) * p.jb),
                    columns(c0, c1), mine, order(i));
    }
  };

  // Program order: the next panel's factorisation is spawned before this panel's remaining
  // update. In 1-D that changes nothing (the dependencies are the same); in 2-D it puts the
  // factorisation's collectives before the coarse pivoting's in the column's order.
  factor(0);
  for (long k = 0; k < npanels; ++k) {
    broadcast(k);
    update_next(k);
    if (k + 1 < npanels) factor(k + 1);
    update_rest(k);
    hytask::spawn({.name = "panel updated"}, [] {}, hytask::inout(&done[k % W], 1), hytask::out(&gate[k % W], 1));
  }
  hytask::wait_all();
  const long z = first_zero.load();
  return z == LONG_MAX ? 0 : z;
}

}  // namespace hpl
