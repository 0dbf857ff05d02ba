// Task Bench-style task graphs (Slaughter et al., "Task Bench: A Parameterized Benchmark for
// Evaluating Parallel Runtime Performance", SC'20), shared by every system of
// bench/taskbench (tb_hytask, tb_omp built by GCC and by Clang, tb_mpi), so that all of them
// run exactly the same graph, the same task body and the same checks, and print the same
// line. bench/taskbench/run_metg.sh sweeps the task size and derives METG(50%).
//
// The graph: width W points per time step, T steps. Task (t, i), t in [0, T), i in [0, W).
// Tasks at t = 0 depend on nothing. For t >= 1, task (t, i) reads the outputs of the tasks
// (t - 1, j) for j in deps(t, i), a sorted list without duplicates:
//   trivial      none: the tasks are independent (and read and write no record at all)
//   stencil_1d   i - 1, i, i + 1, clipped to [0, W)
//   nearest:r    i - r/2 .. i + r/2, clipped (r odd; --radix, default 3)
//   spread:r     (i + floor(k * W / r)) mod W for k = 0 .. r - 1, deduplicated: r points
//                spread evenly around the ring of points, i itself included (--radix)
//   fft          i and i XOR 2^((t - 1) mod log2 W) (W a power of two; for W = 1 just i)
//   tree         at step t the first min(W, 2^t) points are active and point i depends on
//                i / 2; inactive points have no task (and are not counted as tasks)
//
// The data: every task but trivial's writes a 16-byte record {step, point, value}. The
// records live in a ring of three steps per point, rec[t % 3][i]. Why three: with two
// (double buffering) task (t, i) overwrites the record of (t - 2, i), which tasks of step
// t - 1 read; for fft and spread those readers are not among (t, i)'s dependencies, so a
// runtime would add write-after-read edges that are not in the graph and serialise the
// steps more than the graph does. With three, the record (t, i) overwrites is (t - 3, i):
// its readers are at t - 2: for the stencils (t, i) already follows them through (t - 1, i),
// and for fft, spread and tree any edge a runtime adds is an extra ordering two steps back,
// which rarely holds a task up. And memory stays bounded, W * 3 records, however many steps.
// Each record is padded to a cache line (as is each point's checksum): neighbouring points
// run on different workers, and sharing lines between them would measure false sharing,
// not the runtime (Task Bench gives every point its own output buffer).
//
// A task checks that each record it reads is the one it expects (step t - 1, point j): a
// runtime that does not honour a dependency is caught, and the run fails with
//   taskbench: task (t,i) read (s,p) where it expected (t-1,j): a dependency was not honoured
// Its value is mix(t, i, the values it read in order, the kernel's result); it is added to a
// per-point checksum (relaxed atomic adds: the order does not matter), which is compared
// after every run with a serial computation of the same graph.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command_line.hpp"

// kernel.cpp: `iterations` rounds of 24 independent multiply-adds on doubles.
extern "C" std::uint64_t taskbench_kernel(long iterations, std::uint64_t seed);

namespace taskbench {

// Floating-point operations per kernel iteration: 24 multiply-adds, 2 flops each (kernel.cpp).
inline constexpr long flops_per_iteration = 48;
// The largest --radix: the dependency lists live in arrays of this size on the stack.
inline constexpr int max_radix = 64;

// ---- Failing -------------------------------------------------------------------------------

// Prints the message and ends the process with status 1. An MPI rank does not call
// MPI_Abort: both launchers end the job when a rank exits with an error, after forwarding
// its output, whereas MPICH's MPI_Abort lost the whole output of the job (this message
// included) in 7 of 300 runs.
[[noreturn]] inline void fail(const char* message) {
  std::fprintf(stderr, "%s\n", message);
  std::fflush(stderr);
  std::fflush(stdout);
  // _Exit, not exit: other threads may be running tasks, and must not see static
  // destructors run under them.
  std::_Exit(1);
}

// ---- The graph -----------------------------------------------------------------------------

enum class pattern { trivial, stencil_1d, nearest, spread, fft, tree };

struct graph {
  pattern kind = pattern::stencil_1d;
  int radix = 3;  // nearest and spread
  long width = 4;
  long steps = 1000;
  int log2_width = 2;  // fft

