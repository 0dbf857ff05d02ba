// The simulator against what must hold whatever the parameters: exact times where the run is
// serial, lower bounds from the critical path, the network's bandwidth and latency and the
// machine's cores, per-rank costs in weak scaling, and a program that cannot finish.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "program.hpp"
#include "simulator.hpp"

using namespace hytask::sim;

namespace {

params fixed(std::size_t kernels, double seconds) {
  params p;
  p.kernel_seconds.assign(kernels, seconds);
  p.spawn = 0;
  p.task_overhead = 0;
  p.post = 0;
  return p;
}

params free_network(params p) {
  p.net = loggp{0, 0, 0};
  return p;
}

double max_bytes_sent(const result& r) {
  std::uint64_t b = 0;
  for (const auto& rr : r.ranks) b = std::max(b, rr.bytes);
  return static_cast<double>(b);
}

}  // namespace

TEST(Sim, OneRankRunsEveryTaskOnceBackToBack) {
  // nt = 8: 8 potrf, 28 trsm, 28 syrk, 56 gemm.
  const auto m = make_cholesky({2048, 256}, grid{1, 1});
  const result r = simulate(*m, fixed(4, 1e-3));
  EXPECT_EQ(r.tasks, 120u);
  EXPECT_NEAR(r.seconds, 0.120, 1e-9);
  EXPECT_EQ(r.ranks[0].messages, 0u);
  EXPECT_NEAR(r.ranks[0].busy, 0.120, 1e-9);
}

TEST(Sim, QrOnOneRankHasTheTiledAlgorithmsTasks) {
  // nt = 4: per step k, 1 geqrt, 3 - k gemqrt, 3 - k tsqrt, (3 - k)^2 tsmqr: 30 in all;
  // and in steps 0-2 gemqrt's copyin of A_kk, a copy of this rank's tile (one per step).
  const auto m = make_qr({0, 1024, 256, 32}, grid{1, 1});
  params p = fixed(5, 2e-3);
  p.copy_bytes_per_second = 256.0 * 256 * 8 / 1e-3;  // a tile in 1 ms
  const result r = simulate(*m, p);
  EXPECT_EQ(r.tasks, 33u);
  EXPECT_NEAR(r.seconds, 0.063, 1e-9);
}

TEST(Sim, WorkersOfOneRankShareItsWorkWithinTheCriticalPath) {
  params p = fixed(4, 1e-3);
  p.workers = 4;
  const auto m = make_cholesky({2048, 256}, grid{1, 1});
  const result r = simulate(*m, p);
  // The critical path: potrf, trsm, syrk of each step but the last (potrf only): 3·8 - 2.
  EXPECT_GE(r.seconds, 0.022 - 1e-9);
  EXPECT_GE(r.seconds, 0.120 / 4 - 1e-9);
  EXPECT_LT(r.seconds, 0.060) << "four workers should at least halve a 120 ms run";
}

TEST(Sim, TwoRanksRunEveryTaskOnceAndMoveTiles) {
  const auto m = make_cholesky({2048, 256}, grid{1, 2});
  const result r = simulate(*m, free_network(fixed(4, 1e-3)));
  std::uint64_t transfers = 0, compute = 0;
  for (const auto& rr : r.ranks) {
    transfers += rr.transfers;
    compute += rr.tasks - rr.transfers;
    EXPECT_GT(rr.messages, 0u);
  }
  EXPECT_EQ(compute, 120u);
  EXPECT_GT(transfers, 0u);
  // No rank can finish before the work it owns, nor before the critical path.
  double most = 0;
  for (const auto& rr : r.ranks) most = std::max(most, rr.busy);
  EXPECT_GE(r.seconds, most - 1e-9);
  EXPECT_GE(r.seconds, 0.022 - 1e-9);
  EXPECT_LT(r.seconds, 0.120) << "two ranks on a free network should beat one";
}

TEST(Sim, NoRankSendsFasterThanItsLink) {
  params p = fixed(4, 1e-6);
  p.net = loggp{0, 0, 8e-9};  // 1 Gbit/s
  const auto m = make_cholesky({4096, 256}, grid{2, 2});
  const result r = simulate(*m, p);
  EXPECT_GE(r.seconds, max_bytes_sent(r) * 8e-9);
  EXPECT_GT(max_bytes_sent(r), 256.0 * 256 * 8 * 16) << "a 2 x 2 grid moves at least a panel per step";
}

TEST(Sim, EveryStepCrossesTheLatency) {
  // With free kernels the run is a chain of hand-overs: potrf's tile to the column's other
  // ranks, trsm's results along rows and columns, each at least one latency.
  params p = fixed(4, 1e-9);
  p.net = loggp{1e-3, 0, 0};
  const auto m = make_cholesky({2048, 256}, grid{1, 2});
  const result r = simulate(*m, p);
  EXPECT_GE(r.seconds, 7 * 1e-3);
}

TEST(Sim, RanksSharingACoreTakeTheirTurns) {
  const auto m = make_cholesky({2048, 256}, grid{1, 2});
  params p = free_network(fixed(4, 1e-3));
  p.host_cores = 1;
  const result shared = simulate(*m, p);
  EXPECT_GE(shared.seconds, 0.120 - 1e-6) << "120 ms of kernels on one core";
  p.host_cores = 2;
  const result split = simulate(*m, p);
  EXPECT_LT(split.seconds, shared.seconds * 0.9);
}

TEST(Sim, MessagesPerTransferStayFlatInWeakScaling) {
  // The same tiles per rank (4 x 4 of them) at 4, 16 and 64 ranks: what a tile's transfer
  // costs in messages (its records, the rendezvous, the data, acknowledgements, and the
  // rounds' share) must not grow with the ranks. (Transfers per task do grow, slowly: a
  // panel tile goes to its process row and column, p + q ranks.)
  double first = 0;
  for (int side : {2, 4, 8}) {
    const long n = 256L * 4 * side;
    const auto m = make_cholesky({n, 256}, grid{side, side});
    const result r = simulate(*m, fixed(4, 1e-4));
    double messages = 0, transfers = 0;
    for (const auto& rr : r.ranks) {
      messages += static_cast<double>(rr.messages);
      transfers += static_cast<double>(rr.transfers);
    }
    const double per_transfer = messages / transfers;
    if (first == 0) first = per_transfer;
    EXPECT_LT(per_transfer, first * 1.1) << side * side << " ranks";
    EXPECT_GT(per_transfer, 3.0) << "a transfer takes at least its A, B and data messages";
  }
}

namespace {
// Rank 0 fences; rank 1 never does: the round cannot end.
class unmatched_fence final : public app_model {
 public:
  std::string name() const override { return "unmatched"; }
  const std::vector<std::string>& kernels() const override { return names_; }
  double flops() const override { return 1; }
  int ranks() const override { return 2; }
  std::uint64_t bytes(std::uint64_t) const override { return 8; }
  generator<op> program(int rank) const override { return run(rank); }

 private:
  static generator<op> run(int rank) {
    co_yield spawn(0, inout(place{tile_key(0, static_cast<std::uint64_t>(rank)), rank, 8}));
    if (rank == 0) co_yield fence();
    co_yield wait_all();
  }
  std::vector<std::string> names_{"work"};
};
}  // namespace

TEST(Sim, AProgramThatCannotFinishIsReportedWithEachRanksState) {
  unmatched_fence m;
  try {
    simulate(m, fixed(1, 1e-3));
    FAIL() << "the simulation finished";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot finish"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0: main"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1: main"), std::string::npos) << what;
  }
}
