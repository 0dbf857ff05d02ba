// Global task dependencies (issue 17) beside plain hytask and plain MPI, in the same run, on
// 2 ranks (run with HYTASK_THREADS=1: one thread per rank, as seed 001 §6.3 measured).
//
//   mpiexec -n 2 build/bench/bench_global --case cost|latency [--n N] [--reps R]
//
// cost     mean time per task to create and run --n (100,000) empty tasks on one thread,
//          then wait_all: plain tasks; a local dependency (out on one variable: a chain);
//          a global dependency on an element this rank owns (a chain); a remote one
//          (in on the other rank's elements, round robin) in a first phase (no release
//          messages: announce and completion only) and in a later phase (gated by matching,
//          released by the owner). Every rank spawns; both ranks' tasks are timed together.
// latency  end-to-successor latency of a remote release: a chain of --n phases whose tasks
//          alternate between the ranks on one element owned by rank 0 (inout), each
//          task's start minus its predecessor's end on the other rank (CLOCK_MONOTONIC, the
//          same clock for every process of one machine), median and 99th percentile; beside
//          plain MPI's one-way latency (half a ping-pong of 8 bytes) in the same run.
//
// Prints `bench_global case=... variant=... value=... unit=...` lines; reps alternate.
#include <mpi.h>
#include <time.h>

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
  std::string case_name = "cost";
  long n = 100000;
  int reps = 5;
};

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

void report(const options& o, const char* variant, double value, const char* unit) {
  if (hytask::mpi::rank() != 0) return;
  std::printf("bench_global case=%s variant=%s value=%.3f unit=%s ranks=%d workers=%u\n",
              o.case_name.c_str(), variant, value, unit, hytask::mpi::size(),
              hytask::worker_count());
  std::fflush(stdout);
}

// Both ranks run f; returns the slower rank's seconds.
template <class F>
double timed(F&& f) {
  hytask::mpi::barrier();
  const double t0 = now_s();
  f();
  double mine = now_s() - t0, slowest = 0;
  hytask::mpi::allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX);
  return slowest;
}

void cost(const options& o) {
  const int rank = hytask::mpi::rank(), size = hytask::mpi::size();
  constexpr std::size_t block = 256;
  hytask::global_array<long> a(static_cast<std::size_t>(size) * block);
  for (long& v : a.local()) v = 0;
  hytask::wait_all();
  const std::size_t other = static_cast<std::size_t>((rank + 1) % size) * block;
  auto own = a[static_cast<std::size_t>(rank) * block];
  long local_var = 0;
  const char* names[] = {"plain", "local_dep", "global_owned", "global_remote_first",
                         "global_remote_later"};
  std::vector<std::vector<double>> us(5);
  for (int rep = 0; rep < o.reps + 1; ++rep) {
    for (int v = 0; v < 5; ++v) {
      const double s = timed([&] {
        if (v == 4) hytask::fence();  // the tasks below are then in a later phase
        for (long i = 0; i < o.n; ++i) {
          switch (v) {
            case 0: hytask::spawn([] {}); break;
            case 1: hytask::spawn([] {}, hytask::out(local_var)); break;
            case 2: hytask::spawn([] {}, hytask::out(own)); break;
            default:
              hytask::spawn([] {}, hytask::in(a[other + static_cast<std::size_t>(i) % block]));
          }
        }
        hytask::wait_all();
      });
      if (rep > 0) us[v].push_back(s / static_cast<double>(o.n) * 1e6);
    }
  }
  for (int v = 0; v < 5; ++v) report(o, names[v], median(us[v]), "us_per_task");
}