  std::string name() const {
    switch (kind) {
      case pattern::trivial:
        return "trivial";
      case pattern::stencil_1d:
        return "stencil_1d";
      case pattern::nearest:
        return "nearest:" + std::to_string(radix);
      case pattern::spread:
        return "spread:" + std::to_string(radix);
      case pattern::fft:
        return "fft";
      case pattern::tree:
        return "tree";
    }
    return "?";
  }

  // The number of points with a task at step t (the first ones).
  long active_width(long t) const {
    if (kind != pattern::tree || t >= 62) return width;
    return std::min(width, 1L << t);
  }
  bool active(long t, long i) const { return i < active_width(t); }

  long tasks() const {
    long n = 0;
    for (long t = 0; t < steps; ++t) n += active_width(t);
    return n;
  }

  // Whether tasks exchange records (all patterns but trivial).
  bool has_records() const { return kind != pattern::trivial; }

  int max_deps() const {
    switch (kind) {
      case pattern::trivial:
        return 0;
      case pattern::stencil_1d:
        return 3;
      case pattern::nearest:
      case pattern::spread:
        return radix;
      case pattern::fft:
        return 2;
      case pattern::tree:
        return 1;
    }
    return 0;
  }

  // The points of step t - 1 that active task (t, i) reads, sorted, without duplicates,
  // into out[0 .. returned count); out has room for max_radix entries.
  int deps(long t, long i, long* out) const {
    if (t == 0) return 0;
    int n = 0;
    auto clipped = [&](int r) {
      const long lo = std::max(0L, i - r / 2), hi = std::min(width - 1, i + r / 2);
      for (long j = lo; j <= hi; ++j) out[n++] = j;
    };
    switch (kind) {
      case pattern::trivial:
        break;
      case pattern::stencil_1d:
        clipped(3);
        break;
      case pattern::nearest:
        clipped(radix);
        break;
      case pattern::spread:
        for (int k = 0; k < radix; ++k) out[n++] = (i + k * width / radix) % width;
        std::sort(out, out + n);
        n = static_cast<int>(std::unique(out, out + n) - out);
        break;
      case pattern::fft:
        if (width == 1) {
          out[n++] = i;
        } else {
          const long j = i ^ (1L << ((t - 1) % log2_width));
          out[n++] = std::min(i, j);
          out[n++] = std::max(i, j);
        }
        break;
      case pattern::tree:
        out[n++] = i / 2;
        break;
    }
    return n;
  }
};

// ---- Values --------------------------------------------------------------------------------

// splitmix64's finaliser: a fixed 64-bit mixing function.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
inline std::uint64_t task_start_value(long t, long i) {
  return mix((static_cast<std::uint64_t>(t) << 32) ^ static_cast<std::uint64_t>(i));
}
// The kernel's seed depends on the point only, so that the serial reference needs one
// kernel call per point, not one per task.
inline std::uint64_t kernel_seed(long i) {
  return mix(0x7461736b62656e63ull + static_cast<std::uint64_t>(i));
}

struct record {
  std::uint32_t step;
  std::uint32_t point;
  std::uint64_t value;
};
static_assert(sizeof(record) == 16);
struct alignas(64) record_slot {
  record r;
};
// Eight points' checksums of one thread: a thread's row of slots is written by that thread
// only, so the check adds no line a task would share with tasks on other cores (a shared
// counter per point would cost every task of a shared-memory system a transfer between
// cores that MPI's ranks, each with their own, never pay).
struct alignas(64) checksum_slot {
  static constexpr long points = 8;
  std::uint64_t sum[points] = {};
};
// A step tag no task writes: what the ring holds before a run, so that a task that runs
// before its input was written never finds a record left by the previous run.
inline constexpr std::uint32_t no_step = 0xffffffffu;

// ---- Latency recording (--latency) -----------------------------------------------------

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Start, end and worker of every task, in arrays allocated before the run (nothing is
// allocated inside a task). Task (t, i) is entry t * W + i; when W * T exceeds `cap`
// entries only the first cap / W steps are recorded.
class latency_log {
 public:
  static constexpr long cap = 1L << 22;

  explicit latency_log(const graph& g)
      : width_(g.width),
        entries_(std::min(cap, g.width * g.steps)),
        start_(entries_),
        end_(entries_),
        worker_(entries_) {}

  void record(long t, long i, std::int64_t start, std::int64_t end, int worker) {
    const long k = t * width_ + i;
    if (k >= entries_) return;
    start_[k] = start;
    end_[k] = end;
    worker_[k] = worker_base_ + worker;
  }

  // For a system of several processes (MPI's ranks): this process's workers are numbered
  // from `base`, and each process records only its own tasks, the other entries staying 0,
  // so that an element-wise maximum over the processes merges their logs.
  void set_worker_base(int base) { worker_base_ = base; }
  long entries() const { return entries_; }
  std::int64_t* starts() { return start_.data(); }
  std::int64_t* ends() { return end_.data(); }
  int* workers() { return worker_.data(); }

  // For each recorded task with predecessors, its last-finishing predecessor: if that one
  // ran on another worker, start(task) - end(predecessor) is a cross-worker sample (xlat),
  // otherwise a same-worker one (slat). Medians and 99th percentiles, in ns. Locality:
  // remote_inputs = the percentage of records read that another worker wrote.
  std::string report(const graph& g) const {
    std::vector<std::int64_t> cross, same;
    long inputs = 0, remote = 0;
    long deps[max_radix];
    const long recorded_steps = entries_ / width_;
    for (long t = 1; t < std::min(g.steps, recorded_steps); ++t) {
      for (long i = 0; i < g.active_width(t); ++i) {
        const int n = g.deps(t, i, deps);
        if (n == 0) continue;
        long last = (t - 1) * width_ + deps[0];
        for (int k = 1; k < n; ++k) {
          const long p = (t - 1) * width_ + deps[k];
          if (end_[p] > end_[last]) last = p;
        }
        const long me = t * width_ + i;
        (worker_[last] != worker_[me] ? cross : same).push_back(start_[me] - end_[last]);
        for (int k = 0; k < n; ++k) remote += worker_[(t - 1) * width_ + deps[k]] != worker_[me];
        inputs += n;
      }
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, " remote_inputs_pct=%.1f",
                  inputs ? 100.0 * static_cast<double>(remote) / static_cast<double>(inputs) : 0.0);
    return stats("xlat", cross) + " " + stats("slat", same) + buf;
  }

 private:
  static std::string stats(const char* what, std::vector<std::int64_t>& v) {
    char buf[160];
    if (v.empty()) {
      std::snprintf(buf, sizeof buf, "%s_median_ns=na %s_p99_ns=na %s_samples=0", what, what, what);
      return buf;
    }
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const std::size_t p99 = std::min(n - 1, (n * 99 + 99) / 100 - 1);
    std::snprintf(buf, sizeof buf, "%s_median_ns=%lld %s_p99_ns=%lld %s_samples=%zu", what,
                  static_cast<long long>(v[(n - 1) / 2]), what, static_cast<long long>(v[p99]),
                  what, n);
    return buf;
  }

  long width_;
  long entries_;
  std::vector<std::int64_t> start_, end_;
  std::vector<int> worker_;
  int worker_base_ = 0;
};

// ---- The state of one run, and the task body -------------------------------------------

struct state {
  // threads: how many threads run tasks (the values worker_index returns: 0 .. threads-1).
  explicit state(const graph& graph_, int threads_ = 1)
      : g(graph_),
        threads(threads_),
        row_slots((g.width + checksum_slot::points - 1) / checksum_slot::points),
        ring(static_cast<std::size_t>(3 * g.width)),
        sums(static_cast<std::size_t>(threads * row_slots)) {}

  record* at(long t, long i) { return &ring[static_cast<std::size_t>((t % 3) * g.width + i)].r; }
  // The slots of step t's records (OpenMP's depend clauses index them).
  record_slot* slots(long t) { return &ring[static_cast<std::size_t>((t % 3) * g.width)]; }

  // Before each run (not timed): no record of the previous run can pass for this one's.
  void reset(long iterations_) {
    iterations = iterations_;
    for (auto& s : ring) s.r = record{no_step, no_step, 0};
    for (auto& slot : sums) slot = checksum_slot{};
  }

  // The checksum of point i's tasks run by thread `thread`.
  std::uint64_t& sum(int thread, long i) {
    return sums[slot_of(thread, i)].sum[i % checksum_slot::points];
  }
  // The checksum of point i over every thread (after the run).
  std::uint64_t point_sum(long i) const {
    std::uint64_t h = 0;
    for (int w = 0; w < threads; ++w) h += sums[slot_of(w, i)].sum[i % checksum_slot::points];
    return h;
  }
  std::size_t slot_of(int thread, long i) const {
    return static_cast<std::size_t>(thread * row_slots + i / checksum_slot::points);
  }

  graph g;
  long iterations = 0;
  bool corrupt = false;             // --corrupt: task (1, 0) writes a wrong step tag
  latency_log* latency = nullptr;   // --latency
  int (*worker_index)() = nullptr;  // which thread runs the calling task; null: thread 0
  int threads;
  long row_slots;                   // slots per thread
  std::vector<record_slot> ring;    // rec[t % 3][i]
  std::vector<checksum_slot> sums;  // [thread][point / 8]
};

[[noreturn]] inline void dependency_not_honoured(long t, long i, const record& r, long j) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "taskbench: task (%ld,%ld) read (%ld,%ld) where it expected (%ld,%ld): a "
                "dependency was not honoured",
                t, i, r.step == no_step ? -1L : static_cast<long>(r.step),
                r.point == no_step ? -1L : static_cast<long>(r.point), t - 1, j);
  fail(buf);
}

