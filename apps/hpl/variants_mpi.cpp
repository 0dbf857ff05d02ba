// The plain MPI variants: one thread per rank, the order written out by hand.
#include <algorithm>
#include <vector>

#include "hpl.hpp"

namespace hpl {

// Seed 004 Fig. 2a: factor, broadcast, update; every step waits for the one before.
long run_simple(run_args& a) {
  matrix& m = a.m;
  const grid& g = m.g;
  plain_column_ops ops;
  std::vector<double> pbuf(panel_capacity(m)), ubuf(g.p > 1 ? ubuf_capacity(m) : 0);
  std::vector<double> dummy(a.dil.extra(panel_capacity(m)));
  long info = 0;
  for (long k = 0; k < m.panels(); ++k) {
    const panel p = panel_at(m, k, pbuf.data());
    if (owner_of(p.r0, m.nb, g.q) == g.col) {
      const long i = factor_panel(m, p, ops);
      if (!info) info = i;
    }
    panel_bcast b;
    b.start(g, p, a.dil, dummy.data());
    b.wait();
    const long lc0 = trailing_begin(m, p);
    pivot_columns(m, p, lc0, m.nloc, ubuf.data(), ops, a.dil);
    update_columns(m, p, lc0, m.nloc, u_of(m, p, lc0, ubuf.data(), lc0));
  }
  return info;
}

// Seed 004 Fig. 2b, HPL's depth-1 look-ahead: the owner of the next panel updates and factors
// it first and starts its broadcast; then everyone updates the rest of the trailing matrix a
// block at a time, probing the broadcast between blocks so that it moves (and is forwarded)
// while the update runs. Two panel buffers alternate.
long run_lookahead(run_args& a) {
  matrix& m = a.m;
  const grid& g = m.g;
  plain_column_ops ops;
  const long cap = panel_capacity(m);
  std::vector<double> pbuf[2] = {std::vector<double>(cap), std::vector<double>(cap)};
  std::vector<double> dummy[2] = {std::vector<double>(a.dil.extra(cap)), std::vector<double>(a.dil.extra(cap))};
  std::vector<double> ubuf(g.p > 1 ? ubuf_capacity(m) : 0);
  panel_bcast bc[2];
  long info = 0;
  auto note = [&](long i) {
    if (!info) info = i;
  };
  {
    const panel p0 = panel_at(m, 0, pbuf[0].data());
    if (owner_of(0, m.nb, g.q) == g.col) note(factor_panel(m, p0, ops));
    bc[0].start(g, p0, a.dil, dummy[0].data());
  }
  for (long k = 0; k < m.panels(); ++k) {
    const int s = static_cast<int>(k & 1), t = s ^ 1;
    const panel p = panel_at(m, k, pbuf[s].data());
    bc[s].wait();
    const long lc_tr = trailing_begin(m, p);
    const bool has_next = k + 1 < m.panels();
    long la0 = 0, la1 = 0;
    if (has_next) block_columns(m, k + 1, lc_tr, la0, la1);
    if (la1 > la0) {  // the next panel is mine: update it, factor it, send it on its way
      pivot_columns(m, p, la0, la1, ubuf.data(), ops, a.dil);
      update_columns(m, p, la0, la1, u_of(m, p, la0, ubuf.data(), la0));
      const panel pn = panel_at(m, k + 1, pbuf[t].data());
      note(factor_panel(m, pn, ops));
      bc[t].start(g, pn, a.dil, dummy[t].data());
    } else if (has_next) {
      bc[t].start(g, panel_at(m, k + 1, pbuf[t].data()), a.dil, dummy[t].data());  // post the receive early
    }
    const long rest0 = la1 > la0 ? la1 : lc_tr;
    if (g.p > 1) pivot_columns(m, p, rest0, m.nloc, ubuf.data(), ops, a.dil);  // one collective
    for (long c0 = rest0; c0 < m.nloc; c0 += m.nb) {
      const long c1 = std::min(m.nloc, c0 + m.nb);
      if (g.p == 1) pivot_columns(m, p, c0, c1, nullptr, ops, a.dil);
      update_columns(m, p, c0, c1, u_of(m, p, c0, ubuf.data(), rest0));
      if (has_next) bc[t].test();
    }
  }
  return info;
}

}  // namespace hpl
