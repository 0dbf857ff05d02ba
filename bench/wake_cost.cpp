// What a thread's wake-up costs the compute on the same core: a compute thread pinned to one
// CPU reads the clock in a tight loop and counts every gap (time it did not run), while a
// second thread pinned to the same CPU sleeps to absolute deadlines P apart and does nothing
// when it wakes. The compute time lost per wake, over the same loop without the sleeper, is
// what every wake of a progress thread (the omp session's, comm's `thread` policy, the node
// agent) takes from a worker sharing its core: the timer interrupt, two context switches and
// the caches they disturb. On bare metal a few microseconds; on the virtual machines of
// docs/benchmarks.md tens of them, which is why hytask's pollers keep their wakes few.
//   bench_wake_cost [--cpu C] [--seconds S] [--periods-us P1,P2,...]
// (defaults: the first CPU the process may use, 0.5 s per measurement, periods
// 1000,500,200,100 us)
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "command_line.hpp"
#include "pin.hpp"

namespace {

// A failure after the command line was taken: said, and the process ends with status 1.
[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_wake_cost: %s\n", why.c_str());
  std::exit(1);
}

using clock_type = std::chrono::steady_clock;

// Gaps the compute loop saw: how many, and their sum (ns). A gap is a clock step of more
// than `gap_ns` between two consecutive reads (a read takes tens of ns).
struct gaps {
  long count = 0;
  double lost_ns = 0;
};
constexpr std::int64_t gap_ns = 2000;

// One measurement: the compute loop for `seconds` on `cpu`, with a sleeper of period
// `period_us` beside it (0: none). Returns the gaps and the sleeper's wakes.
gaps measure(int cpu, double seconds, long period_us, long& wakes) {
  std::atomic<bool> stop{false};
  std::atomic<long> woke{0};
  std::thread sleeper;
  if (period_us > 0) {
    sleeper = std::thread([&] {
      if (!bench::pin_this_thread(cpu)) die("cannot pin the sleeper to CPU " + std::to_string(cpu));
      timespec at;
      clock_gettime(CLOCK_MONOTONIC, &at);
      while (!stop.load(std::memory_order_relaxed)) {
        at.tv_nsec += period_us * 1000;
        while (at.tv_nsec >= 1000000000) {
          at.tv_nsec -= 1000000000;
          ++at.tv_sec;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
        woke.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  gaps g;
  const auto end = clock_type::now() + std::chrono::duration<double>(seconds);
  auto prev = clock_type::now();
  for (;;) {
    const auto now = clock_type::now();
    const std::int64_t step = std::chrono::duration_cast<std::chrono::nanoseconds>(now - prev).count();
    if (step > gap_ns) {
      ++g.count;
      g.lost_ns += static_cast<double>(step);
    }
    prev = now;
    if (now >= end) break;
  }
  stop.store(true);
  if (sleeper.joinable()) sleeper.join();
  wakes = woke.load();
  return g;
}

// The first CPU this process may run on (the default: CPU 0 may be outside a container's set).
int first_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) return c;
  return 0;
}

int run(int argc, char** argv) {
  int cpu = first_allowed_cpu();
  double seconds = 0.5;
  std::vector<long> periods = {1000, 500, 200, 100};
  hytask_cli::command_line cli(
      "bench_wake_cost", "[--cpu C] [--seconds S] [--periods-us P1,P2,...]",
      "What a thread's wake-up costs the compute on the same core: a compute thread pinned to one\n"
      "CPU counts the gaps in its clock reads, alone and beside a sleeper pinned to the same CPU\n"
      "that wakes every P microseconds. Prints one wake_cost line per period (0: alone).");
  cli.integer("--cpu", cpu, 0, 1 << 20,
              "the CPU of both threads (default: the first CPU the process may use, here " + std::to_string(cpu) + ")");
  cli.custom("--seconds", "S", [&](const std::string& v) {
    const std::string wants = "--seconds wants a duration in (0, 600], not '" + v + "'";
    try {
      seconds = hytask_cli::parse_number("--seconds", v, 0, 600);
    } catch (const hytask_cli::usage_error&) {
      throw hytask_cli::usage_error(wants);
    }
    if (!(seconds > 0)) throw hytask_cli::usage_error(wants);
  }, "per measurement, in (0, 600] (default 0.5)");
  cli.custom("--periods-us", "LIST", [&](const std::string& v) {
    periods.clear();
    for (const std::string& item : hytask_cli::split(v, ',')) {
      const long p = std::atol(item.c_str());
      if (p <= 0 || item.find_first_not_of("0123456789") != std::string::npos || item.size() > 9)
        throw hytask_cli::usage_error("--periods-us wants positive periods in microseconds, e.g. 500,100, not '" + v + "'");
      periods.push_back(p);
    }
    if (periods.empty()) throw hytask_cli::usage_error("--periods-us wants at least one period");
  }, "the sleeper's periods in microseconds (default 1000,500,200,100)");
  if (!cli.parse(argc, argv)) return 0;
  if (!bench::pin_this_thread(cpu))
    throw hytask_cli::usage_error("--cpu " + std::to_string(cpu) + ": cannot pin to this CPU (is it online and allowed?)");

  long none = 0;
  const gaps base = measure(cpu, seconds, 0, none);
  std::printf("wake_cost cpu=%d period_us=0 wakes=0 gaps_per_s=%.0f lost_pct=%.2f\n", cpu,
              base.count / seconds, 100.0 * base.lost_ns / (seconds * 1e9));
  for (const long p : periods) {
    long wakes = 0;
    const gaps g = measure(cpu, seconds, p, wakes);
    const double extra = g.lost_ns - base.lost_ns;
    std::printf("wake_cost cpu=%d period_us=%ld wakes=%ld gaps_per_s=%.0f lost_pct=%.2f us_per_wake=%.1f\n",
                cpu, p, wakes, g.count / seconds, 100.0 * g.lost_ns / (seconds * 1e9),
                wakes > 0 ? extra / static_cast<double>(wakes) / 1000.0 : 0.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return hytask_cli::main_frame("bench_wake_cost", [&] { return run(argc, argv); });
}
