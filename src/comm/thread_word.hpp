// The word the progress thread (multiple mode) or the MPI thread (funneled mode) sleeps on,
// and the poll the workers ask of it. Posts, nudges and stop bump the word to wake the thread.
// A progress policy may give a word of its own in memory shared between processes (the node
// policy's row of the node table): it is then waited on and woken with the process-shared
// futex calls.
#pragma once

#include <atomic>
#include <cstdint>

#include "platform/futex.hpp"

namespace hytask::mpi::detail {

class thread_word {
 public:
  std::uint32_t load() const noexcept { return word_->load(std::memory_order_acquire); }
  // Sleeps while the word is `seen`, at most timeout_ns (-1: until woken).
  void wait(std::uint32_t seen, long timeout_ns) noexcept {
    core::futex_wait(*word_, seen, timeout_ns, shared_);
  }
  void wake() noexcept {
    word_->fetch_add(1, std::memory_order_release);
    core::futex_wake(*word_, 1, shared_);
  }
  // Sleeps on w, in shared memory, instead (before the thread starts).
  void use_shared(std::atomic<std::uint32_t>* w) noexcept {
    word_ = w;
    shared_ = true;
  }
  // Asks the thread for a poll; false when one was asked for and not served yet.
  bool ask_poll() noexcept { return !poll_requested_.exchange(true, std::memory_order_acq_rel); }
  // Takes the request: whether a poll was asked for since the last take.
  bool take_poll_request() noexcept {
    return poll_requested_.exchange(false, std::memory_order_acq_rel);
  }

 private:
  std::atomic<std::uint32_t> own_{0};
  std::atomic<std::uint32_t>* word_ = &own_;
  bool shared_ = false;
  std::atomic<bool> poll_requested_{false};
};

}  // namespace hytask::mpi::detail
