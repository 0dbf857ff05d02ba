// Turns a hang into a failure that names its cause: unless the guard is destroyed within
// `seconds`, it calls on_hang (which must end the process) from its own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

class hang_guard {
 public:
  hang_guard(int seconds, std::function<void()> on_hang)
      : thread_([this, seconds, f = std::move(on_hang)] {
          for (int i = 0; i < seconds * 10 && !done_.load(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          if (!done_.load()) f();
        }) {}
  ~hang_guard() {
    done_.store(true);
    thread_.join();
  }
  hang_guard(const hang_guard&) = delete;
  hang_guard& operator=(const hang_guard&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};