// The body of task (t, i), the same for every system.
inline void run_task(state& s, long t, long i) {
  const std::int64_t start = s.latency ? now_ns() : 0;
  long deps[max_radix];
  const int n = s.g.deps(t, i, deps);
  std::uint64_t h = task_start_value(t, i);
  for (int k = 0; k < n; ++k) {
    const record& r = *s.at(t - 1, deps[k]);
    if (r.step != static_cast<std::uint32_t>(t - 1) ||
        r.point != static_cast<std::uint32_t>(deps[k]))
      dependency_not_honoured(t, i, r, deps[k]);
    h = mix(h ^ r.value);
  }
  h = mix(h ^ taskbench_kernel(s.iterations, kernel_seed(i)));
  if (s.g.has_records()) {
    const bool corrupt = s.corrupt && t == 1 && i == 0;
    *s.at(t, i) =
        record{static_cast<std::uint32_t>(corrupt ? t + 1 : t), static_cast<std::uint32_t>(i), h};
  }
  const int thread = s.worker_index != nullptr ? s.worker_index() : 0;
  if (thread < 0 || thread >= s.threads)
    fail("taskbench: a task ran on a thread outside 0 .. threads-1: no checksum row for it");
  s.sum(thread, i) += h;
  if (s.latency) s.latency->record(t, i, start, now_ns(), thread);
}

