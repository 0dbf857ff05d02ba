// The serialized mode's lock (serial_lock.hpp) and the public serialized_section.
#include "comm/serial_lock.hpp"

#include <thread>

#include "hytask/comm/serialized.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"

namespace hytask::mpi {
namespace detail {

void serial_lock::enter_section() {
  waiting_.fetch_add(1, std::memory_order_seq_cst);
  mutex_.lock();
  waiting_.fetch_sub(1, std::memory_order_relaxed);
  entered_.fetch_add(1, std::memory_order_release);
}

void serial_lock::unlock() {
  const bool waiter = waiting_.load(std::memory_order_seq_cst) != 0;
  const std::uint64_t before = entered_.load(std::memory_order_relaxed);
  mutex_.unlock();
  if (!waiter) return;
  // Give the waiting section the lock: wait (1 ms at most, yielding the core it may need)
  // until it has entered. It then holds the lock, and the next lock() waits for its end.
  const std::int64_t until = core::now_ns() + 1'000'000;
  while (entered_.load(std::memory_order_acquire) == before && core::now_ns() < until)
    std::this_thread::yield();
}

serial_lock& process_serial_lock() {
  static serial_lock lock;
  return lock;
}

}  // namespace detail

serialized_section::serialized_section() { detail::process_serial_lock().enter_section(); }
serialized_section::~serialized_section() { detail::process_serial_lock().leave_section(); }

}  // namespace hytask::mpi
