// versioned: memory whose writers may get a fresh copy (renaming, as in SMPSs: Marjanović et
// al., "Overlapping Communication and Computation by Using a Hybrid MPI/SMPSs Approach").
//
// A task that writes a region normally waits for every earlier task that reads it (a
// write-after-read dependency) or writes it. When the region is a hytask::versioned object,
// such a writer is given a fresh version instead, so it runs at once: earlier readers keep
// reading the version they were given. Only true (read-after-write) dependencies remain.
// The tasks receive the address of their version as arguments, one pointer per versioned
// access, in the order of the accesses — const T* for in, T* for out and inout:
//
// ```cpp context=tasks
// hytask::versioned<double> panel(a, n);  // the program's memory: n doubles at a
// for (int k = 0; k < 4; ++k) {
//   hytask::spawn([](double* p) { produce({p, n}); }, hytask::out(panel));
//   for (int r = 0; r < 8; ++r)
//     hytask::spawn([](const double* p) { consume({p, n}, {}); }, hytask::in(panel));
// }
// hytask::wait_all();  // the last version is back in a
// ```
//
// Without renaming, producer k + 1 would wait for the eight readers of version k; here it
// writes another buffer while they read. Other accesses (in/out/inout on plain memory,
// after(...), channels) may sit beside versioned ones; they pass nothing to the body.
//
// - A writer gets a fresh version only when a task that uses the current one has not
//   completed; otherwise it writes the current version in place and nothing is copied. out
//   means the task writes every element (a fresh version starts uninitialised); inout
//   starts from a copy of the version it replaces, made in the task before its body runs.
// - Versions come from a pool per size and are reused once the tasks that used them have
//   completed. Their memory is capped by HYTASK_RENAME_MAX_BYTES (hytask::config::
//   rename_max_bytes): past it, the writer waits for the readers and writes in place, as
//   with plain memory.
// - A version stays with a task until the task completes, which includes its children and
//   the MPI requests bound to it (hytask::mpi::bind): a receive into a version keeps it.
// - The latest version is copied back into the program's memory by the wait_all of the task
//   (or main) that spawned the accesses, when that task completes, by copy_back(), and when
//   the object is destroyed. In between, the program's memory may hold an older value: access
//   the object through its accesses. A plain in/out/inout on its memory while a renamed
//   writer holds a newer version throws usage_error (stale, or overwritten at copy-back);
//   while the program's memory is the latest version, plain accesses are ordered with it.
// - Like other dependencies, versions order siblings: one task's children (or main's) use an
//   object at a time; the object must outlive the tasks that use it.
//
// hytask::rename_stats() says how many writers were renamed, wrote in place or were refused
// by the cap, and how much memory versions hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ranges>
#include <type_traits>

#include "hytask/core/access.hpp"
#include "hytask/core/detail/version_body.hpp"

namespace hytask {

namespace detail {
// The object's state lives in the core (src/core/versions.cpp).
version_object* new_version_object(void* home, std::size_t bytes, std::size_t align);
void delete_version_object(version_object* o) noexcept;
void copy_back(version_object* o);
}  // namespace detail

template <class T>
class versioned {
  static_assert(std::is_trivially_copyable_v<T> && !std::is_const_v<T>,
                "hytask::versioned<T>: T must be a non-const, trivially copyable type (versions "
                "are copied with memcpy)");

 public:
  // count objects of type T at home: the program's memory, where the latest version is
  // copied back. Throws hytask::usage_error for a null home with a nonzero count, or memory
  // that overlaps another versioned object.
  versioned(T* home, std::size_t count)
      : home_(home), count_(count), obj_(detail::new_version_object(home, count * sizeof(T), alignof(T))) {}
  // A contiguous range's elements (a std::vector, std::array, std::span...).
  template <class R>
    requires std::ranges::contiguous_range<R&> && std::ranges::sized_range<R&> &&
             std::is_same_v<std::ranges::range_value_t<R&>, T>
  explicit versioned(R& range) : versioned(std::ranges::data(range), std::ranges::size(range)) {}
  // Waits for the tasks that use the object (main and tasks run other tasks meanwhile), then
  // copies the latest version back into home.
  ~versioned() { detail::delete_version_object(obj_); }
  versioned(const versioned&) = delete;
  versioned& operator=(const versioned&) = delete;

  T* home() const noexcept { return home_; }
  std::size_t size() const noexcept { return count_; }

  // Spawns a task that copies the latest version into home, ordered after its writer and
  // before later writers of home: a later plain in(home, count) sees the value. Nothing is
  // spawned when home holds the latest version already.
  void copy_back() { detail::copy_back(obj_); }

  detail::version_object* object() const noexcept { return obj_; }

 private:
  T* home_;
  std::size_t count_;
  detail::version_object* obj_;
};

template <class T>
versioned(T*, std::size_t) -> versioned<T>;
template <class R>
versioned(R&) -> versioned<std::ranges::range_value_t<R&>>;

// The task reads the latest version; its body receives a const T*.
template <class T>
detail::version_access<T, access_mode::in> in(const versioned<T>& v) {
  return {v.object()};
}
// The task writes every element; it may get a fresh version. Its body receives a T*.
template <class T>
detail::version_access<T, access_mode::out> out(versioned<T>& v) {
  return {v.object()};
}
// The task reads and writes; a fresh version starts as a copy of the latest one. T*.
template <class T>
detail::version_access<T, access_mode::inout> inout(versioned<T>& v) {
  return {v.object()};
}

// What renaming did in this process since it started.
struct rename_counters {
  std::uint64_t renamed = 0;    // writers given a fresh version
  std::uint64_t in_place = 0;   // writers that found no pending user and wrote in place
  std::uint64_t refused = 0;    // writers that would have been renamed, past the cap
  std::uint64_t copied_back = 0;  // latest versions copied into the program's memory
  std::uint64_t allocated = 0;  // version buffers allocated (the rest were reused)
  std::size_t bytes_held = 0;   // memory of version buffers, in use or pooled
  std::size_t bytes_peak = 0;   // the largest bytes_held so far
  std::size_t bytes_in_use = 0;  // memory of versions some task or object uses
  std::size_t cap = 0;          // HYTASK_RENAME_MAX_BYTES
};
rename_counters rename_stats();

}  // namespace hytask
