// Renaming (issue 20, seed 004 §4.1): a pipeline where each step's producer writes a buffer
// that many readers then read, and the next producer writes it again.
//
//   producer k:  inout(state), out(buffer)     the producers form a chain through `state`
//   reader k.r:  in(buffer)                    R readers per step
//
// plain:      the buffer is plain memory: producer k + 1 waits for the R readers of step k
//             (a write-after-read chain), so readers overlap only with each other.
// versioned:  the buffer is a hytask::versioned object: producer k + 1 gets a fresh version
//             and runs as soon as producer k is done, so the readers of several steps and
//             the producers overlap (memory: HYTASK_RENAME_MAX_BYTES).
//
// Both variants run in the same process, alternating, and must compute the same checksum.
// Prints per variant the median time per step and, for versioned, what renaming did; the
// speedup is plain / versioned. Example (the figure the issue asks for):
//   build/bench/bench_rename --threads 4 --steps 400 --readers 8 --elems 16384 --passes 8
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "hytask/hytask.hpp"

namespace {

struct options {
  int threads = 2, steps = 200, readers = 8, reps = 5;
  long elems = 8192;  // doubles per buffer
  int passes = 4;     // a reader sums the buffer this many times; a producer fills it once per pass
};

// The command line; nothing when --help was asked for (and printed).
std::optional<options> parse(int argc, char** argv) {
  options o;
  hytask_cli::command_line cli(
      "bench_rename", "[--threads T] [--steps K] [--readers R] [--elems N] [--passes P] [--reps N]",
      "A producer -> R readers -> producer pipeline of K steps over one buffer of N doubles,\n"
      "with a plain buffer (write-after-read chain) and a hytask::versioned one (renamed).");
  cli.integer("--threads", o.threads, 1, 4096, "workers (default 2)");
  cli.integer("--steps", o.steps, 1, 1000000, "pipeline steps K (default 200)");
  cli.integer("--readers", o.readers, 1, 1024, "reader tasks per step R (default 8)");
  cli.integer("--elems", o.elems, 1, 1L << 30, "doubles per buffer N (default 8192)");
  cli.integer("--passes", o.passes, 1, 1000000,
              "a reader sums the buffer P times, a producer fills it once per pass (default 4)");
  cli.integer("--reps", o.reps, 1, 1000000, "timed runs of each variant after a warm-up; medians reported (default 5)");
  if (!cli.parse(argc, argv)) return std::nullopt;
  return o;
}

void produce(double* buf, long n, int passes, std::uint64_t& state) {
  for (int p = 0; p < passes; ++p)
    for (long i = 0; i < n; ++i) buf[i] = static_cast<double>((state + static_cast<std::uint64_t>(i * p)) % 1000);
  state = state * 6364136223846793005ull + 1442695040888963407ull;
}

double read_sum(const double* buf, long n, int passes) {
  double s = 0;
  for (int p = 0; p < passes; ++p)
    for (long i = 0; i < n; ++i) s += buf[i] * (p + 1);
  return s;
}

struct result {
  double seconds;
  double checksum;
};

result run(const options& o, bool versioned) {
  std::vector<double> buffer(static_cast<std::size_t>(o.elems), 0.0);
  std::vector<double> sums(static_cast<std::size_t>(o.steps) * static_cast<std::size_t>(o.readers), 0.0);
  std::uint64_t state = 12345;
  const long n = o.elems;
  const int passes = o.passes;
  const auto t0 = std::chrono::steady_clock::now();
  if (versioned) {
    hytask::versioned<double> v(buffer);
    for (int k = 0; k < o.steps; ++k) {
      hytask::spawn([&state, n, passes](double* b) { produce(b, n, passes, state); },
                    hytask::inout(state), hytask::out(v));
      for (int r = 0; r < o.readers; ++r) {
        double* out = &sums[static_cast<std::size_t>(k * o.readers + r)];
        hytask::spawn([out, n, passes](const double* b) { *out = read_sum(b, n, passes); },
                      hytask::in(v));
      }
    }
    hytask::wait_all();
  } else {
    double* b = buffer.data();
    for (int k = 0; k < o.steps; ++k) {
      hytask::spawn([&state, b, n, passes] { produce(b, n, passes, state); }, hytask::inout(state),
                    hytask::out(b, static_cast<std::size_t>(n)));
      for (int r = 0; r < o.readers; ++r) {
        double* out = &sums[static_cast<std::size_t>(k * o.readers + r)];
        hytask::spawn([out, b, n, passes] { *out = read_sum(b, n, passes); },
                      hytask::in(b, static_cast<std::size_t>(n)));
      }
    }
    hytask::wait_all();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double checksum = buffer[0];
  for (double x : sums) checksum += x;
  return {s, checksum};
}

int run_bench(int argc, char** argv) {
  const std::optional<options> parsed = parse(argc, argv);
  if (!parsed) return 0;  // --help
  const options& o = *parsed;
  hytask::runtime rt(hytask::config{.threads = static_cast<unsigned>(o.threads)});
  std::vector<double> t_plain, t_versioned;
  double check_plain = 0, check_versioned = 0;
  run(o, false);  // warm-up: records, fibers, version buffers
  run(o, true);
  for (int r = 0; r < o.reps; ++r) {
    const result p = run(o, false);
    const result v = run(o, true);
    t_plain.push_back(p.seconds);
    t_versioned.push_back(v.seconds);
    check_plain = p.checksum;
    check_versioned = v.checksum;
  }
  if (check_plain != check_versioned) {
    std::fprintf(stderr, "bench_rename: checksums differ: plain %.17g, versioned %.17g\n", check_plain,
                 check_versioned);
    return 1;
  }
  std::sort(t_plain.begin(), t_plain.end());
  std::sort(t_versioned.begin(), t_versioned.end());
  const double mp = t_plain[t_plain.size() / 2], mv = t_versioned[t_versioned.size() / 2];
  const hytask::rename_counters c = hytask::rename_stats();
  std::printf("case=rename variant=plain threads=%d steps=%d readers=%d bytes=%ld us_per_step=%.2f\n",
              o.threads, o.steps, o.readers, o.elems * 8, mp * 1e6 / o.steps);
  std::printf("case=rename variant=versioned threads=%d steps=%d readers=%d bytes=%ld us_per_step=%.2f "
              "speedup=%.2f renamed=%llu in_place=%llu refused=%llu buffers=%llu peak_bytes=%zu\n",
              o.threads, o.steps, o.readers, o.elems * 8, mv * 1e6 / o.steps, mp / mv,
              static_cast<unsigned long long>(c.renamed), static_cast<unsigned long long>(c.in_place),
              static_cast<unsigned long long>(c.refused), static_cast<unsigned long long>(c.allocated),
              c.bytes_peak);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_cli::main_frame("bench_rename", [&] { return run_bench(argc, argv); });
}
