// The receives that tasks posted with MPI_Irecv, by request handle: the requests a cancelled
// task's intercepted wait may cancel. MPI cannot tell a request's kind, and a send must never
// be cancelled (Open MPI ignores MPI_Cancel on a send, but MPICH may really cancel an eager
// one, which the peer would then never get), so a wait cancels only the requests it finds
// here, and drains the others.
//
// An entry is (handle, task that posted it), and a wait cancels a request only when the
// waiting task posted it. The library does not see every way a request ends (main's plain
// MPI_Wait, hytask::mpi::adopt), so an entry may outlive its request, and MPI reuses freed
// handles: another task's request with that handle is refused by the task check; in the
// same task, MPI_Isend and its variants drop the entry of the handle they return, and a
// later MPI_Irecv replaces it. Waits and tests inside tasks drop the entries of the requests
// they complete (freed_on_exit), MPI_Request_free those it frees.
//
// Only calls made inside tasks touch it. While it is empty (no task has a receive pending),
// `any()` is one relaxed load and the calls that drop entries do nothing more.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "hytask/core/this_task.hpp"

namespace hytask::intercept::detail::receives {

namespace impl {

// MPI_Request is a pointer in Open MPI, an int in MPICH.
template <class R>
std::uintptr_t key(R r) noexcept {
  if constexpr (std::is_pointer_v<R>)
    return reinterpret_cast<std::uintptr_t>(r);
  else
    return static_cast<std::uintptr_t>(static_cast<std::make_unsigned_t<R>>(r));
}

struct table {
  std::mutex mutex;  // posts are rare next to what a receive costs: one lock is enough
  std::unordered_map<std::uintptr_t, std::uint64_t> posted_by;
};

// Process-wide and never destroyed: a runtime may outlive static destruction's order.
inline table& the_table() {
  static table* t = new table;
  return *t;
}

inline constinit std::atomic<std::size_t> g_entries{0};

}  // namespace impl

// Whether any entry exists.
inline bool any() noexcept { return impl::g_entries.load(std::memory_order_relaxed) != 0; }

// Task `task` (hytask::this_task::id()) posted receive r.
inline void note(MPI_Request r, std::uint64_t task) {
  if (r == MPI_REQUEST_NULL) return;
  impl::table& t = impl::the_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.posted_by[impl::key(r)] = task;
  impl::g_entries.store(t.posted_by.size(), std::memory_order_relaxed);
}

// r, still allocated, is about to be freed or names a request that is not a receive.
inline void forget(MPI_Request r) noexcept {
  if (r == MPI_REQUEST_NULL || !any()) return;
  impl::table& t = impl::the_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.posted_by.erase(impl::key(r)) != 0)
    impl::g_entries.store(t.posted_by.size(), std::memory_order_relaxed);
}

// r was freed by a call of task `task`: its entry goes if that task made it. Another task's
// entry is a new receive that got the freed handle meanwhile, and stays.
inline void forget_freed(MPI_Request r, std::uint64_t task) noexcept {
  if (r == MPI_REQUEST_NULL || !any()) return;
  impl::table& t = impl::the_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.posted_by.find(impl::key(r));
  if (it == t.posted_by.end() || it->second != task) return;
  t.posted_by.erase(it);
  impl::g_entries.store(t.posted_by.size(), std::memory_order_relaxed);
}

// Whether r is a receive that task `task` posted.
inline bool posted_by(MPI_Request r, std::uint64_t task) {
  if (r == MPI_REQUEST_NULL || !any()) return false;
  impl::table& t = impl::the_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.posted_by.find(impl::key(r));
  return it != t.posted_by.end() && it->second == task;
}

// Around a wait or test on the program's requests: their handles before the call (only
// while the registry has entries); when it goes out of scope, the entries of the requests
// the call freed (their slot changed: a finished request became MPI_REQUEST_NULL) are
// dropped (forget_freed). The program's array must outlive it, as it does the call.
class freed_on_exit {
 public:
  freed_on_exit(const MPI_Request* requests, int count) : requests_(requests) {
    if (count <= 0 || !any()) return;
    task_ = hytask::this_task::id();
    count_ = count;
    if (count_ > small) {
      big_.assign(requests, requests + count);
      before_ = big_.data();
    } else {
      for (int i = 0; i < count_; ++i) inline_[i] = requests[i];
    }
  }
  ~freed_on_exit() {
    for (int i = 0; i < count_; ++i)
      if (requests_[i] != before_[i]) forget_freed(before_[i], task_);
  }
  freed_on_exit(const freed_on_exit&) = delete;
  freed_on_exit& operator=(const freed_on_exit&) = delete;

 private:
  static constexpr int small = 8;
  const MPI_Request* requests_;
  std::uint64_t task_ = 0;
  int count_ = 0;
  MPI_Request inline_[small];
  MPI_Request* before_ = inline_;
  std::vector<MPI_Request> big_;
};

}  // namespace hytask::intercept::detail::receives
