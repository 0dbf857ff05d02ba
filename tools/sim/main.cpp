// hytask-sim: hytask's tiled Cholesky or QR on 1 to thousands of simulated ranks (docs/scale.md).
//
//   hytask-sim cholesky --ranks 1,4,16,64,144 --n-per-rank 8192 --nb 320 --network ib
//
// Prints a markdown table per rank count: the simulated run, its rate and parallel
// efficiency, and where the workers' idle time went.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "blas_report.hpp"
#include "command_line.hpp"
#include "kernels.hpp"
#include "simulator.hpp"

namespace {

using namespace hytask::sim;

using hytask_cli::usage_error;

long number(const char* opt, const char* s, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || errno != 0 || v < lo || v > hi)
    throw usage_error(std::string(opt) + " '" + s + "': expected an integer from " + std::to_string(lo) + " to " +
                      std::to_string(hi));
  return v;
}

double real(const char* opt, const char* s, double lo) {
  char* end = nullptr;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || !(v >= lo))
    throw usage_error(std::string(opt) + " '" + s + "': expected a number >= " + std::to_string(lo));
  return v;
}

grid balanced(int ranks) {
  grid g;
  for (int p = 1; p * p <= ranks; ++p)
    if (ranks % p == 0) g.p = p;
  g.q = ranks / g.p;
  return g;
}

struct options {
  std::string app;
  std::vector<int> ranks{1, 2, 4};
  grid fixed{0, 0};
  long n = 4096, n_per_rank = 0, m = 0;
  int nb = 256, ib = 32, workers = 1, host_cores = 0, window = 8, threads = 0, reps = 10;
  std::string network = "box", kernel_seconds;
  double latency_us = -1, overhead_us = -1, gbits = -1, spawn_us = 2, backstop_us = 500;
  long eager = -1, pipeline = -1;
  std::string rendezvous;
};

// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv) {
  options o;
  hytask_cli::command_line cli("hytask-sim", "cholesky|qr [options]",
                               "Runs the apps' task graphs on simulated ranks: the library's scheduler and global\n"
                               "dependencies with a LogGP network and kernels timed here (docs/scale.md).");
  cli.text("APP", o.app, "the application: cholesky or qr", "cholesky|qr")->required(false);
  auto integer = [&](const char* names, auto& value, long lo, long hi, const char* help) {
    const std::string opt = std::string(names).substr(0, std::string(names).find(','));
    cli.custom(names, "N", [&value, opt, lo, hi](const std::string& v) {
      value = static_cast<std::remove_reference_t<decltype(value)>>(number(opt.c_str(), v.c_str(), lo, hi));
    }, help);
  };
  auto decimal = [&](const char* name, double& value, double lo, const char* help) {
    cli.custom(name, "X", [&value, name, lo](const std::string& v) { value = real(name, v.c_str(), lo); }, help);
  };
  cli.custom("--ranks", "LIST", [&](const std::string& v) {
    o.ranks.clear();
    for (const std::string& item : hytask_cli::split(v, ','))
      o.ranks.push_back(static_cast<int>(number("--ranks", item.c_str(), 1, 1 << 20)));
  }, "simulated ranks, e.g. 1,4,16,64 (default 1,2,4); grid P x Q with P <= Q,\n"
     "as MPI_Dims_create makes it (or --grid PxQ for one run)");
  cli.custom("--grid", "PxQ", [&](const std::string& v) {
    if (std::sscanf(v.c_str(), "%dx%d", &o.fixed.p, &o.fixed.q) != 2 || o.fixed.p < 1 || o.fixed.q < 1)
      throw usage_error("--grid '" + v + "': expected PxQ, e.g. 2x2");
    o.ranks = {o.fixed.p * o.fixed.q};
  }, "one run on this grid");
  integer("--n", o.n, 1, 1L << 40, "the matrix order (default 4096), the same at every rank count");
  integer("--n-per-rank", o.n_per_rank, 1, 1L << 40,
          "weak scaling instead: N = N0 * sqrt(ranks), down to a multiple of NB");
  integer("--m", o.m, 1, 1L << 40, "qr: rows (default N)");
  integer("--nb", o.nb, 1, 1 << 16, "tile size (default 256)");
  integer("--ib", o.ib, 1, 1 << 16, "qr's inner block (default 32)");
  integer("--workers", o.workers, 1, 4096, "workers per rank, main included (default 1)");
  integer("--host-cores", o.host_cores, 0, 1 << 20,
          "every rank on one machine of C cores, rank r on core r mod C (processor\n"
          "sharing), as the cluster in a box on a small machine; default: a core each");
  cli.custom("--network", "box|ib", [&](const std::string& v) {
    if (v != "box" && v != "ib") throw usage_error("--network '" + v + "': box or ib");
    o.network = v;
  }, "LogGP preset: box = the cluster in a box (1 Gbit/s veth, TCP: L 40 us,\n"
     "o 3 us), ib = EDR InfiniBand (L 1 us, o 0.5 us, 12 GB/s); default box");
  decimal("--latency-us", o.latency_us, 0, "override the preset's latency L");
  decimal("--overhead-us", o.overhead_us, 0, "override the preset's overhead o");
  decimal("--gbits", o.gbits, 1e-6, "override the preset's bandwidth");
  integer("--eager-bytes", o.eager, 0, 1L << 40,
          "tiles above E bytes go by rendezvous (box: 65536, Open MPI's TCP\neager limit; ib: 8192)");
  integer("--pipeline-bytes", o.pipeline, 0, 1L << 40,
          "a tile crosses in pieces of B bytes, each taken by a poll of the\n"
          "receiver and followed by one of the sender (box: 131072; ib: 0, at once)");
  cli.custom("--rendezvous", "handshake|get", [&](const std::string& v) {
    if (v != "handshake" && v != "get") throw usage_error("--rendezvous '" + v + "': handshake or get");
    o.rendezvous = v;
  }, "handshake: the owner sends once it has polled the go-ahead\n"
     "(TCP, box); get: the accessor reads the tile (RDMA, ib)");
  integer("--window", o.window, 1, 1 << 20, "active phases (default 8, HYTASK_GLOBAL_WINDOW)");
  decimal("--spawn-us", o.spawn_us, 0, "main's time per spawned task (default 2)");
  decimal("--backstop-us", o.backstop_us, 0, "a busy rank's messages wait at most this long (default 500)");
  cli.text("--kernel-seconds", o.kernel_seconds, "NAME=SECONDS,... instead of measuring those kernels", "LIST");
  integer("--calibrate-threads", o.threads, 1, 4096, "kernels timed on T threads at once (default: the cores here)");
  integer("--reps", o.reps, 1, 1 << 20, "timed runs of each kernel per thread (default 10)");
  if (!cli.parse(argc, argv)) return std::nullopt;
  if (o.app.empty()) throw usage_error("give the application: cholesky or qr");
  if (o.app != "cholesky" && o.app != "qr") throw usage_error("unknown application '" + o.app + "': cholesky or qr");
  return o;
}

