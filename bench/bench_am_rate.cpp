// Message rate of the global layer's active-message transports (src/global/am.hpp), after
// the message-rate benchmarks of Schuchart's thesis ("Global Task Data Dependencies in the
// Partitioned Global Address Space", §4.3.2): the two-sided transport and the RMA queue, in
// one job, their repetitions interleaved, so that their figures compare.
//
//   mpiexec -n P build/bench/bench_am_rate [--pattern all-to-all|all-to-one|one-to-all]
//                                          [--messages N] [--bytes B] [--reps R]
//
// all-to-all: every rank sends N buffers to every other rank, one to each in turn (the
// thesis's Fig. 4.8: a buffer cached per destination, flushed together); all-to-one: every
// rank but 0 sends N buffers to rank 0 (Fig. 4.9, writers to one target); one-to-all: rank 0
// sends N buffers to every other rank. A buffer is B bytes, of no round (as the protocol's
// release and completion buffers). Each repetition is timed from a barrier to the barrier
// after every rank has received all its buffers; the rate is every buffer of the job over
// that time. Prints one line per transport and repetition, then the median per transport and
// their ratio:
//
//   bench_am_rate transport=rma rep=0 seconds=... rate=...
//   bench_am_rate median mpi=openmpi ranks=4 pattern=all-to-all two-sided=... rma=... rma/two-sided=...
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "global/am.hpp"
#include "global/messages.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace gd = hytask::global::detail;

namespace {

const char* mpi_name() {
#if defined(OPEN_MPI)
  return "openmpi";
#elif defined(MPICH_VERSION)
  return "mpich";
#else
  return "mpi";
#endif
}

struct options {
  std::string pattern = "all-to-all";
  long messages = 20000;
  long bytes = 64;
  int reps = 5;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  options o;
  hytask_cli::command_line cli("bench_am_rate", "[options]   (under mpiexec, 2 or more ranks)",
                               "Message rate of the global layer's two-sided and RMA transports.");
  cli.custom("--pattern", "NAME", [&](const std::string& s) {
    if (s != "all-to-all" && s != "all-to-one" && s != "one-to-all")
      throw hytask_cli::usage_error("--pattern: '" + s + "' is not all-to-all, all-to-one or one-to-all");
    o.pattern = s;
  }, "who sends to whom (default all-to-all)");
  cli.integer("--messages", o.messages, 1, 10000000, "buffers per sender and destination (default 20000)");
  cli.integer("--bytes", o.bytes, 16, 65536, "bytes per buffer (default 64)");
  cli.integer("--reps", o.reps, 1, 1000, "repetitions per transport, interleaved (default 5)");
  try {
    if (!cli.parse(argc, argv, rank == 0)) return 0;
  } catch (const hytask_cli::usage_error& e) {
    if (rank == 0) std::fputs(hytask_cli::error_text("bench_am_rate", e.what()).c_str(), stderr);
    return 2;
  }
  if (size < 2) {
    if (rank == 0) std::fprintf(stderr, "bench_am_rate: needs 2 or more ranks\n");
    return 2;
  }
  const auto n = static_cast<std::uint64_t>(o.messages);
  const auto bytes = static_cast<std::size_t>(o.bytes);
  auto sends_to = [&](int from, int to) {
    if (from == to) return false;
    if (o.pattern == "all-to-one") return to == 0;
    if (o.pattern == "one-to-all") return from == 0;
    return true;
  };
  std::uint64_t expect = 0, total = 0;
  for (int s = 0; s < size; ++s)
    for (int d = 0; d < size; ++d)
      if (sends_to(s, d)) {
        total += n;
        if (d == rank) expect += n;
      }
  std::vector<int> dests;
  for (int d = 0; d < size; ++d)
    if (sends_to(rank, (rank + d) % size)) dests.push_back((rank + d) % size);

  std::atomic<std::uint64_t> got{0};
  std::atomic<int> bad{0};
  auto on_receive = [&](int, std::span<const std::byte> buf) {
    if (buf.size() != bytes) ++bad;
    got.fetch_add(1, std::memory_order_relaxed);
  };
  auto on_failure = [&](std::exception_ptr) { ++bad; };
  const std::size_t max_bytes = sizeof(gd::buffer_header) + 2048 * 32;  // the layer's
  const char* names[2] = {"two-sided", "rma"};
  std::unique_ptr<gd::am_transport> t[2] = {
      gd::make_am_transport(gd::am_kind::two_sided, hytask::mpi::comm_world(), on_receive, on_failure, max_bytes),
      gd::make_am_transport(gd::am_kind::rma, hytask::mpi::comm_world(), on_receive, on_failure, max_bytes)};
  std::vector<double> rates[2];
  std::vector<std::byte> proto(bytes);
  const gd::buffer_header bh{gd::release_round, 1, 0};
  std::memcpy(proto.data(), &bh, sizeof bh);

  if (rank == 0)
    std::printf("bench_am_rate mpi=%s ranks=%d pattern=%s bytes=%zu messages=%llu (per sender "
                "and destination) threads=%u\n",
                mpi_name(), size, o.pattern.c_str(), bytes, static_cast<unsigned long long>(n),
                hytask::worker_count());
  for (int rep = 0; rep < o.reps; ++rep)
    for (int k = 0; k < 2; ++k) {
      gd::am_transport& am = *t[k];
      am.open();
      got = 0;
      hytask::mpi::barrier();
      const auto t0 = std::chrono::steady_clock::now();
      for (std::uint64_t i = 0; i < n; ++i)
        for (int d : dests) am.send(d, proto);
      while (got.load(std::memory_order_relaxed) < expect) hytask::this_task::poll();
      hytask::mpi::barrier();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      am.close();
      rates[k].push_back(static_cast<double>(total) / s);
      if (rank == 0)
        std::printf("bench_am_rate transport=%s rep=%d seconds=%.4f rate=%.0f\n", names[k], rep, s,
                    static_cast<double>(total) / s);
    }
  int any_bad = 0, mine = bad.load();
  hytask::mpi::allreduce(&mine, &any_bad, 1, MPI_INT, MPI_SUM);
  if (any_bad) {
    if (rank == 0) std::fprintf(stderr, "bench_am_rate: %d buffers lost or malformed\n", any_bad);
    return 1;
  }
  if (rank == 0) {
    const double two = median(rates[0]), rma = median(rates[1]);
    std::printf("bench_am_rate median mpi=%s ranks=%d pattern=%s two-sided=%.0f rma=%.0f "
                "rma/two-sided=%.2f (buffers/s)\n",
                mpi_name(), size, o.pattern.c_str(), two, rma, rma / two);
  }
  return 0;
}
