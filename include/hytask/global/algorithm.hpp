// Algorithms on ranges of a hytask::global_array<T> (after DASH, Fürlinger et al., "DASH:
// Data Structures and Algorithms with Support for Hierarchical Locality").
//
// ```cpp context=global
// hytask::global_array<double> a(1000);
// hytask::fill(a.begin(), a.end(), 1.0);                   // collective: owners fill
// hytask::for_each(a.begin(), a.end(), [](double& x) { x *= 2; });
// double sum = hytask::accumulate(a.begin(), a.end(), 0.0);  // 2000.0 on every rank
// std::vector<double> mine(100);
// hytask::copy(a.begin() + 450, a.begin() + 550, mine.data());  // bulk, from main or a task
// hytask::copy_async(a.begin(), a.begin() + 100, mine.data());  // a task: in() on the range
// hytask::spawn([&] { use(mine[0]); }, hytask::copyin(a.begin(), a.begin() + 100, mine.data()));
// hytask::wait_all();
// use(sum);
// ```
//
// Two kinds:
// - copy (global range → local buffer, local buffer → global range) is one-sided: any rank,
//   from main or from a task (which suspends), alone. It moves each owner's part of the
//   range with one MPI_Rget / MPI_Rput (parts above 1 GiB in 1 GiB pieces), all owners' in
//   flight at once, and a memcpy for this rank's part; a copy into the array has reached the
//   owners when it returns (MPI_Win_flush per owner). No staging buffer: the transfers go
//   straight between the window and the caller's buffer. It orders nothing by itself: run it
//   where the data is ready (after a wait_all, or in a task that declares in/out on the
//   elements), or use copy_async.
// - fill, for_each, transform, accumulate and min_element are collective over the array's
//   communicator: every rank calls them with the same range, works on the part of the range
//   it owns (in place, no transfer), and returns when every rank is done (a barrier; for the
//   reductions an allgather of one partial result per rank, combined in index order, so the
//   result is the same on every rank, also for a non-commutative op). They touch the memory
//   directly, unordered with tasks: call them from main where no task uses the range (after
//   a wait_all). transform writes its results to their owners with copy's bulk puts.
//
// copy_async spawns the copy as a task (from main, like every global dependency) that
// declares in() on each element of a global source range, or out() on each of a global
// destination, and in/out on the local buffer: it runs after the range's writers of earlier
// phases, wherever they ran, and later phases' accesses wait for it. Granularity: the global
// dependencies are per element (the owners order each element), so the task costs a
// dependency record per element, about what as many in() declarations cost; meant for
// ranges of up to some thousands of elements, and the records of a phase stay until it is
// matched (memory grows with the range). For longer ranges call copy from main after a
// wait_all, when every rank's tasks have completed (a fence alone orders nothing).
//
// Ranges: [first, last) of one array, first <= last; anything else is a usage_error, as
// are pointers into different arrays (global_ptr.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "hytask/comm/collectives.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/global/global_ptr.hpp"

