// Helpers shared by the unit tests.
#pragma once

#include <cstdio>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "hytask/core/this_task.hpp"

namespace hytask_test {

#ifndef HYTASK_TEST_DEFAULT_SCALE
#define HYTASK_TEST_DEFAULT_SCALE 1
#endif

// Scales iteration counts down: HYTASK_TEST_SCALE (a divisor) if set, else the binary's
// default (20 in the sanitizer variants).
inline long scaled(long n) {
  const char* s = std::getenv("HYTASK_TEST_SCALE");
  long d = s ? std::atol(s) : HYTASK_TEST_DEFAULT_SCALE;
  return d > 1 ? std::max(1L, n / d) : n;
}

// A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:", "VmSize:"), or -1.
inline long status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key(field);
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::atol(line.c_str() + key.size());
  return -1;
}

// Peak resident set size of this process, in KiB (VmHWM).
inline long peak_rss_kib() { return status_kib("VmHWM:"); }

// Starts the peak (VmHWM) again from the current RSS (Linux >= 4.0), so that a test measures
// its own peak, not an earlier test's in the same process (--gtest_repeat, a filter of many).
inline void reset_peak_rss() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

inline long current_rss_kib() { return status_kib("VmRSS:"); }

inline double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// The share of `window` in which CPU `cpu` was busy (/proc/stat: user, nice, system, irq,
// softirq, steal over all), measured now by sleeping through it; -1 if unknown. With this
// process idle meanwhile, that is other processes' (and the hypervisor's) share of the core.
inline double cpu_busy_share(int cpu, std::chrono::milliseconds window) {
  auto sample = [cpu](unsigned long long& busy, unsigned long long& total) {
    std::ifstream in("/proc/stat");
    const std::string name = "cpu" + std::to_string(cpu);
    std::string label;
    while (in >> label) {
      if (label == name) {
        unsigned long long v[8] = {};
        for (auto& x : v) in >> x;
        busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        total = busy + v[3] + v[4];
        return true;
      }
      in.ignore(1 << 16, '\n');
    }
    return false;
  };
  unsigned long long b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (cpu < 0 || !sample(b0, t0)) return -1;
  std::this_thread::sleep_for(window);
  if (!sample(b1, t1) || t1 <= t0) return -1;
  return static_cast<double>(b1 - b0) / static_cast<double>(t1 - t0);
}

// Minor page faults of the process so far (a page touched for the first time).
inline long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

inline bool sanitized() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// A fixed 64-bit mixing step (MurmurHash3's finaliser, first half): the random-graph tests
// fold what a task read into what it writes with it, so that another order changes the result.
inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

// In a task: yields (letting other tasks run) until flag is set; false after `deadline`.
inline bool yield_until(const std::atomic<bool>& flag, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!flag.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() > end) return false;
    hytask::this_task::yield();
  }
  return true;
}

// Sets an environment variable for a scope; restores (or unsets) it at the scope's end.
class env_guard {
 public:
  env_guard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) {
      old_ = old;
      had_ = true;
    }
    ::setenv(name, value, 1);
  }
  ~env_guard() {
    if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  env_guard(const env_guard&) = delete;
  env_guard& operator=(const env_guard&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// Turns a hang into a failure: unless the scope is left within `limit`, prints what did not
// finish and ends the process with status 1 (a hang would only time out under ctest).
class hang_guard {
 public:
  hang_guard(std::chrono::seconds limit, std::string what)
      : what_(std::move(what)), thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
          std::fprintf(stderr, "FAILED: %s did not finish within %lld s (a hang)\n", what_.c_str(),
                       static_cast<long long>(limit.count()));
          std::fflush(stderr);
          std::_Exit(1);
        }) {}
  ~hang_guard() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  hang_guard(const hang_guard&) = delete;
  hang_guard& operator=(const hang_guard&) = delete;

 private:
  std::string what_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace hytask_test