// The checksums of a serial computation of the same graph, per point.
inline std::vector<std::uint64_t> reference_sums(const graph& g, long iterations) {
  const auto w = static_cast<std::size_t>(g.width);
  std::vector<std::uint64_t> kernel(w), prev(w), cur(w), sums(w);
  for (long i = 0; i < g.width; ++i) kernel[i] = taskbench_kernel(iterations, kernel_seed(i));
  long deps[max_radix];
  for (long t = 0; t < g.steps; ++t) {
    for (long i = 0; i < g.active_width(t); ++i) {
      std::uint64_t h = task_start_value(t, i);
      const int n = g.deps(t, i, deps);
      for (int k = 0; k < n; ++k) h = mix(h ^ prev[deps[k]]);
      h = mix(h ^ kernel[i]);
      cur[i] = h;
      sums[i] += h;
    }
    std::swap(prev, cur);
  }
  return sums;
}

// Compares the checksums of points [lo, hi) with the reference (computed once per
// iterations value); exits naming the first point that differs.
class checker {
 public:
  explicit checker(const graph& g) : g_(g) {}
  void check(const state& s, long lo, long hi) {
    if (s.iterations != iterations_ || ref_.empty()) {
      ref_ = reference_sums(g_, s.iterations);
      iterations_ = s.iterations;
    }
    for (long i = lo; i < hi; ++i) {
      const std::uint64_t got = s.point_sum(i);
      if (got != ref_[i]) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "taskbench: point %ld: checksum %016llx, expected %016llx (serial "
                      "reference): the run computed a different graph",
                      i, static_cast<unsigned long long>(got),
                      static_cast<unsigned long long>(ref_[i]));
        fail(buf);
      }
    }
  }

 private:
  graph g_;
  long iterations_ = -1;
  std::vector<std::uint64_t> ref_;
};