loggp network_of(const options& o) {
  loggp n;
  if (o.network == "ib") n = loggp{1.0e-6, 0.5e-6, 1.0 / 12e9};
  if (o.latency_us >= 0) n.latency = o.latency_us * 1e-6;
  if (o.overhead_us >= 0) n.overhead = o.overhead_us * 1e-6;
  if (o.gbits > 0) n.gap_per_byte = 8.0 / (o.gbits * 1e9);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  try {
    std::optional<options> parsed = parse(argc, argv);
    if (!parsed) return 0;  // --help
    o = std::move(*parsed);
  } catch (const usage_error& e) {
    std::fputs(hytask_cli::error_text("hytask-sim", e.what()).c_str(), stderr);
    return 2;
  }
  try {
    params p;
    p.workers = o.workers;
    p.host_cores = o.host_cores;
    p.window = static_cast<unsigned>(o.window);
    p.spawn = o.spawn_us * 1e-6;
    p.backstop = o.backstop_us * 1e-6;
    p.net = network_of(o);
    p.eager_bytes = o.eager >= 0 ? static_cast<std::uint64_t>(o.eager) : o.network == "ib" ? 8192 : 65536;
    p.pipeline_bytes = o.pipeline >= 0 ? static_cast<std::uint64_t>(o.pipeline) : o.network == "ib" ? 0 : 131072;
    p.sender_polls = o.rendezvous.empty() ? o.network != "ib" : o.rendezvous == "handshake";
    const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto probe = o.app == "cholesky" ? make_cholesky({o.nb, o.nb}, grid{}) : make_qr({0, o.nb, o.nb, o.ib}, grid{});
    p.kernel_seconds = measure_kernels(o.app, o.nb, o.ib, threads, o.reps);
    override_kernels(probe->kernels(), o.kernel_seconds, p.kernel_seconds);
    std::printf("hytask-sim %s: NB %d%s, %d worker(s) per rank, network L %.2f us, o %.2f us, %.2f Gbit/s, "
                "rendezvous above %llu bytes (%s), pieces of %llu bytes\n",
                o.app.c_str(), o.nb, o.app == "qr" ? (", IB " + std::to_string(o.ib)).c_str() : "", o.workers,
                p.net.latency * 1e6, p.net.overhead * 1e6, 8e-9 / p.net.gap_per_byte,
                static_cast<unsigned long long>(p.eager_bytes), p.sender_polls ? "handshake" : "get",
                static_cast<unsigned long long>(p.pipeline_bytes));
    hytask_apps::report_blas(true);  // the kernels are timed: warns if they are narrower than the CPU
    std::printf("kernels (OpenBLAS %s, %d at once):", blas_core().c_str(), threads);
    for (std::size_t k = 0; k < p.kernel_seconds.size(); ++k)
      std::printf(" %s=%.6g", probe->kernels()[k].c_str(), p.kernel_seconds[k]);
    std::printf("\n\n| ranks | grid | N | tasks | simulated s | Gflop/s | per rank | efficiency | idle: data | release | matching | local | discovery | end | messages per rank | MB per rank | simulation s |\n");
    std::printf("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    double base = 0;
    for (int ranks : o.ranks) {
      const grid g = o.fixed.p > 0 ? o.fixed : balanced(ranks);
      long n = o.n;
      if (o.n_per_rank > 0) n = std::max<long>(o.nb, static_cast<long>(o.n_per_rank * std::sqrt(ranks)) / o.nb * o.nb);
      const auto model = o.app == "cholesky" ? make_cholesky({n, o.nb}, g)
                                             : make_qr({o.m, n, o.nb, o.ib}, g);
      const auto t0 = std::chrono::steady_clock::now();
      const result r = simulate(*model, p);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = model->flops() / r.seconds / 1e9, per_rank = rate / ranks;
      if (base == 0) base = per_rank;
      double idle[static_cast<int>(idle_reason::count)] = {};
      double msgs = 0, bytes = 0;
      for (const rank_result& rr : r.ranks) {
        for (int i = 0; i < static_cast<int>(idle_reason::count); ++i) idle[i] += rr.idle[i];
        msgs += static_cast<double>(rr.messages);
        bytes += static_cast<double>(rr.bytes);
      }
      const double worker_time = r.seconds * ranks * o.workers;
      std::printf("| %d | %dx%d | %ld | %llu | %.4g | %.1f | %.2f | %.0f %% |", ranks, g.p, g.q, n,
                  static_cast<unsigned long long>(r.tasks), r.seconds, rate, per_rank, 100 * per_rank / base);
      for (double x : idle) std::printf(" %.1f %% |", 100 * x / worker_time);
      std::printf(" %.0f | %.1f | %.1f |\n", msgs / ranks, bytes / ranks / 1e6, wall);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hytask-sim: %s\n", e.what());
    return 1;
  }
  return 0;
}
