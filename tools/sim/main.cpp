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
#include <thread>
#include <vector>

#include "blas_report.hpp"
#include "kernels.hpp"
#include "simulator.hpp"

namespace {

using namespace hytask::sim;

const char* usage_text() {
  return R"(usage: hytask-sim cholesky|qr [options]
  --ranks LIST          simulated ranks, e.g. 1,4,16,64 (default 1,2,4); grid P x Q with P <= Q,
                        as MPI_Dims_create makes it (or --grid PxQ for one run)
  --grid PxQ            one run on this grid
  --n N                 the matrix order (default 4096), the same at every rank count
  --n-per-rank N0       weak scaling instead: N = N0 * sqrt(ranks), down to a multiple of NB
  --m M                 qr: rows (default N)
  --nb NB               tile size (default 256)          --ib IB     qr's inner block (default 32)
  --workers W           workers per rank, main included (default 1)
  --host-cores C        every rank on one machine of C cores, rank r on core r mod C (processor
                        sharing), as the cluster in a box on a small machine; default: a core each
  --network box|ib      LogGP preset: box = the cluster in a box (1 Gbit/s veth, TCP: L 40 us,
                        o 3 us), ib = EDR InfiniBand (L 1 us, o 0.5 us, 12 GB/s); default box
  --latency-us L --overhead-us O --gbits B    override the preset
  --eager-bytes E       tiles above E bytes go by rendezvous (box: 65536, Open MPI's TCP
                        eager limit; ib: 8192)
  --pipeline-bytes B    a tile crosses in pieces of B bytes, each taken by a poll of the
                        receiver and followed by one of the sender (box: 131072; ib: 0, at once)
  --rendezvous handshake|get   handshake: the owner sends once it has polled the go-ahead
                        (TCP, box); get: the accessor reads the tile (RDMA, ib)
  --window W            active phases (default 8, HYTASK_GLOBAL_WINDOW)
  --spawn-us S          main's time per spawned task (default 2)
  --backstop-us B       a busy rank's messages wait at most this long (default 500)
  --kernel-seconds LIST NAME=SECONDS,... instead of measuring those kernels
  --calibrate-threads T kernels timed on T threads at once (default: the cores here)
  --reps R              timed runs of each kernel per thread (default 10)
  -h, --help            this text
)";
}

struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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

options parse(int argc, char** argv) {
  options o;
  if (argc < 2) throw usage_error("give the application: cholesky or qr");
  int at = 1;
  if (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::fputs(usage_text(), stdout);
    std::exit(0);
  }
  o.app = argv[at++];
  if (o.app != "cholesky" && o.app != "qr") throw usage_error("unknown application '" + o.app + "': cholesky or qr");
  for (; at < argc; ++at) {
    const std::string a = argv[at];
    if (a == "-h" || a == "--help") {
      std::fputs(usage_text(), stdout);
      std::exit(0);
    }
    if (at + 1 >= argc) throw usage_error(a + " needs a value (or is unknown: see --help)");
    const char* v = argv[++at];
    if (a == "--ranks") {
      o.ranks.clear();
      for (const char* s = v; *s;) {
        const char* comma = std::strchr(s, ',');
        const std::string item = comma ? std::string(s, comma) : std::string(s);
        o.ranks.push_back(static_cast<int>(number("--ranks", item.c_str(), 1, 1 << 20)));
        s = comma ? comma + 1 : s + item.size();
      }
    } else if (a == "--grid") {
      if (std::sscanf(v, "%dx%d", &o.fixed.p, &o.fixed.q) != 2 || o.fixed.p < 1 || o.fixed.q < 1)
        throw usage_error(std::string("--grid '") + v + "': expected PxQ, e.g. 2x2");
      o.ranks = {o.fixed.p * o.fixed.q};
    } else if (a == "--n") o.n = number("--n", v, 1, 1L << 40);
    else if (a == "--n-per-rank") o.n_per_rank = number("--n-per-rank", v, 1, 1L << 40);
    else if (a == "--m") o.m = number("--m", v, 1, 1L << 40);
    else if (a == "--nb") o.nb = static_cast<int>(number("--nb", v, 1, 1 << 16));
    else if (a == "--ib") o.ib = static_cast<int>(number("--ib", v, 1, 1 << 16));
    else if (a == "--workers") o.workers = static_cast<int>(number("--workers", v, 1, 4096));
    else if (a == "--host-cores") o.host_cores = static_cast<int>(number("--host-cores", v, 0, 1 << 20));
    else if (a == "--window") o.window = static_cast<int>(number("--window", v, 1, 1 << 20));
    else if (a == "--calibrate-threads") o.threads = static_cast<int>(number("--calibrate-threads", v, 1, 4096));
    else if (a == "--reps") o.reps = static_cast<int>(number("--reps", v, 1, 1 << 20));
    else if (a == "--network") {
      o.network = v;
      if (o.network != "box" && o.network != "ib") throw usage_error("--network '" + o.network + "': box or ib");
    } else if (a == "--latency-us") o.latency_us = real("--latency-us", v, 0);
    else if (a == "--overhead-us") o.overhead_us = real("--overhead-us", v, 0);
    else if (a == "--gbits") o.gbits = real("--gbits", v, 1e-6);
    else if (a == "--spawn-us") o.spawn_us = real("--spawn-us", v, 0);
    else if (a == "--backstop-us") o.backstop_us = real("--backstop-us", v, 0);
    else if (a == "--kernel-seconds") o.kernel_seconds = v;
    else if (a == "--eager-bytes") o.eager = number("--eager-bytes", v, 0, 1L << 40);
    else if (a == "--pipeline-bytes") o.pipeline = number("--pipeline-bytes", v, 0, 1L << 40);
    else if (a == "--rendezvous") {
      o.rendezvous = v;
      if (o.rendezvous != "handshake" && o.rendezvous != "get")
        throw usage_error("--rendezvous '" + o.rendezvous + "': handshake or get");
    }
    else {
      throw usage_error("unknown option " + a + " (see --help)");
    }
  }
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
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hytask-sim: %s\n%s", e.what(), usage_text());
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
