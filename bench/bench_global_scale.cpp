// What global dependencies cost each rank as ranks are added (weak scaling: the same work
// per rank at any P; counts, not times, so oversubscribed runs on one machine are valid).
//
//   mpiexec -n P build/bench/bench_global_scale [--block B] [--phases K]
//
// A global_array of B elements per rank. Even phases: each rank writes its own block, one
// task per element (local accesses). Odd phases: each rank reads B elements of its two
// neighbours' blocks (B/2 from each, ring order), one task per element: half with in (a
// remote access: announce, release, completion) and half with copyin (the owner sends the
// data). A fence between phases, a collective wait_all at the end.
//
// Prints one line, on rank 0, of per-rank figures averaged over the ranks (and the largest
// rank's where it differs): protocol records and coalesced buffers per remote access, bytes
// per remote access, rounds per phase, the messages and bytes each rank sends to end a round
// (acknowledgements of the announcement buffers it received, and at wait_all one count per
// rank it sent completions to; besides them each round is one 16-byte MPI_Iallreduce, which
// is not counted), and the global layer's peak state (tasks, ordered accesses, chains)
// sampled after each phase's discovery.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "hytask/global.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace {

struct options {
  long block = 64;
  int phases = 20;
};

// `text` as an even integer from 2 to 1000000 (an odd one is rounded down).
long even(const std::string& opt, const std::string& text) {
  long v = 0;
  try {
    v = hytask_cli::parse_integer(opt, text, 2, 1000000);
  } catch (const hytask_cli::usage_error&) {
    throw hytask_cli::usage_error(opt + " '" + text + "': an integer from 2 to 1000000");
  }
  return v / 2 * 2;
}

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "bench_global_scale", "[--block B] [--phases K]   (under mpiexec -n P)",
      "What global dependencies cost each rank as ranks are added (weak scaling): a global_array of\n"
      "B elements per rank, K phases alternating local writes and reads of the neighbours' blocks.\n"
      "Prints one line, on rank 0, of per-rank protocol counts (see bench/bench_global_scale.cpp).");
  cli.custom("--block", "B", [&o](const std::string& v) { o.block = even("--block", v); },
             "elements per rank, 2 to 1000000, rounded down to even (default 64)");
  cli.custom("--phases", "K", [&o](const std::string& v) { o.phases = static_cast<int>(even("--phases", v)); },
             "phases, 2 to 1000000, rounded down to even (default 20)");
  return cli.parse(argc, argv, print_help);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status =
          hytask_cli::parse_before_mpi("bench_global_scale", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  const std::size_t b = static_cast<std::size_t>(o.block);
  hytask::global_array<double> a(b * static_cast<std::size_t>(size));
  for (double& x : a.local()) x = rank;
  hytask::wait_all();
  const hytask::global_counters start = hytask::global_stats();
  std::vector<double> got(b), copies(b);
  std::size_t peak_tasks = 0, peak_nodes = 0, peak_chains = 0;
  std::uint64_t remote = 0;
  const std::size_t left = static_cast<std::size_t>((rank + size - 1) % size);
  const std::size_t right = static_cast<std::size_t>((rank + 1) % size);
  for (int ph = 0; ph < o.phases; ++ph) {
    if (ph % 2 == 0) {
      for (std::size_t i = 0; i < b; ++i) {
        const std::size_t e = static_cast<std::size_t>(rank) * b + i;
        hytask::spawn([&a, e, ph] { *a[e].local_data() = ph + static_cast<double>(e); }, hytask::out(a[e]));
      }
    } else {
      for (std::size_t i = 0; i < b; ++i) {
        const std::size_t owner = i < b / 2 ? left : right;
        const std::size_t e = owner * b + i;
        if (size > 1) ++remote;
        if (i % 2 == 0)
          hytask::spawn([&a, &got, e, i] { got[i] = a[e].get(); }, hytask::in(a[e]));
        else
          hytask::spawn([&copies, &got, i] { got[i] = copies[i]; }, hytask::copyin(a[e], &copies[i]));
      }
    }
    const hytask::global_counters c = hytask::global_stats();
    peak_tasks = std::max(peak_tasks, c.tasks_alive);
    peak_nodes = std::max(peak_nodes, c.nodes_alive);
    peak_chains = std::max(peak_chains, c.chains_alive);
    hytask::fence();
  }
  hytask::wait_all();
  const hytask::global_counters end = hytask::global_stats();
  // Per rank: this rank's figures, then their sum and maximum over the ranks.
  const double mine[] = {
      static_cast<double>(remote),
      static_cast<double>(end.announces_sent - start.announces_sent),
      static_cast<double>(end.releases_sent - start.releases_sent),
      static_cast<double>(end.completions_sent - start.completions_sent),
      static_cast<double>(end.buffers_sent - start.buffers_sent),
      static_cast<double>(end.bytes_sent - start.bytes_sent),
      static_cast<double>(end.rounds - start.rounds),
      static_cast<double>(end.round_bytes - start.round_bytes),
      static_cast<double>(end.transfers - start.transfers),
      static_cast<double>(peak_tasks),
      static_cast<double>(peak_nodes),
      static_cast<double>(peak_chains),
      static_cast<double>(end.round_messages - start.round_messages),
  };
  constexpr int n = sizeof mine / sizeof mine[0];
  double sum[n], max[n];
  MPI_Allreduce(mine, sum, n, MPI_DOUBLE, MPI_SUM, hytask::mpi::comm_world());
  MPI_Allreduce(mine, max, n, MPI_DOUBLE, MPI_MAX, hytask::mpi::comm_world());
  if (rank == 0) {
    const double p = size, accesses = std::max(1.0, sum[0]);
    std::printf(
        "bench_global_scale ranks=%d block=%ld phases=%d remote_per_rank=%.0f "
        "announces_per_remote=%.3f releases_per_remote=%.3f completions_per_remote=%.3f "
        "buffers_per_remote=%.3f bytes_per_remote=%.1f rounds_per_phase=%.3f "
        "round_messages_per_round=%.3f/%.3f round_bytes_per_round=%.1f/%.1f "
        "transfers_per_rank=%.1f peak_tasks=%.1f/%.0f peak_nodes=%.1f/%.0f "
        "peak_chains=%.1f/%.0f\n",
        size, o.block, o.phases, sum[0] / p, sum[1] / accesses, sum[2] / accesses,
        sum[3] / accesses, sum[4] / accesses, sum[5] / accesses, sum[6] / p / o.phases,
        sum[6] > 0 ? sum[12] / sum[6] : 0.0, max[6] > 0 ? max[12] / max[6] : 0.0,
        sum[6] > 0 ? sum[7] / sum[6] : 0.0, max[6] > 0 ? max[7] / max[6] : 0.0, sum[8] / p,
        sum[9] / p, max[9], sum[10] / p, max[10], sum[11] / p, max[11]);
  }
  return 0;
}
