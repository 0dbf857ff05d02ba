// The program of the scheduling issue, written as a new user would, beside plain MPI in the
// same run, on 2 ranks or more (run it across the cluster in a box:
// bench/run_overlap_program.sh, and bench/run_node_program.sh with several ranks per node).
// Ranks pair across two nodes: the i-th rank of the first node sends to the i-th rank of the
// second (without two nodes of equal size, rank 2k sends to rank 2k + 1).
//
//   hytask   one task does a blocking hytask::mpi::send (rank 0) or recv (rank 1) of
//            --size bytes, then --tasks compute tasks of --task-ms each are spawned, then
//            wait_all. No priority, no channel declaration, default settings.
//   mpi      MPI_Isend / MPI_Irecv, the same compute on main, MPI_Wait (the usual
//            "Isend; compute; Wait").
//   mpi-test the same with an MPI_Test after every task-sized piece of compute: what a
//            hand-tuned code gets (a reference for what the network leaves possible).
//   hytask-poll  hytask, the tasks calling hytask::this_task::poll() every millisecond of
//            compute (a hint a user may add to long tasks; a reference for the default).
//
// Each iteration runs, for both, the transfer alone, the compute alone and both together,
// interleaved, and the report gives medians:
//   overlap  = (T_comm + T_comp - T_both) / min(T_comm, T_comp)   (100 %: fully hidden)
//   speed    = compute time alone / compute time beside the transfer   (the compute's speed)
// The sender of each pair sends, its partner receives; the figures are the worst over the
// ranks. The compute is a cache-resident stencil sweep whose cost per unit is measured
// before MPI starts. progress_cores: CPU per wall time, over the variant's samples, of the
// threads that only progress communication (hytask's progress thread and node agent, the MPI
// library's own threads), summed over a node's ranks, averaged over the nodes.
//
// Prints one line per variant and size: `overlap_program mpi=... variant=... bytes=...
// task_ms=... tasks=... ranks=... ranks_per_node=... policy=... comm_ms=... comp_ms=...
// both_ms=... overlap_pct=... speed_pct=... progress_cores=... wakes=... suppressed=...`.
#include <fcntl.h>
#include <mpi.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
#include "threads.hpp"
#include "work.hpp"

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// ---- compute: the overlap tool's synthetic work (tools/overlap/work.hpp) ----------------
using overlap::compute;

// ---- options ------------------------------------------------------------------------------
struct options {
  std::vector<std::size_t> sizes{std::size_t{1} << 20, std::size_t{8} << 20};
  double task_ms = 1;
  int tasks = 32;
  int iters = 8;
  unsigned variants = 0xf;  // bit v: run variant v (mpi, mpi-test, hytask, hytask-poll)
};

constexpr int variant_count = 4;
const char* const variant_names[variant_count] = {"mpi", "mpi-test", "hytask", "hytask-poll"};

