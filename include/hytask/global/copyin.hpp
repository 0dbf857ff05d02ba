// copyin and copyin_r: input dependencies whose data the runtime brings to the task
// (as in Schuchart's global task dependencies).
//
// ```cpp context=global
// hytask::tiled_matrix<double> A(800, 800, 100, 100);
// std::vector<double> kk(100 * 100);  // this rank's copy of tile (0, 0)
// for (std::size_t i = 1; i < A.tile_cols(); ++i)
//   if (A.tile(0, i).is_local())
//     hytask::spawn([&A, &kk, i] { scale(kk.data(), A.tile(0, i).local_data()); },
//                   hytask::copyin(A.tile(0, 0), kk), hytask::inout(A.tile(0, i)));
// ```
//
// copyin(ref, buf) orders the task as hytask::in(ref) does, and the runtime copies the
// element or tile into buf before the task starts: its owner sends it once the writer it
// must follow has completed (a memcpy on the owner), into a transfer task of this rank's that
// completes when the data is in buf. So:
// - tasks of one phase that copy the same location into the same buffer share one transfer
//   (unless this rank's tasks declare a write to the location between them: the next copyin
//   then transfers again, after the write);
// - later writers of the source wait for the transfer only, not for the tasks that read buf;
// - buf is ordered as local memory written by the transfer and read by the tasks: a later
//   copyin into it (the next phase's) waits until they are done. Write buf only through
//   copyin while tasks use it.
// copyin_r(ref, buf) copies only when the location is remote: on its owner the task reads it
// in place and buf is untouched; ref.local_or(buf) is where to read in either case.
//
// buf holds the location: one T for an element of a global_array<T>, mb·nb T (the whole
// tile, column-major, leading dimension mb) for a tile of a tiled_matrix<T>. A range (a
// std::vector, a std::span) is checked for size; a pointer is trusted. Like every global
// dependency, copyin is declared by tasks that main spawns.
#pragma once

#include <cstddef>
#include <ranges>
#include <type_traits>

#include "hytask/global/global_ref.hpp"
#include "hytask/global/tiled_matrix.hpp"

namespace hytask {

namespace detail {
[[noreturn]] void throw_copyin_buffer(std::size_t have, std::size_t need, const char* which);

// A writable contiguous range of T that outlives the call (not a temporary vector).
template <class R, class T>
concept buffer_of = std::ranges::contiguous_range<R&> && std::ranges::sized_range<R&> &&
                    std::is_same_v<std::ranges::range_value_t<R&>, T> &&
                    !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<R&>>> &&
                    (std::is_lvalue_reference_v<R> || std::ranges::borrowed_range<R>);

template <class T, class Ref, class R>
copyin_access copyin_range(const Ref& ref, R& buf, bool remote_only, const char* which) {
  const std::size_t need = ref.location_bytes() / sizeof(T);
  const auto have = static_cast<std::size_t>(std::ranges::size(buf));
  if (have < need) throw_copyin_buffer(have, need, which);
  return ref.hytask_copyin(std::ranges::data(buf), remote_only);
}
}  // namespace detail

template <class T>
detail::copyin_access copyin(const global_ref<T>& ref, T* buf) {
  return ref.hytask_copyin(buf, false);
}
template <class T>
detail::copyin_access copyin(const tile_ref<T>& ref, T* buf) {
  return ref.hytask_copyin(buf, false);
}
template <class T>
detail::copyin_access copyin_r(const global_ref<T>& ref, T* buf) {
  return ref.hytask_copyin(buf, true);
}
template <class T>
detail::copyin_access copyin_r(const tile_ref<T>& ref, T* buf) {
  return ref.hytask_copyin(buf, true);
}

// The same with a range for buf (a std::vector<T>, a std::span<T>...), whose size is checked.
template <class T, class R>
  requires detail::buffer_of<R, T>
detail::copyin_access copyin(const global_ref<T>& ref, R&& buf) {
  return detail::copyin_range<T>(ref, buf, false, "copyin");
}
template <class T, class R>
  requires detail::buffer_of<R, T>
detail::copyin_access copyin(const tile_ref<T>& ref, R&& buf) {
  return detail::copyin_range<T>(ref, buf, false, "copyin");
}
template <class T, class R>
  requires detail::buffer_of<R, T>
detail::copyin_access copyin_r(const global_ref<T>& ref, R&& buf) {
  return detail::copyin_range<T>(ref, buf, true, "copyin_r");
}
template <class T, class R>
  requires detail::buffer_of<R, T>
detail::copyin_access copyin_r(const tile_ref<T>& ref, R&& buf) {
  return detail::copyin_range<T>(ref, buf, true, "copyin_r");
}

}  // namespace hytask
