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

#include "pin.hpp"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_wake_cost: %s\nusage: bench_wake_cost [--cpu C] [--seconds S] "
               "[--periods-us P1,P2,...]\n",
               why.c_str());
  std::exit(2);
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
      if (!bench::pin_this_thread(cpu)) usage("cannot pin the sleeper to CPU " + std::to_string(cpu));
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

}  // namespace

int main(int argc, char** argv) {
  int cpu = first_allowed_cpu();
  double seconds = 0.5;
  std::vector<long> periods = {1000, 500, 200, 100};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage("missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--cpu") {
      cpu = std::atoi(value.c_str());
      if (cpu < 0 || value.find_first_not_of("0123456789") != std::string::npos)
        usage("--cpu wants a CPU number, not '" + value + "'");
    } else if (arg == "--seconds") {
      seconds = std::atof(value.c_str());
      if (!(seconds > 0) || seconds > 600) usage("--seconds wants a duration in (0, 600], not '" + value + "'");
    } else if (arg == "--periods-us") {
      periods.clear();
      std::stringstream in(value);
      for (std::string item; std::getline(in, item, ',');) {
        const long p = std::atol(item.c_str());
        if (p <= 0 || item.find_first_not_of("0123456789") != std::string::npos)
          usage("--periods-us wants positive periods in microseconds, e.g. 500,100, not '" + value + "'");
        periods.push_back(p);
      }
      if (periods.empty()) usage("--periods-us wants at least one period");
    } else {
      usage("unknown option " + arg);
    }
  }
  if (!bench::pin_this_thread(cpu)) usage("cannot pin to CPU " + std::to_string(cpu) + " (is it online and allowed?)");

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
}
