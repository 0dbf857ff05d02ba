// Operations waiting for the thread that may call MPI (funneled: the MPI thread; masteronly:
// main): a thread that may not call MPI queues what it submits, and that thread posts the
// queue when it runs its commands (comm_system::run_commands). The queue holds a reference
// to each operation.
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "comm/operation.hpp"

namespace hytask::mpi::detail {

class command_queue {
 public:
  // Queues op and takes a reference to it.
  void push(operation* op) {
    op->refs.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ops_.push_back(op);
    }
    has_.store(true, std::memory_order_release);
  }
  // Whether operations are queued.
  bool any() const noexcept { return has_.load(std::memory_order_acquire); }
  // Moves the queued operations, with their references, into batch (empty).
  void take(std::vector<operation*>& batch) {
    std::lock_guard<std::mutex> lock(mutex_);
    batch.swap(ops_);
    has_.store(false, std::memory_order_release);
  }
  // Calls f(op) for every queued operation, under the queue's lock.
  template <class F>
  void for_each(F&& f) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (operation* op : ops_) f(op);
  }

 private:
  std::mutex mutex_;
  std::vector<operation*> ops_;
  std::atomic<bool> has_{false};
};

}  // namespace hytask::mpi::detail