void latency(const options& o) {
  const int rank = hytask::mpi::rank();
  if (hytask::mpi::size() != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_global: --case latency needs 2 ranks\n");
    std::exit(2);
  }
  hytask::global_array<long> a(2);
  for (long& v : a.local()) v = 0;
  hytask::wait_all();
  auto x = a[0];
  std::vector<double> hop_med, hop_p99, mpi_oneway;
  const long phases = std::max<long>(o.n, 10);
  for (int rep = 0; rep < o.reps + 1; ++rep) {
    // The chain: phase p's task runs on rank p % 2.
    std::vector<double> start(static_cast<std::size_t>(phases), 0), end(static_cast<std::size_t>(phases), 0);
    hytask::mpi::barrier();
    for (long p = 0; p < phases; ++p) {
      if (p % 2 == rank) {
        double* s = &start[static_cast<std::size_t>(p)];
        double* e = &end[static_cast<std::size_t>(p)];
        hytask::spawn([s, e] { *s = now_s(); *e = now_s(); }, hytask::inout(x));
      }
      hytask::fence();
    }
    hytask::wait_all();
    std::vector<double> other(start.size() * 2);
    std::vector<double> mine(start);
    mine.insert(mine.end(), end.begin(), end.end());
    MPI_Sendrecv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, 1 - rank, 5, other.data(),
                 static_cast<int>(other.size()), MPI_DOUBLE, 1 - rank, 5, hytask::mpi::comm_world(),
                 MPI_STATUS_IGNORE);
    std::vector<double> hops;
    for (long p = 1; p < phases; ++p) {
      const auto q = static_cast<std::size_t>(p);
      const double s = p % 2 == rank ? start[q] : other[q];
      const double e = (p - 1) % 2 == rank ? end[q - 1] : other[start.size() + q - 1];
      hops.push_back((s - e) * 1e6);
    }
    // Plain MPI: one-way latency, half a ping-pong of 8 bytes.
    char buf[8] = {};
    const int rounds = 2000;
    hytask::mpi::barrier();
    const double t0 = now_s();
    for (int i = 0; i < rounds; ++i) {
      if (rank == 0) {
        MPI_Send(buf, 8, MPI_CHAR, 1, 6, MPI_COMM_WORLD);
        MPI_Recv(buf, 8, MPI_CHAR, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, 8, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, 8, MPI_CHAR, 0, 6, MPI_COMM_WORLD);
      }
    }
    const double oneway = (now_s() - t0) / rounds / 2 * 1e6;
    if (rep == 0) continue;  // warm-up
    hop_med.push_back(median(hops));
    hop_p99.push_back(percentile(hops, 0.99));
    mpi_oneway.push_back(oneway);
  }
  report(o, "remote_release_median", median(hop_med), "us");
  report(o, "remote_release_p99", median(hop_p99), "us");
  report(o, "mpi_oneway", median(mpi_oneway), "us");
}

// The command line into `o`; false when --help was asked for (printed when `print_help`).
bool parse(int argc, char** argv, options& o, bool print_help) {
  hytask_cli::command_line cli(
      "bench_global", "--case cost|latency [--n N] [--reps R]   (under mpiexec -n 2)",
      "Global task dependencies beside plain hytask and plain MPI, in the same run, on 2 ranks\n"
      "(run with HYTASK_THREADS=1). Prints `bench_global case=... variant=... value=... unit=...`\n"
      "lines; the variants alternate, the first repetition warms up.");
  cli.custom("--case", "CASE", [&o](const std::string& v) {
    if (v != "cost" && v != "latency") throw hytask_cli::usage_error("--case: '" + v + "' is not cost or latency");
    o.case_name = v;
  }, "cost: time per task of plain, local, owned and remote dependencies;\n"
     "latency: a remote release's end-to-successor latency beside MPI's\n"
     "(default cost)");
  cli.integer("--n", o.n, 1, 1000000000L, "cost: tasks per rank; latency: phases of the chain (default 100000)");
  cli.integer("--reps", o.reps, 1, 1000000, "timed repetitions; medians are reported (default 5)");
  return cli.parse(argc, argv, print_help);
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  if (const auto status = hytask_cli::parse_before_mpi("bench_global", [&](bool print) { return parse(argc, argv, o, print); }))
    return *status;
  hytask::runtime rt(argc, argv);
  if (o.case_name == "cost") cost(o);
  else latency(o);
  return 0;
}
