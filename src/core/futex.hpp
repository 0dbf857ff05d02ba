// Thin wrapper over the Linux futex: sleep until a 32-bit word changes.
// Contract: futex_wait returns when *word != expected, on a wake, on a timeout or
// spuriously; callers always re-check their condition.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hytask::core {

inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       long timeout_ns = -1) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = timeout_ns / 1000000000L;
    ts.tv_nsec = timeout_ns % 1000000000L;
    tp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, tp,
          nullptr, 0);
}

inline void futex_wake(std::atomic<std::uint32_t>& word, int count = 1) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

}  // namespace hytask::core
