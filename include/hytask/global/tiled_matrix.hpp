// tiled_matrix<T>: an M×N matrix of mb×nb tiles, distributed 2-D block-cyclic over a P×Q
// grid of ranks (PGAS on MPI-3 RMA, as in Schuchart's global task dependencies).
//
// ```cpp context=global
// hytask::tiled_matrix<double> A(1000, 1000, 100, 100);  // collective; grid by MPI_Dims_create
// for (std::size_t i = 0; i < A.tile_rows(); ++i)
//   for (std::size_t j = 0; j < A.tile_cols(); ++j)
//     if (A.tile(i, j).is_local())
//       hytask::spawn([&A, i, j] { fill(A.tile(i, j).local_data(), A.mb()); },
//                     hytask::out(A.tile(i, j)));
// hytask::wait_all();
// ```
//
// Tile (i, j) belongs to the rank at grid position (i mod P, j mod Q), rank p·Q + q of the
// communicator. Each tile is stored whole, column-major with leading dimension mb, also at
// the matrix's bottom and right edges, where only tile_height(i) × tile_width(j) of it is
// the matrix (the rest is padding that get/put carry along). Constructor and destructor are
// collective, as for global_array.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <type_traits>

#include "hytask/comm/point_to_point.hpp"
#include "hytask/global/memory.hpp"

namespace hytask {

// A tile of a tiled_matrix<T>: owner(), is_local(), in/out/inout as for global_ref.
template <class T>
class tile_ref : public detail::location_ref {
 public:
  using location_ref::location_ref;
  // The tile's mb·nb elements where it is local (column-major, leading dimension mb), else null.
  T* local_data() const { return static_cast<T*>(local_address()); }
  // Where a task reads what copyin_r(*this, buf) brought: the tile in place where it is
  // local, else buf.
  const T* local_or(const T* buf) const {
    const T* p = local_data();
    return p ? p : buf;
  }
  // Copy the whole tile (mb·nb elements) from / to buf; blocking, a task suspends.
  void get(T* buf) const { mem_->get(index_, buf); }
  void put(const T* buf) const { mem_->put(index_, buf); }
  mpi::request get_async(T* buf) const { return mem_->get_async(index_, buf); }
  mpi::request put_async(const T* buf) const { return mem_->put_async(index_, buf); }
};

template <class T>
class tiled_matrix {
  static_assert(std::is_trivially_copyable_v<T>, "hytask::tiled_matrix<T>: T must be trivially copyable");

 public:
  // grid_rows × grid_cols must be the communicator's size; 0 and 0 let MPI_Dims_create choose.
  tiled_matrix(std::size_t rows, std::size_t cols, std::size_t mb, std::size_t nb,
               int grid_rows = 0, int grid_cols = 0, MPI_Comm comm = mpi::comm_world(),
               std::source_location where = std::source_location::current())
      : layout_(rows, cols, mb, nb, grid_rows, grid_cols, comm),
        mem_(comm, layout_.local_tiles() * layout_.tile_stride(), layout_, "tiled_matrix", where) {}

  std::size_t rows() const noexcept { return layout_.m; }
  std::size_t cols() const noexcept { return layout_.n; }
  std::size_t mb() const noexcept { return layout_.mb; }
  std::size_t nb() const noexcept { return layout_.nb; }
  std::size_t tile_rows() const noexcept { return layout_.mt; }  // tiles per column
  std::size_t tile_cols() const noexcept { return layout_.nt; }  // tiles per row
  std::size_t tile_height(std::size_t i) const noexcept {
    return i + 1 < layout_.mt ? layout_.mb : layout_.m - i * layout_.mb;
  }
  std::size_t tile_width(std::size_t j) const noexcept {
    return j + 1 < layout_.nt ? layout_.nb : layout_.n - j * layout_.nb;
  }
  int grid_rows() const noexcept { return layout_.p; }
  int grid_cols() const noexcept { return layout_.q; }

  tile_ref<T> tile(std::size_t i, std::size_t j) const {
    detail::check_global_index(i, layout_.mt, "tiled_matrix (tile row)");
    detail::check_global_index(j, layout_.nt, "tiled_matrix (tile column)");
    return tile_ref<T>(&mem_, i * layout_.nt + j);
  }

 private:
  struct layout final : detail::global_layout {
    std::size_t m, n, mb, nb, mt, nt;
    int p = 1, q = 1, me = 0;
    layout(std::size_t rows, std::size_t cols, std::size_t mb_, std::size_t nb_, int pr, int pc,
           MPI_Comm comm)
        : m(rows), n(cols), mb(mb_), nb(nb_) {
      detail::check_tile_size(mb_, nb_);
      mt = (m + mb - 1) / mb;
      nt = (n + nb - 1) / nb;
      me = mpi::rank(comm);
      detail::choose_grid(mpi::size(comm), pr, pc);
      p = pr;
      q = pc;
    }
    std::size_t tile_bytes() const { return mb * nb * sizeof(T); }
    // Tiles start at multiples of 64 bytes of the (64-byte aligned) local part: kernels see
    // cache-line and SIMD-aligned tiles whatever mb and nb are.
    std::size_t tile_stride() const { return (tile_bytes() + 63) / 64 * 64; }
    std::size_t tiles_of(std::size_t total, int period, int pos) const {
      const auto per = static_cast<std::size_t>(period), at = static_cast<std::size_t>(pos);
      return total > at ? (total - at + per - 1) / per : 0;
    }
    std::size_t local_tiles() const { return tiles_of(mt, p, me / q) * tiles_of(nt, q, me % q); }
    std::uint64_t locations() const override { return mt * nt; }
    detail::global_place locate(std::uint64_t index) const override {
      const std::size_t i = index / nt, j = index % nt;
      const int pi = static_cast<int>(i % static_cast<std::size_t>(p));
      const int pj = static_cast<int>(j % static_cast<std::size_t>(q));
      const std::size_t local = (i / static_cast<std::size_t>(p)) * tiles_of(nt, q, pj) +
                                j / static_cast<std::size_t>(q);
      return {pi * q + pj, local * tile_stride(), tile_bytes()};
    }
    std::string describe(std::uint64_t index) const override {
      return "tile (" + std::to_string(index / nt) + ", " + std::to_string(index % nt) + ")";
    }
  };
  layout layout_;
  mutable detail::global_memory mem_;
};

}  // namespace hytask