namespace hytask {

namespace detail {
// The range [first, last): its object (checked: one object, first <= last) and length.
template <class T>
std::size_t global_range_size(const global_ptr<T>& first, const global_ptr<T>& last) {
  const std::ptrdiff_t n = last - first;  // throws for different or null objects
  if (n < 0) throw_global_range(n);
  return static_cast<std::size_t>(n);
}

// This rank's part of [first, last) of a global_array<T>: its first index and its elements
// (empty where it owns none of it).
template <class T>
struct local_part {
  std::uint64_t first = 0;
  T* data = nullptr;
  std::size_t size = 0;
};
template <class T>
local_part<T> local_part_of(const global_ptr<T>& first, const global_ptr<T>& last) {
  global_memory* mem = first.hytask_memory();
  const std::uint64_t n = mem->layout().locations();
  const std::uint64_t mine = mem->local_bytes() / sizeof(T);  // this rank's block
  // Blocks of equal length rank by rank (the last may be shorter): rank r's starts at
  // r × the first block's length, which is the first run's.
  const std::uint64_t block = n == 0 ? 1 : mem->layout().run_end(0, n);
  const std::uint64_t begin = std::min<std::uint64_t>(static_cast<std::uint64_t>(mem->rank()) * block, n);
  const std::uint64_t end = begin + mine;
  const std::uint64_t lo = std::max(begin, first.index()), hi = std::min(end, last.index());
  if (lo >= hi) return {lo, nullptr, 0};
  return {lo, reinterpret_cast<T*>(mem->local_base()) + (lo - begin), static_cast<std::size_t>(hi - lo)};
}

// in/out on every element of [first, last) (copy_async).
struct global_range_access {
  global_memory* mem;
  std::uint64_t first, last;
  access_mode mode;
  void apply(spawn_context& ctx) const {
    for (std::uint64_t i = first; i < last; ++i) mem->declare(ctx, i, mode);
  }
};
}  // namespace detail

// Global range → local buffer of last - first elements; returns the buffer's end.
template <class T>
T* copy(global_ptr<T> first, global_ptr<T> last, T* out) {
  const std::size_t n = detail::global_range_size(first, last);
  if (n) first.hytask_memory()->get_range(first.index(), last.index(), out);
  return out + n;
}

// Local buffer [first, last) → the global range from out; returns the range's end.
template <class T>
global_ptr<T> copy(const T* first, const T* last, global_ptr<T> out) {
  const auto n = static_cast<std::ptrdiff_t>(last - first);
  if (n < 0) detail::throw_global_range(n);
  const global_ptr<T> end = out + n;  // checks that the range fits
  if (n) out.hytask_memory()->put_range(out.index(), end.index(), first);
  return end;
}

// The copies as tasks ordered by global dependencies on the whole range (see above). The
// buffer must live until the task has run (a wait_all).
template <class T>
void copy_async(global_ptr<T> first, global_ptr<T> last, T* out) {
  const std::size_t n = detail::global_range_size(first, last);
  detail::global_memory* mem = first.hytask_memory();
  const std::uint64_t b = first.index(), e = last.index();
  hytask::spawn(task_options{.name = "hytask::copy_async"}, [mem, b, e, out] { if (e > b) mem->get_range(b, e, out); },
                detail::global_range_access{mem, b, e, access_mode::in}, hytask::out(out, n));
}
template <class T>
void copy_async(const T* first, const T* last, global_ptr<T> out) {
  const auto n = static_cast<std::ptrdiff_t>(last - first);
  if (n < 0) detail::throw_global_range(n);
  const global_ptr<T> end = out + n;
  detail::global_memory* mem = out.hytask_memory();
  const std::uint64_t b = out.index(), e = end.index();
  hytask::spawn(task_options{.name = "hytask::copy_async"}, [mem, b, e, first] { if (e > b) mem->put_range(b, e, first); },
                hytask::in(first, static_cast<std::size_t>(n)),
                detail::global_range_access{mem, b, e, access_mode::out});
}

// copyin of a range: an input dependency of a task whose data the runtime brings into buf
// (last - first elements) before the task starts, as copyin (copyin.hpp) does for one element:
//
// ```cpp context=global
// hytask::global_array<double> a(100);
// std::vector<double> halo(10);
// hytask::spawn([&] { use(halo[0]); }, hytask::copyin(a.begin() + 10, a.begin() + 20, halo.data()));
// hytask::wait_all();
// ```
//
// The transfer is a copy_async task spawned just before the reader (the same per-element
// global dependencies, one bulk MPI_Rget per owner); the reader depends on buf as local
// memory the transfer writes. Later writers of the range wait for the transfer only, not for
// the reader. Unlike copyin of one location, two copyins of one range in a phase transfer
// twice. From main, like every global dependency.
namespace detail {
template <class T>
struct range_copyin_access {
  global_ptr<T> first, last;
  T* buf;
  std::size_t n;
  void hytask_prepare() const {
    if (n) copy_async(first, last, buf);
  }
  void apply(spawn_context& ctx) const {
    if (n) ctx.region(buf, n * sizeof(T), access_mode::in);
  }
};
}  // namespace detail
template <class T>
detail::range_copyin_access<T> copyin(global_ptr<T> first, global_ptr<T> last, T* buf) {
  const std::size_t n = detail::global_range_size(first, last);
  return {first, last, buf, n};
}

// Collective: every element of [first, last) becomes value.
template <class T>
void fill(global_ptr<T> first, global_ptr<T> last, const T& value) {
  detail::global_range_size(first, last);
  const detail::local_part<T> part = detail::local_part_of(first, last);
  std::fill(part.data, part.data + part.size, value);
  mpi::barrier(first.hytask_memory()->comm());
}

// Collective: f(x) on every element x (a T&) of [first, last), by its owner; returns f as
// it is on this rank.
template <class T, class F>
F for_each(global_ptr<T> first, global_ptr<T> last, F f) {
  detail::global_range_size(first, last);
  const detail::local_part<T> part = detail::local_part_of(first, last);
  for (std::size_t i = 0; i < part.size; ++i) f(part.data[i]);
  mpi::barrier(first.hytask_memory()->comm());
  return f;
}

// Collective: out[i] = op(x) for every element x = first[i] of [first, last), computed by x's
// owner and put into the range from out (of the same array or another; in place when out is
// first; other overlaps are undefined). Returns the output range's end.
template <class T, class U, class Op>
global_ptr<U> transform(global_ptr<T> first, global_ptr<T> last, global_ptr<U> out, Op op) {
  const std::size_t n = detail::global_range_size(first, last);
  const global_ptr<U> end = out + static_cast<std::ptrdiff_t>(n);
  const detail::local_part<T> part = detail::local_part_of(first, last);
  // Where this rank's results go (the part is empty where it is not inside [first, last)).
  const global_ptr<U> to = part.size ? out + static_cast<std::ptrdiff_t>(part.first - first.index()) : end;
  bool in_place = false;
  if constexpr (std::is_same_v<T, U>)
    in_place = part.size && out.hytask_memory() == first.hytask_memory() && to.index() == part.first;
  if (in_place) {
    for (std::size_t i = 0; i < part.size; ++i) part.data[i] = static_cast<T>(op(part.data[i]));
  } else {
    // Results in pieces of at most 64 Ki elements (memory bounded), each put in bulk.
    constexpr std::size_t piece = std::size_t(1) << 16;
    std::vector<U> results(std::min(part.size, piece));
    for (std::size_t done = 0; done < part.size; done += piece) {
      const std::size_t k = std::min(piece, part.size - done);
      for (std::size_t i = 0; i < k; ++i) results[i] = op(part.data[done + i]);
      copy(results.data(), results.data() + k, to + static_cast<std::ptrdiff_t>(done));
    }
  }
  mpi::barrier(out.hytask_memory()->comm());
  if (out.hytask_memory()->comm() != first.hytask_memory()->comm()) mpi::barrier(first.hytask_memory()->comm());
  return end;
}

namespace detail {
// One rank's partial result, exchanged by the reductions.
template <class V>
struct partial {
  V value;
  std::uint64_t index;
  std::uint8_t present;
};
template <class V>
std::vector<partial<V>> gather_partials(const partial<V>& mine, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<partial<V>>);
  std::vector<partial<V>> all(static_cast<std::size_t>(mpi::size(comm)));
  mpi::allgather(&mine, static_cast<MPI_Count>(sizeof mine), MPI_BYTE, all.data(),
                 static_cast<MPI_Count>(sizeof mine), MPI_BYTE, comm);
  // In index order (ranks' blocks are in rank order, but keep the rule explicit).
  std::stable_sort(all.begin(), all.end(), [](const partial<V>& a, const partial<V>& b) { return a.index < b.index; });
  return all;
}
}  // namespace detail

