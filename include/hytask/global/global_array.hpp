// global_array<T>: a 1-D array distributed in blocks over the ranks of a communicator
// (PGAS on MPI-3 RMA, as in Schuchart's global task dependencies).
//
// ```cpp context=global
// hytask::global_array<long> a(100);           // collective: every rank, from main
// for (long& x : a.local()) x = 0;             // this rank's block
// hytask::spawn([&] { a[42].put(7); }, hytask::out(a[42]));
// hytask::wait_all();
// ```
//
// Rank r owns elements [r·b, (r+1)·b) with b = ceil(size / ranks) (the last ranks may own
// fewer, or none). The constructor and the destructor are collective over the communicator
// (MPI_Win_allocate, MPI_Win_free); create PGAS objects in the same order on every rank. T
// must be trivially copyable. Global dependencies order the tasks of every rank of the
// runtime's communicator, so the array's communicator must hold every rank of
// hytask::mpi::comm_world() (it, a duplicate, or a reordering); fewer is a usage_error.
// Destroy it before the runtime ends.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>

#include "hytask/comm/point_to_point.hpp"
#include "hytask/global/global_ptr.hpp"
#include "hytask/global/global_ref.hpp"

namespace hytask {

template <class T>
class global_array {
  static_assert(std::is_trivially_copyable_v<T>, "hytask::global_array<T>: T must be trivially copyable");

 public:
  // where: the program's line that creates it, named in messages.
  explicit global_array(std::size_t size, MPI_Comm comm = mpi::comm_world(),
                        std::source_location where = std::source_location::current())
      : layout_(size, mpi::size(comm)),
        mem_(comm, layout_.count_on(mpi::rank(comm)) * sizeof(T), layout_, "global_array", where) {}

  std::size_t size() const noexcept { return layout_.n; }
  global_ref<T> operator[](std::size_t i) const {
    detail::check_global_index(i, layout_.n, "global_array");
    return global_ref<T>(&mem_, i);
  }
  // This rank's block, and its first element's global index.
  std::span<T> local() const noexcept {
    return {reinterpret_cast<T*>(mem_.local_base()), layout_.count_on(mem_.rank())};
  }
  std::size_t local_begin() const noexcept { return layout_.begin_of(mem_.rank()); }
  int owner(std::size_t i) const { return (*this)[i].owner(); }
  // The global range as random-access iterators (global_ptr.hpp), and this rank's block as
  // plain pointers (DASH's lbegin / lend): lbegin() is element local_begin().
  global_ptr<T> begin() const noexcept { return global_ptr<T>(&mem_, 0); }
  global_ptr<T> end() const noexcept { return global_ptr<T>(&mem_, layout_.n); }
  T* lbegin() const noexcept { return local().data(); }
  T* lend() const noexcept { return local().data() + local().size(); }
  // The pointer to the first element of this rank's block (end() where the block is empty).
  global_ptr<T> local_first() const noexcept { return global_ptr<T>(&mem_, local_begin()); }

 private:
  struct layout final : detail::global_layout {
    std::size_t n, block;
    layout(std::size_t size, int ranks)
        : n(size), block(size == 0 ? 1 : (size + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks)) {}
    std::size_t begin_of(int r) const {
      const std::size_t b = static_cast<std::size_t>(r) * block;
      return b < n ? b : n;
    }
    std::size_t count_on(int r) const {
      const std::size_t b = begin_of(r), e = begin_of(r + 1);
      return e - b;
    }
    std::uint64_t locations() const override { return n; }
    detail::global_place locate(std::uint64_t i) const override {
      return {static_cast<int>(i / block), static_cast<std::size_t>(i % block) * sizeof(T), sizeof(T)};
    }
    std::string describe(std::uint64_t i) const override { return "element " + std::to_string(i); }
    std::uint64_t run_end(std::uint64_t i, std::uint64_t last) const override {
      const std::uint64_t block_end = (i / block + 1) * block;
      return block_end < last ? block_end : last;
    }
  };
  layout layout_;
  mutable detail::global_memory mem_;
};

}  // namespace hytask
