// Thin wrapper over the Linux futex: sleep until a 32-bit word changes.
// Contract: futex_wait returns when *word != expected, on a wake, on a timeout or
// spuriously; callers always re-check their condition.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/clock.hpp"

namespace hytask::core {

// `shared`: the word is in memory shared between processes (the node table of seed 002),
// which the process-private futex calls cannot see across.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       long timeout_ns = -1, bool shared = false) noexcept {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout_ns >= 0) {
    ts = to_timespec(timeout_ns);
    tp = &ts;
  }
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, expected, tp, nullptr, 0);
}

inline void futex_wake(std::atomic<std::uint32_t>& word, int count = 1, bool shared = false) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word),
          shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

// Timed sleeps of the calling thread end within `ns` of their deadline. Linux's default
// slack, 50 us, would stretch the short polling periods of the progress policies (a 5 us
// wait would last 55 us). Returns the previous slack, to restore it on threads we borrow.
inline unsigned long set_timer_slack(unsigned long ns) noexcept {
  const int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0);
  return old > 0 ? static_cast<unsigned long>(old) : 50000UL;
}

inline constexpr unsigned long poll_timer_slack_ns = 1000;

}  // namespace hytask::core