// Collective: init op x0 op x1 ... over [first, last) (op associative), the result on every
// rank. Each owner folds its part starting from V(its first element), then the parts are
// combined in index order with op(V, V): so V must be constructible from T and op take
// (V, T) and (V, V) — one op does both when V is T.
template <class T, class V, class Op = std::plus<>>
  requires std::is_trivially_copyable_v<V> && std::is_constructible_v<V, const T&>
V accumulate(global_ptr<T> first, global_ptr<T> last, V init, Op op = {}) {
  detail::global_range_size(first, last);
  const detail::local_part<T> part = detail::local_part_of(first, last);
  detail::partial<V> mine{};
  mine.index = part.first;
  if (part.size != 0) {
    V acc = V(part.data[0]);
    for (std::size_t i = 1; i < part.size; ++i) acc = op(std::move(acc), part.data[i]);
    mine.value = acc;
    mine.present = 1;
  }
  for (const auto& p : detail::gather_partials(mine, first.hytask_memory()->comm()))
    if (p.present) init = op(std::move(init), p.value);
  return init;
}

// Collective: the first smallest element of [first, last) by comp (last if empty), found by
// the owners and compared across ranks; the same pointer on every rank.
template <class T, class Compare = std::less<>>
global_ptr<T> min_element(global_ptr<T> first, global_ptr<T> last, Compare comp = {}) {
  detail::global_range_size(first, last);
  const detail::local_part<T> part = detail::local_part_of(first, last);
  detail::partial<T> mine{};
  if (part.size != 0) {
    const T* m = std::min_element(part.data, part.data + part.size, comp);
    mine = {*m, part.first + static_cast<std::uint64_t>(m - part.data), 1};
  }
  const detail::partial<T>* best = nullptr;
  const auto all = detail::gather_partials(mine, first.hytask_memory()->comm());
  for (const auto& p : all)
    if (p.present && (best == nullptr || comp(p.value, best->value))) best = &p;
  return best ? global_ptr<T>(first.hytask_memory(), best->index) : last;
}

}  // namespace hytask