// `s` as a message size in bytes: a number, optionally followed by K or M (1024-based), at
// least 8 and at most 1G.
std::size_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  const std::string unit = end ? end : "";
  if (unit == "K") v *= 1024;
  else if (unit == "M") v *= 1024 * 1024;
  else if (!unit.empty()) v = 0;
  if (s.empty() || end == s.c_str() || !(v >= 8 && v <= 1024.0 * 1024 * 1024))
    throw hytask_cli::usage_error("--sizes: '" + s + "' is not a size from 8 bytes to 1G, e.g. 64K, 1M, 8M");
  return static_cast<std::size_t>(v);
}

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "overlap_program",
      "[--sizes 1M,8M] [--task-ms 1] [--tasks 32] [--iters 8]\n"
      "                       [--variants mpi,mpi-test,hytask,hytask-poll]\n"
      "       (under mpiexec, an even number of ranks)",
      "A transfer task, then compute tasks, written as a new user would, beside plain MPI in the same\n"
      "run; ranks pair across two nodes (bench/run_overlap_program.sh runs it on the cluster in a box).\n"
      "Prints one line per variant and size: overlap_program mpi=... variant=... bytes=... overlap_pct=...");
  cli.custom("--sizes", "LIST", [&o](const std::string& v) {
    o.sizes.clear();
    for (const std::string& item : hytask_cli::split(v, ',')) o.sizes.push_back(parse_size(item));
    if (o.sizes.empty()) throw hytask_cli::usage_error("--sizes needs at least one size");
  }, "message sizes in bytes, K or M (default 1M,8M)");
  cli.custom("--task-ms", "MS", [&o](const std::string& v) {
    o.task_ms = hytask_cli::parse_number("--task-ms", v, 0, 10000);
    if (!(o.task_ms > 0)) throw hytask_cli::usage_error("--task-ms: '" + v + "' is not a number in (0, 10000]");
  }, "a compute task's length in milliseconds, in (0, 10000] (default 1)");
  cli.integer("--tasks", o.tasks, 1, 100000, "compute tasks per iteration (default 32)");
  cli.integer("--iters", o.iters, 1, 100000, "iterations; medians reported (default 8)");
  cli.custom("--variants", "LIST", [&o](const std::string& v) {
    o.variants = 0;
    for (const std::string& name : hytask_cli::split(v, ',')) {
      int k = 0;
      while (k < variant_count && name != variant_names[k]) ++k;
      if (k == variant_count)
        throw hytask_cli::usage_error("--variants: '" + name + "' is not one of mpi, mpi-test, hytask, hytask-poll");
      o.variants |= 1u << k;
    }
    if (o.variants == 0) throw hytask_cli::usage_error("--variants needs at least one variant");
  }, "which to run, from mpi, mpi-test, hytask, hytask-poll (default: all)");
  return cli.parse(argc, argv, print_help);
}

// ---- one measurement ---------------------------------------------------------------------
struct sample {
  double elapsed = 0, comp = 0;  // wall time; time the compute took
};

