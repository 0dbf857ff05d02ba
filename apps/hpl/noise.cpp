// Seed 004 §6.4's OS noise: one extra thread per rank that alternates a burst of
// computation with sleep, so that the rank loses its core for `burst` every `period`.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "hpl.hpp"

namespace hpl {

struct noise::impl {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;
  volatile double sink = 0;
};

noise::noise(double burst_ms, double period_ms) : impl_(std::make_unique<impl>()) {
  using clock = std::chrono::steady_clock;
  const auto burst = std::chrono::duration<double, std::milli>(burst_ms);
  const auto period = std::chrono::duration<double, std::milli>(period_ms);
  impl* s = impl_.get();
  s->thread = std::thread([s, burst, period] {
    auto next = clock::now();
    double x = 1.0;
    for (;;) {
      const auto start = clock::now();
      while (clock::now() - start < burst)
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;  // computing, not waiting
      s->sink = x;
      next += std::chrono::duration_cast<clock::duration>(period);
      std::unique_lock lock(s->mu);
      if (s->cv.wait_until(lock, next, [s] { return s->stop; })) return;
    }
  });
}

noise::~noise() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
}

}  // namespace hpl
