// The global layer of one rank at run time: the protocol engine (engine.hpp) joined to the
// scheduler (gates as external dependencies, completions through the core's watch), to MPI
// (the active messages of am.hpp and their rounds) and to the PGAS objects (names of
// locations for messages). Created by the first PGAS object (collectively), destroyed at the
// runtime's end. Discovery, fence and wait_all happen on main.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <atomic>
#include <mutex>

#include <mpi.h>
#include <string>
#include <unordered_map>
#include <vector>

#include "global/am.hpp"
#include "global/engine.hpp"
#include "hytask/core/access.hpp"
#include "hytask/core/detail/task.hpp"
#include "hytask/config.hpp"
#include "hytask/core/event.hpp"
#include "hytask/global/stats.hpp"

namespace hytask::detail {
class global_memory;
class spawn_context;
}  // namespace hytask::detail

namespace hytask::global::detail {

// HYTASK_PHASE_WINDOW and HYTASK_GLOBAL_AM (the runtime passes its settings at start).
void configure(unsigned phase_window, hytask::global_am transport);

class global_system final : public engine_host {
 public:
  static global_system* instance() noexcept;
  // The system, created on first use (collective: from a PGAS object's constructor).
  static global_system& acquire();
  // The runtime's end: a last collective wait_all, then the system goes. Rethrows what
  // that wait_all threw.
  static void shutdown();

  std::uint32_t add_object(hytask::detail::global_memory* m);
  void remove_object(std::uint32_t id);
  void detach_live_objects(bool unwinding);
  int rank() const noexcept { return engine_.rank(); }

  // A dependency of the task being spawned on `where`, at addr (real or synthetic). push: a
  // copyin's input, whose data the owner sends (see push). Returns the access's id for a
  // location of another rank (0 for this rank's).
  std::uint64_t declare(hytask::detail::spawn_context& ctx, location where, const void* addr,
                        std::size_t bytes, access_mode mode, bool push = false);
  // Where a copyin's data travel: the communicator, and the tag of access `id`.
  MPI_Comm data_comm() const noexcept { return data_comm_; }
  int data_tag(std::uint64_t id) const noexcept { return static_cast<int>(id % tag_limit_); }
  // Throws usage_error unless called from main outside tasks (what: the call, for the message).
  void require_main(const char* what) const;
  // copyin: whether buf must receive location `key` (bytes long) in the discovery phase —
  // false when a transfer of it into buf was spawned in this phase already.
  bool copyin_needed(const void* buf, std::uint64_t key, std::size_t bytes);
  void count_transfer() noexcept { transfers_.fetch_add(1, std::memory_order_relaxed); }
  hytask::global_counters counters() const;
  void fence();
  void before_wait_all();
  void after_wait_all();

  // engine_host
  void send(int dest, std::vector<std::byte> buf) override;
  void release(void* task, std::uint16_t inherited) override;
  void remote_successor(void* task) override;
  void phase_matched(std::size_t tasks) override;
  void push(int dest, std::uint64_t id, std::uint64_t key) override;
  std::string describe(std::uint64_t key) const override;

  ~global_system() override;

 private:
  global_system(int rank, int nranks, unsigned window);
  // What a round of the active messages is (its label says which, per rank).
  enum class round_kind : unsigned { fence = 1, wait_all = 2, drain = 3 };
  void open();
  std::uint64_t label(round_kind k) const;
  void close_phase(round_kind k);
  void phases_differ(const std::vector<std::uint64_t>& labels);
  std::string share_conflicts();
  void try_match();
  void failed(std::exception_ptr e);
  void notify();
  void wait_until(const std::function<bool()>& done);
  void copyin_new_phase();
  void copyin_written(std::uint64_t key);
  static void completed(hytask::detail::task* t);

  const unsigned window_;
  engine engine_;
  std::unique_ptr<am_transport> am_;
  MPI_Comm data_comm_ = MPI_COMM_NULL;  // copyin data (a duplicate of the runtime's)
  std::uint64_t tag_limit_ = 32768;     // MPI_TAG_UB + 1 of data_comm_

  mutable std::mutex objects_mu_;
  std::map<std::uint32_t, hytask::detail::global_memory*> objects_;
  std::uint32_t next_object_ = 1;

  // Main's count of collective wait_alls, and of fences since the last one: rounds' labels.
  std::uint32_t epochs_ = 0, fences_ = 0;

  std::atomic<int> match_requests_{0};
  std::atomic<bool> matching_{false};

  std::mutex wait_mu_;
  hytask::event* waiter_ = nullptr;

  // copyin transfers spawned in the discovery phase (main only): buffer -> (location, bytes).
  struct copyin_target {
    std::uint64_t key;
    std::size_t bytes;
  };
  std::unordered_map<const void*, copyin_target> copyins_;
  std::unordered_map<std::uint64_t, std::vector<const void*>> copyin_buffers_;  // by location
  std::uint32_t copyin_phase_ = 0;
  std::atomic<std::uint64_t> copyins_shared_{0};
  std::atomic<std::uint64_t> transfers_{0};
  std::atomic<std::uint64_t> bytes_sent_{0};
  std::atomic<std::uint64_t> drain_buffers_{0}, drain_bytes_{0};  // D buffers (wait_all's drain)
  std::uint64_t rounds_ = 0;  // main's
};

}  // namespace hytask::global::detail