// Every sample starts from the same state of the link: a rate-limited link (tbf on the
// cluster in a box, a switch's buffers on a real one) lets a burst through faster after an
// idle spell, so a transfer measured right after another one took up to 25 % longer than one
// measured after a pause, whichever variant it belonged to.
// The barrier sleeps between its tests: with several ranks per core, a rank that finished
// first and spun in MPI_Barrier took the core from the ranks still computing, and their
// "compute alone" came out slower than compute beside the transfer (traced: 84-244 ms for
// 80 ms of compute on a core shared by two ranks).
void settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  for (int done = 0;;) {
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    if (done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

long g_poll_units = 0;  // hytask-poll: compute units between two this_task::poll() calls

int g_peer = 1;  // the rank this one sends to or receives from

// hytask: the user's program. comm/comp switch the two halves on and off.
sample run_hytask(std::vector<double>& buf, bool sender, bool comm, bool comp, long units,
                  int tasks) {
  settle();
  std::atomic<double> comp_ms{0};
  const double t0 = now_ms();
  if (comm)
    hytask::spawn([&buf, sender] {
      if (sender) hytask::mpi::send(std::span(buf), g_peer, 0);
      else hytask::mpi::recv(std::span(buf), g_peer, 0);
    });
  if (comp)
    for (int i = 0; i < tasks; ++i)
      hytask::spawn([units, &comp_ms] {
        const double a = now_ms();
        if (g_poll_units == 0) {
          compute(units);
        } else {
          for (long done = 0; done < units; done += g_poll_units) {
            compute(std::min(g_poll_units, units - done));
            hytask::this_task::poll();
          }
        }
        const double d = now_ms() - a;
        double cur = comp_ms.load();
        while (!comp_ms.compare_exchange_weak(cur, cur + d)) {
        }
      });
  hytask::wait_all();
  return {now_ms() - t0, comp_ms.load()};
}

// Plain MPI: Isend/Irecv, compute, Wait; with `tests`, an MPI_Test after every task-sized
// piece of the compute, as an expert writes it (what a hand-tuned code gets: a reference for
// what the network leaves possible, not what users write by default).
sample run_plain(std::vector<double>& buf, bool sender, bool comm, bool comp, long units,
                 int tasks, bool tests) {
  settle();
  MPI_Request req = MPI_REQUEST_NULL;
  const double t0 = now_ms();
  const int count = static_cast<int>(buf.size());
  if (comm) {
    if (sender) MPI_Isend(buf.data(), count, MPI_DOUBLE, g_peer, 0, MPI_COMM_WORLD, &req);
    else MPI_Irecv(buf.data(), count, MPI_DOUBLE, g_peer, 0, MPI_COMM_WORLD, &req);
  }
  double comp_ms = 0;
  int flag = 0;
  for (int i = 0; comp && i < tasks; ++i) {
    const double a = now_ms();
    compute(units);
    comp_ms += now_ms() - a;
    if (tests && !flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
  }
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  return {now_ms() - t0, comp_ms};
}

// The CPU of the threads that only progress communication, in seconds (threads.hpp).
double progress_cpu_s() {
  double s = 0;
  const overlap::thread_cpu t = overlap::thread_cpu_between({}, overlap::thread_times());
  s = t.progress_s + t.library_s;
  return s;
}

}  // namespace

// The compute's cost per unit, in ms, measured before MPI and the runtime start, one process
// of the machine at a time (a file lock): ranks sharing a core while they measure would each
// find it twice as slow, and their tasks would be half as long as asked.
double calibrate_alone() {
  const int fd = open("/tmp/hytask-overlap-calibrate.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) flock(fd, LOCK_EX);
  const double unit = overlap::calibrate_unit_ns() * 1e-6;
  if (fd >= 0) close(fd);  // releases the lock
  return unit;
}

int main(int argc, char** argv) {
  options o;
  if (const auto status =
          hytask_cli::parse_before_mpi("overlap_program", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  double unit = calibrate_alone();
  hytask::runtime rt(argc, argv);
  // One unit for all ranks (the fastest measurement, the least disturbed): equal tasks.
  MPI_Allreduce(MPI_IN_PLACE, &unit, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  if (size < 2 || size % 2 != 0) {
    if (rank == 0) std::fprintf(stderr, "overlap_program: run on an even number of ranks\n");
    return 2;
  }
  // Nodes, and this rank's partner on the other one.
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0, local_size = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &local_size);
  int leader = rank;
  MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node);
  std::vector<int> where(2 * static_cast<std::size_t>(size));  // (node leader, local) per rank
  const int mine[2] = {leader, local};
  MPI_Allgather(mine, 2, MPI_INT, where.data(), 2, MPI_INT, MPI_COMM_WORLD);
  int first = size, second = size;  // the two nodes' leaders, if there are two
  bool two = true;
  for (int r = 0; r < size; ++r) {
    const int l = where[2 * static_cast<std::size_t>(r)];
    if (l < first) first = l;
  }
  for (int r = 0; r < size; ++r) {
    const int l = where[2 * static_cast<std::size_t>(r)];
    if (l != first && l < second) second = l;
  }
  for (int r = 0; r < size; ++r) {
    const int l = where[2 * static_cast<std::size_t>(r)];
    if (l != first && l != second) two = false;
  }
  two = two && second < size && local_size * 2 == size;
  bool sender = rank % 2 == 0;
  g_peer = rank ^ 1;
  if (two) {
    sender = leader == first;
    const int other = sender ? second : first;
    for (int r = 0; r < size; ++r)
      if (where[2 * static_cast<std::size_t>(r)] == other &&
          where[2 * static_cast<std::size_t>(r) + 1] == local)
        g_peer = r;
  } else if (rank == 0) {
    std::fprintf(stderr, "overlap_program: not two nodes of equal size: rank 2k sends to 2k+1\n");
  }
  const long units = std::max(1L, std::lround(o.task_ms / unit));
#if defined(MPICH_VERSION)
  const char* mpi_name = "mpich";
#else
  const char* mpi_name = "openmpi";
#endif
  const char* policy = hytask::mpi::progress_stats().policy;
  for (std::size_t bytes : o.sizes) {
    std::vector<double> buf(bytes / sizeof(double), 1.0);
    // variant x {comm, comp, both} samples
    std::vector<double> v[variant_count][3], comp_both[variant_count];
    double cpu_s[variant_count] = {}, wall_ms[variant_count] = {};
    std::uint64_t wakes[variant_count] = {}, suppressed[variant_count] = {};
    for (int w = 0; w < 2; ++w) run_hytask(buf, sender, true, false, units, o.tasks);  // warm up
    run_plain(buf, sender, true, false, units, o.tasks, false);
    for (int it = 0; it < o.iters; ++it) {
      for (int variant = 0; variant < variant_count; ++variant) {
        if ((o.variants >> variant & 1u) == 0) continue;
        auto run = [variant](std::vector<double>& b, bool s, bool c, bool k, long u, int n) {
          return variant < 2 ? run_plain(b, s, c, k, u, n, variant == 1) : run_hytask(b, s, c, k, u, n);
        };
        g_poll_units = variant == 3 ? std::max(1L, std::lround(1.0 / unit)) : 0;
        const double cpu0 = progress_cpu_s(), t0 = now_ms();
        const auto stats0 = hytask::mpi::progress_stats();
        sample c = run(buf, sender, true, false, units, o.tasks);
        sample k = run(buf, sender, false, true, units, o.tasks);
        sample b = run(buf, sender, true, true, units, o.tasks);
        const auto stats1 = hytask::mpi::progress_stats();
        wall_ms[variant] += now_ms() - t0;
        cpu_s[variant] += progress_cpu_s() - cpu0;
        wakes[variant] += stats1.wakes - stats0.wakes;
        suppressed[variant] += stats1.suppressed - stats0.suppressed;
        v[variant][0].push_back(c.elapsed);
        v[variant][1].push_back(k.elapsed);
        v[variant][2].push_back(b.elapsed);
        comp_both[variant].push_back(b.comp / std::max(k.comp, 1e-9));
      }
    }
    for (int variant = 0; variant < variant_count; ++variant) {
      if ((o.variants >> variant & 1u) == 0) continue;
      double mine_m[4] = {median(v[variant][0]), median(v[variant][1]), median(v[variant][2]),
                          median(comp_both[variant])};
      double worst[4];
      MPI_Allreduce(mine_m, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double comm = worst[0], comp = worst[1], both = worst[2];
      const double overlap = 100 * (comm + comp - both) / std::min(comm, comp);
      // Progress cores: summed over the node's ranks, averaged over the nodes.
      double cores = cpu_s[variant] * 1e3 / std::max(wall_ms[variant], 1e-9), node_cores = 0;
      MPI_Allreduce(&cores, &node_cores, 1, MPI_DOUBLE, MPI_SUM, node);
      double per_node[2] = {local == 0 ? node_cores : 0.0, local == 0 ? 1.0 : 0.0}, sums[2];
      MPI_Allreduce(per_node, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      unsigned long long counts[2] = {wakes[variant], suppressed[variant]}, total[2];
      MPI_Allreduce(counts, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (rank == 0)
        std::printf(
            "overlap_program mpi=%s variant=%s bytes=%zu task_ms=%.3g tasks=%d ranks=%d "
            "ranks_per_node=%d policy=%s comm_ms=%.2f comp_ms=%.2f both_ms=%.2f "
            "overlap_pct=%.1f speed_pct=%.1f progress_cores=%.3f wakes=%llu suppressed=%llu\n",
            mpi_name, variant_names[variant], bytes, o.task_ms, o.tasks, size, local_size, policy,
            comm, comp, both, overlap, 100 / worst[3], sums[0] / sums[1], total[0], total[1]);
      std::fflush(stdout);
    }
  }
  MPI_Comm_free(&node);
  rt.shutdown();
  return 0;
}