// ---- Options -------------------------------------------------------------------------------

struct options {
  graph g;
  std::vector<long> iterations{1000};
  int reps = 3;
  int threads = 2;
  bool latency = false;
  bool corrupt = false;
};

enum features : unsigned { with_threads = 1, with_latency = 2 };

// `text` as an integer >= min, or a usage_error naming `flag`.
inline long parse_long(const std::string& flag, const std::string& text, long min) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < min)
    throw hytask_cli::usage_error(flag + " needs an integer >= " + std::to_string(min) + ", not '" + text + "'");
  return v;
}

// The command line of `program` into `o`; `feats` says which of --threads and --latency the
// system accepts. False when --help was asked for (printed when `print_help`); a usage_error
// (hytask_cli) naming the problem when the line is wrong.
inline bool parse(int argc, char** argv, const std::string& program, unsigned feats, options& o, bool print_help) {
  using hytask_cli::usage_error;
  std::string pattern_name = "stencil_1d";
  long radix = -1;
  const bool threads = (feats & with_threads) != 0, latency = (feats & with_latency) != 0;
  hytask_cli::command_line cli(
      program,
      std::string("[--pattern P] [--width W] [--steps T] [--iterations N[,N...]]\n") +
          std::string(program.size() + 8, ' ') + "[--reps R] [--radix r]" + (threads ? " [--threads N]" : "") +
          (latency ? " [--latency]" : "") + " [--corrupt]",
      "Task Bench's graphs (bench/taskbench/graph.hpp): W points per step, T steps, each task\n"
      "running the kernel N iterations. Runs the graph once (timed alone: first_seconds), then R\n"
      "times per iterations value, checking every run, and prints one line per value.");
  cli.text("--pattern", pattern_name,
           "trivial | stencil_1d | nearest | spread | fft | tree (nearest:r and\n"
           "spread:r set the radix) (default stencil_1d)",
           "P");
  cli.custom("--width", "W", [&o](const std::string& v) { o.g.width = parse_long("--width", v, 1); },
             "points per step (default 4)");
  cli.custom("--steps", "T", [&o](const std::string& v) { o.g.steps = parse_long("--steps", v, 1); },
             "time steps (default 1000)");
  cli.custom("--iterations", "N[,N...]", [&o](const std::string& v) {
    o.iterations.clear();
    for (const std::string& item : hytask_cli::split(v, ',')) o.iterations.push_back(parse_long("--iterations", item, 0));
    if (o.iterations.empty()) throw usage_error("--iterations needs at least one value");
  }, "kernel iterations per task, one run set per value (default 1000)");
  cli.custom("--reps", "R", [&o](const std::string& v) { o.reps = static_cast<int>(parse_long("--reps", v, 1)); },
             "timed runs per iterations value (default 3)");
  cli.custom("--radix", "r", [&radix](const std::string& v) { radix = parse_long("--radix", v, 1); },
             "nearest and spread: dependencies per task, at most 64 (default 3)");
  if (threads) {
    cli.custom("--threads", "N", [&o](const std::string& v) { o.threads = static_cast<int>(parse_long("--threads", v, 1)); },
               "threads (default 2)");
  } else {
    // Refused with the reason, and not in the help.
    cli.custom("--threads", "N", [](const std::string&) {
      throw usage_error("--threads is for the threaded systems (taskbench_hytask, taskbench_omp_*); an MPI run has "
                        "one rank per core: choose the number with mpiexec -n");
    }, "")->group("");
  }
  if (latency)
    cli.flag("--latency", o.latency, "also record and report the latencies between dependent tasks");
  cli.flag("--corrupt", o.corrupt,
           "make task (1,0) write a wrong step tag: a self-test of the checker, the\n"
           "run must fail");
  if (!cli.parse(argc, argv, print_help)) return false;

  // "nearest:5" is "nearest" with radix 5.
  if (const auto colon = pattern_name.find(':'); colon != std::string::npos) {
    const std::string r = pattern_name.substr(colon + 1);
    pattern_name.resize(colon);
    if (radix >= 0) throw usage_error("give the radix once: '" + pattern_name + ":r' or --radix");
    radix = parse_long("the radix after ':'", r, 1);
  }
  graph& g = o.g;
  if (pattern_name == "trivial")
    g.kind = pattern::trivial;
  else if (pattern_name == "stencil_1d")
    g.kind = pattern::stencil_1d;
  else if (pattern_name == "nearest")
    g.kind = pattern::nearest;
  else if (pattern_name == "spread")
    g.kind = pattern::spread;
  else if (pattern_name == "fft")
    g.kind = pattern::fft;
  else if (pattern_name == "tree")
    g.kind = pattern::tree;
  else
    throw usage_error("--pattern: unknown pattern '" + pattern_name + "' (trivial, stencil_1d, nearest, spread, fft, tree)");

  if (radix >= 0 && g.kind != pattern::nearest && g.kind != pattern::spread)
    throw usage_error("a radix applies to nearest and spread only, not to " + pattern_name);
  if (radix >= 0) g.radix = static_cast<int>(std::min<long>(radix, max_radix + 1));
  if (g.radix > max_radix) throw usage_error(pattern_name + ": the radix must be at most 64");
  if (g.kind == pattern::nearest && g.radix % 2 == 0)
    throw usage_error("nearest needs an odd radix (i - r/2 .. i + r/2), not " + std::to_string(g.radix));
  if (g.width > 0x7fffffffL || g.steps > 0x7fffffffL)
    throw usage_error("--width/--steps: width and steps must fit the records' 32-bit fields");
  if (g.kind == pattern::fft) {
    if ((g.width & (g.width - 1)) != 0)
      throw usage_error("fft needs a power-of-two --width (each step pairs i with i XOR 2^k), not " +
                        std::to_string(g.width));
    g.log2_width = 0;
    while ((1L << g.log2_width) < g.width) ++g.log2_width;
  }
  if (o.corrupt && (!g.has_records() || g.steps < 3))
    throw usage_error("--corrupt needs a pattern with dependencies (not " + pattern_name + ") and --steps >= 3");
  return true;
}

