// A ping-pong between two ranks, written as tasks, beside compute tasks.
//
//   mpiexec -n 2 build/examples/mpi_pingpong [--rounds N] [--bytes B] [--compute C]
//
// Rank 0's "ping" task sends a message and receives the answer, N times; rank 1's "pong"
// task receives and answers. Every send and recv suspends only its task: while it waits for
// its peer, the workers of the same rank run the C "compute" tasks (20 us each) spawned
// beside it. The program checks the payload of every round trip, then prints the time per
// round trip and when the ping-pong and the compute tasks finished.
//
// How soon a waiting task learns that its message arrived, while every worker is busy,
// depends on who polls MPI (HYTASK_PROGRESS, docs/mpi.md): with `workers` (the default)
// busy workers poll between tasks, and with `thread` a sleeping progress thread does, so the
// ping-pong runs along with the compute tasks; with `none` only idle workers poll, so it
// finishes after them. Idle workers poll under every policy.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "example_args.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double spin_for_us(double us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(us);
  double x = 1;
  while (std::chrono::steady_clock::now() < until) x = x * 1.0000001 + 1e-9;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 2000;
  std::size_t bytes = 8;
  long compute = 20000;
  for (int i = 1; i < argc; ++i) {  // before the runtime: a bad option ends every rank alike
    std::string a = argv[i];
    if (a == "--rounds") rounds = static_cast<int>(example::option_value("mpi_pingpong", argc, argv, i, 1, 1 << 30));
    else if (a == "--bytes") bytes = static_cast<std::size_t>(example::option_value("mpi_pingpong", argc, argv, i, 0, 1L << 30));
    else if (a == "--compute") compute = example::option_value("mpi_pingpong", argc, argv, i);
    else {
      std::fprintf(stderr, "usage: mpi_pingpong [--rounds N] [--bytes B] [--compute C]\n");
      return 2;
    }
  }
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank();
  if (hytask::mpi::size() != 2) {
    if (rank == 0) std::fprintf(stderr, "mpi_pingpong: run it on 2 ranks (mpiexec -n 2)\n");
    return 2;
  }
  const int peer = 1 - rank;
  std::vector<unsigned char> msg(std::max<std::size_t>(bytes, 4));
  std::atomic<long> computed{0};
  const long compute_total = compute;
  double pingpong_end = 0, compute_end = 0;
  const auto t_start = std::chrono::steady_clock::now();
  bool payload_ok = true;
  double seconds = 0;

  // The task declares the channel it talks on: that orders it against other tasks using the
  // channel (there are none here) and puts it in the high priority class, ahead of the
  // compute tasks (HYTASK_COMM_PRIORITY=1, the default).
  hytask::spawn({.name = rank == 0 ? "ping" : "pong"}, [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < rounds; ++r) {
      if (rank == 0) {
        std::memcpy(msg.data(), &r, sizeof r);
        hytask::mpi::send(msg, peer, 0);
        hytask::mpi::recv(msg, peer, 0);
        int back = 0;
        std::memcpy(&back, msg.data(), sizeof back);
        payload_ok = payload_ok && back == r + 1;  // the pong task added one
      } else {
        hytask::mpi::recv(msg, peer, 0);
        int v = 0;
        std::memcpy(&v, msg.data(), sizeof v);
        payload_ok = payload_ok && v == r;
        ++v;
        std::memcpy(msg.data(), &v, sizeof v);
        hytask::mpi::send(msg, peer, 0);
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pingpong_end = seconds_since(t_start);
  }, hytask::mpi::channel(peer, 0));
  // Compute tasks beside the ping-pong.
  for (long i = 0; i < compute; ++i)
    hytask::spawn({.name = "compute"}, [&computed, &compute_end, t_start, compute_total] {
      volatile double sink = spin_for_us(20);
      (void)sink;
      if (computed.fetch_add(1, std::memory_order_relaxed) + 1 == compute_total)
        compute_end = seconds_since(t_start);
    });
  hytask::wait_all();

  int ok = payload_ok ? 1 : 0, all_ok = 0;
  hytask::mpi::allreduce(std::span(&ok, 1), std::span(&all_ok, 1), MPI_MIN);
  if (rank == 0) {
    std::printf("ping-pong: %d round trips of %zu bytes in tasks, %.2f us per round trip\n",
                rounds, bytes, 1e6 * seconds / rounds);
    std::printf("rank 0: ping-pong done at %.3f s, %ld compute tasks done at %.3f s (%u workers)\n",
                pingpong_end, computed.load(), compute_end, hytask::worker_count());
    std::printf("payload checks: %s\n", all_ok ? "ok" : "FAILED");
  }
  return all_ok ? 0 : 1;
}
