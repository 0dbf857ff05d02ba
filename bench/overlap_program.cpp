// The program of the scheduling issue, written as a new user would, beside plain MPI in the
// same run, on 2 ranks (run it across the cluster in a box: bench/run_overlap_program.sh).
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
// Rank 0 sends, rank 1 receives; the figures are the worse of the two ranks. The compute is
// a cache-resident stencil sweep whose cost per unit is measured before MPI starts.
//
// Prints one line per variant and size: `overlap_program mpi=... variant=... bytes=...
// task_ms=... tasks=... comm_ms=... comp_ms=... both_ms=... overlap_pct=... speed_pct=...`.
#include <mpi.h>

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

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"
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
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "overlap_program: %s\n"
               "usage: overlap_program [--sizes 1M,8M] [--task-ms 1] [--tasks 32] [--iters 8]\n",
               why);
  std::exit(2);
}

std::size_t parse_size(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string unit = end ? end : "";
  if (unit == "K") v *= 1024;
  else if (unit == "M") v *= 1024 * 1024;
  else if (!unit.empty()) usage(("bad size '" + s + "'").c_str());
  if (v < 8) usage(("bad size '" + s + "'").c_str());
  return static_cast<std::size_t>(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes.clear();
      std::string list = next();
      for (std::size_t p = 0; p <= list.size();) {
        std::size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        o.sizes.push_back(parse_size(list.substr(p, q - p)));
        p = q + 1;
      }
    } else if (a == "--task-ms") {
      o.task_ms = std::atof(next().c_str());
      if (!(o.task_ms > 0 && o.task_ms <= 10000)) usage("--task-ms must be in (0, 10000]");
    } else if (a == "--tasks") {
      o.tasks = std::atoi(next().c_str());
      if (o.tasks < 1 || o.tasks > 100000) usage("--tasks must be from 1 to 100000");
    } else if (a == "--iters") {
      o.iters = std::atoi(next().c_str());
      if (o.iters < 1 || o.iters > 100000) usage("--iters must be from 1 to 100000");
    } else if (a == "-h" || a == "--help") {
      usage("help");
    } else {
      usage(("unknown argument '" + a + "'").c_str());
    }
  }
  return o;
}

// ---- one measurement ---------------------------------------------------------------------
struct sample {
  double elapsed = 0, comp = 0;  // wall time; time the compute took
};

// Every sample starts from the same state of the link: a rate-limited link (tbf on the
// cluster in a box, a switch's buffers on a real one) lets a burst through faster after an
// idle spell, so a transfer measured right after another one took up to 25 % longer than one
// measured after a pause, whichever variant it belonged to.
void settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  MPI_Barrier(MPI_COMM_WORLD);
}

long g_poll_units = 0;  // hytask-poll: compute units between two this_task::poll() calls

// hytask: the user's program. comm/comp switch the two halves on and off.
sample run_hytask(std::vector<double>& buf, bool sender, bool comm, bool comp, long units,
                  int tasks) {
  settle();
  std::atomic<double> comp_ms{0};
  const double t0 = now_ms();
  if (comm)
    hytask::spawn([&buf, sender] {
      if (sender) hytask::mpi::send(std::span(buf), 1, 0);
      else hytask::mpi::recv(std::span(buf), 0, 0);
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
    if (sender) MPI_Isend(buf.data(), count, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, &req);
    else MPI_Irecv(buf.data(), count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, &req);
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

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  const double unit = overlap::calibrate_unit_ns() * 1e-6;  // ms, before MPI and the runtime start
  hytask::runtime rt(argc, argv);
  const int rank = hytask::mpi::rank();
  if (hytask::mpi::size() != 2) {
    if (rank == 0) std::fprintf(stderr, "overlap_program: run on exactly 2 ranks\n");
    return 2;
  }
  const long units = std::max(1L, std::lround(o.task_ms / unit));
#if defined(MPICH_VERSION)
  const char* mpi_name = "mpich";
#else
  const char* mpi_name = "openmpi";
#endif
  for (std::size_t bytes : o.sizes) {
    std::vector<double> buf(bytes / sizeof(double), 1.0);
    // variant x {comm, comp, both} samples
    constexpr int variants = 4;
    static const char* const names[variants] = {"mpi", "mpi-test", "hytask", "hytask-poll"};
    std::vector<double> v[variants][3], comp_both[variants];
    for (int w = 0; w < 2; ++w) run_hytask(buf, rank == 0, true, false, units, o.tasks);  // warm up
    run_plain(buf, rank == 0, true, false, units, o.tasks, false);
    for (int it = 0; it < o.iters; ++it) {
      for (int variant = 0; variant < variants; ++variant) {
        auto run = [variant](std::vector<double>& b, bool s, bool c, bool k, long u, int n) {
          return variant < 2 ? run_plain(b, s, c, k, u, n, variant == 1) : run_hytask(b, s, c, k, u, n);
        };
        g_poll_units = variant == 3 ? std::max(1L, std::lround(1.0 / unit)) : 0;
        sample c = run(buf, rank == 0, true, false, units, o.tasks);
        sample k = run(buf, rank == 0, false, true, units, o.tasks);
        sample b = run(buf, rank == 0, true, true, units, o.tasks);
        v[variant][0].push_back(c.elapsed);
        v[variant][1].push_back(k.elapsed);
        v[variant][2].push_back(b.elapsed);
        comp_both[variant].push_back(b.comp / std::max(k.comp, 1e-9));
      }
    }
    for (int variant = 0; variant < variants; ++variant) {
      double mine[4] = {median(v[variant][0]), median(v[variant][1]), median(v[variant][2]),
                        median(comp_both[variant])};
      double worst[4];
      MPI_Allreduce(mine, worst, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      const double comm = worst[0], comp = worst[1], both = worst[2];
      const double overlap = 100 * (comm + comp - both) / std::min(comm, comp);
      if (rank == 0)
        std::printf(
            "overlap_program mpi=%s variant=%s bytes=%zu task_ms=%.3g tasks=%d comm_ms=%.2f "
            "comp_ms=%.2f both_ms=%.2f overlap_pct=%.1f speed_pct=%.1f\n",
            mpi_name, names[variant], bytes, o.task_ms, o.tasks, comm, comp,
            both, overlap, 100 / worst[3]);
      std::fflush(stdout);
    }
  }
  rt.shutdown();
  return 0;
}