// main's command line, before MPI starts in the MPI system: nothing, run; or the status to
// exit with, 0 after --help, 2 after a usage error (printed by one rank).
inline std::optional<int> take_options(int argc, char** argv, const std::string& program, unsigned feats, options& o) {
  return hytask_cli::parse_before_mpi(program, [&](bool print) { return parse(argc, argv, program, feats, o, print); });
}

// ---- Timing and the output line ----------------------------------------------------------

inline long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

struct timing {
  double seconds;
  long faults;  // minor page faults of this process during the run
};

// Times f() and counts the minor page faults it causes.
template <class F>
timing time_graph(F&& f) {
  const long faults = minor_faults();
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(t1 - t0).count(), minor_faults() - faults};
}

// One system, as the sweep sees it.
struct bench_system {
  const char* name;  // system=
  int cores;         // threads, or ranks
  bool prints;       // false on MPI ranks other than 0
  // Runs and checks one graph with the given iterations; returns its timing.
  std::function<timing(long iterations)> run;
  // The sum of a count over the processes of the run (MPI's ranks); the identity otherwise.
  std::function<long(long)> sum_over_processes = [](long x) { return x; };
};

// Applies --corrupt and --latency to s, and tells it which thread runs the calling task
// (worker, from 0 to s.threads - 1); the log it returns, null without --latency, must
// outlive the runs.
inline std::unique_ptr<latency_log> configure(const options& o, state& s, int (*worker)()) {
  s.corrupt = o.corrupt;
  s.worker_index = worker;
  if (!o.latency) return nullptr;
  auto log = std::make_unique<latency_log>(o.g);
  s.latency = log.get();
  return log;
}

