// The communication class learned by the runtime, end to end: a task type that posted an MPI
// operation once starts ahead of ordinary tasks the next time it is spawned. Run with one
// worker per rank, so that the order is the scheduler's alone.
//   comm_priority on|off     (what HYTASK_COMM_PRIORITY says; the expected orders differ)
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "test_fail.hpp"

namespace mpi = hytask::mpi;

namespace {

int g_rank = 0;

using hytask_test::fail;

std::string show(const std::vector<std::string>& order) {
  std::string s;
  for (const std::string& o : order) s += (s.empty() ? "" : " ") + o;
  return s;
}

// One round: ordinary tasks, then (spawned last) a task that exchanges a message with the
// peer. Always the same callable type, so that the runtime can learn it.
std::vector<std::string> round(int peer, int tag) {
  std::vector<std::string> order;
  for (int i = 0; i < 8; ++i) hytask::spawn([&order] { order.push_back("compute"); });
  hytask::spawn([&order, peer, tag] {
    order.push_back("exchange");
    int out = g_rank, in = -1;
    mpi::request r = mpi::irecv(std::span(&in, 1), peer, tag);
    mpi::send(std::span(&out, 1), peer, tag);
    mpi::wait(r);
    if (in != peer) fail("received " + std::to_string(in));
  });
  hytask::wait_all();
  return order;
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  g_rank = mpi::rank();
  if (argc != 2 || (std::strcmp(argv[1], "on") != 0 && std::strcmp(argv[1], "off") != 0)) {
    std::fprintf(stderr, "usage: comm_priority on|off\n");
    return 2;
  }
  const bool on = std::strcmp(argv[1], "on") == 0;
  if (rt.settings().threads != 1 || rt.settings().comm_priority != on) fail("run with HYTASK_THREADS=1 and HYTASK_COMM_PRIORITY matching the argument");
  const int peer = g_rank ^ 1;
  if (peer >= mpi::size()) fail("needs an even number of ranks");
  std::vector<std::string> first = round(peer, 1);
  if (first.back() != "exchange") fail("first round, spawn order expected: " + show(first));
  for (int r = 0; r < 3; ++r) {
    std::vector<std::string> later = round(peer, 2 + r);
    const bool ahead = later.front() == "exchange";
    if (ahead != on)
      fail(std::string("round ") + std::to_string(r + 2) + ", the exchange should start " +
           (on ? "first (learned communication class)" : "last (HYTASK_COMM_PRIORITY=0)") + ": " + show(later));
  }
  mpi::barrier();
  if (g_rank == 0) std::printf("comm_priority %s: all checks passed\n", argv[1]);
  return 0;
}