// The median of v (not empty); sorts v.
inline double median_of(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The kernel's speed on the calling core now, in ns per iteration: 2^16 iterations (about
// 0.15 ms), so that a sweep can set each run against the machine's speed of that moment.
inline double kernel_ns_now() {
  constexpr long n = 1L << 16;
  const auto t0 = std::chrono::steady_clock::now();
  volatile std::uint64_t sink = taskbench_kernel(n, 0x9e3779b97f4a7c15ull);
  (void)sink;
  const std::chrono::duration<double, std::nano> d = std::chrono::steady_clock::now() - t0;
  return d.count() / static_cast<double>(n);
}

// The first graph of the process (timed alone: first_seconds, first_faults), then reps runs
// per iterations value, one line each. Before each run the kernel's speed is measured alone
// (kernel_ns, the median over the runs): kernel_efficiency = the kernel's time at that speed
// over the cores' time, which a change of the shared machine's speed between points does
// not move (efficiency against the run's peak FLOP/s is moved by it).
inline void sweep(const options& o, bench_system& sys, latency_log* latency) {
  const timing first = sys.run(o.iterations.front());
  const long first_faults = sys.sum_over_processes(first.faults);
  const long tasks = o.g.tasks();
  for (const long iterations : o.iterations) {
    std::vector<double> secs, speeds;
    for (int r = 0; r < o.reps; ++r) {
      speeds.push_back(kernel_ns_now());
      secs.push_back(sys.run(iterations).seconds);
    }
    if (!sys.prints) continue;
    const double median = median_of(secs);  // sorts secs: secs.front() is the fastest
    const double kernel_ns = median_of(speeds);
    const double flops =
        static_cast<double>(tasks) * static_cast<double>(iterations) * flops_per_iteration;
    const double kernel_seconds =
        static_cast<double>(tasks) * static_cast<double>(iterations) * kernel_ns * 1e-9;
    std::printf(
        "system=%s pattern=%s width=%ld steps=%ld iterations=%ld tasks=%ld flops=%.0f "
        "seconds=%.9f min_seconds=%.9f first_seconds=%.9f first_faults=%ld granularity_us=%.4f "
        "gflops=%.4f kernel_ns=%.4f kernel_efficiency=%.6f",
        sys.name, o.g.name().c_str(), o.g.width, o.g.steps, iterations, tasks, flops, median,
        secs.front(), first.seconds, first_faults,
        median * sys.cores / static_cast<double>(tasks) * 1e6, flops / median / 1e9, kernel_ns,
        kernel_seconds / (median * sys.cores));
    if (latency) std::printf(" %s", latency->report(o.g).c_str());
    std::printf("\n");
    std::fflush(stdout);
  }
}

}  // namespace taskbench
