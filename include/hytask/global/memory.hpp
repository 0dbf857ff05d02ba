// The part of every PGAS object that is not a template (internal; see global_array.hpp and
// tiled_matrix.hpp): an MPI-3 window allocated collectively, under one passive epoch
// (MPI_Win_lock_all) for the object's life, and how the object's locations — elements,
// tiles — map onto the ranks' parts of it.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "hytask/comm/request.hpp"
#include "hytask/core/access.hpp"

namespace hytask::detail {

// Where location `index` of an object lives: the owner (a rank of the object's
// communicator), the byte offset in the owner's part, and its size in bytes.
struct global_place {
  int owner = 0;
  std::size_t offset = 0;
  std::size_t bytes = 0;
};

class global_layout {
 public:
  virtual ~global_layout() = default;
  virtual std::uint64_t locations() const = 0;
  virtual global_place locate(std::uint64_t index) const = 0;
  // "element 17", "tile (2, 3)"
  virtual std::string describe(std::uint64_t index) const = 0;
  // The end of the run of locations from `index` (below `last`) that lie on one owner, back
  // to back and of one size: one transfer moves them. The default: one location.
  virtual std::uint64_t run_end(std::uint64_t index, std::uint64_t last) const {
    return index < last ? index + 1 : last;
  }
};

class global_memory {
 public:
  // Collective over comm (call it from main on every rank, in the same order as the other
  // PGAS objects): allocates local_bytes on this rank. kind and where (the program's line
  // that creates the object) name it in messages.
  global_memory(MPI_Comm comm, std::size_t local_bytes, const global_layout& layout,
                const char* kind, std::source_location where);
  ~global_memory();  // collective too, unless detached
  // The runtime's end, with the object still alive (collective, in the objects' order):
  // releases the window, keeping a copy of this rank's part for local(); every other use
  // throws usage_error afterwards. unwinding: the other ranks may not come — no MPI call.
  void detach(bool unwinding);
  // "global_array 2 (created at main.cpp:14)"
  std::string name() const;
  global_memory(const global_memory&) = delete;
  global_memory& operator=(const global_memory&) = delete;

  int rank() const noexcept { return rank_; }   // in the object's communicator
  int size() const noexcept { return size_; }
  std::byte* local_base() const noexcept { return base_; }
  std::size_t local_bytes() const noexcept { return local_bytes_; }
  const global_layout& layout() const noexcept { return layout_; }
  std::uint32_t id() const noexcept { return id_; }
  const char* kind() const noexcept { return kind_; }
  // The owner's rank in the runtime's communicator (hytask::mpi::comm_world()).
  int world_rank(int owner) const { return world_ranks_[static_cast<std::size_t>(owner)]; }

  // Blocking transfers of location index to/from buf (a task suspends; main runs tasks):
  // a put has completed at the owner when it returns.
  void get(std::uint64_t index, void* buf) const;
  void put(std::uint64_t index, const void* buf);
  // Non-blocking: MPI_Rget; MPI_Rput, whose completion means buf may be reused — the data
  // is in the owner's memory after flush(owner) (a blocking put flushes itself).
  mpi::request get_async(std::uint64_t index, void* buf) const;
  mpi::request put_async(std::uint64_t index, const void* buf);
  // Completes this rank's puts to owner at the owner (MPI_Win_flush).
  void flush(int owner);
  // Bulk transfers of the locations [first, last) to/from buf (packed, in index order): one
  // MPI_Rget / MPI_Rput per owner's run of locations (layout().run_end), all in flight at
  // once, a memcpy for this rank's; blocking like get/put (a put_range has reached the
  // owners when it returns). The caller checks the range.
  void get_range(std::uint64_t first, std::uint64_t last, void* buf) const;
  void put_range(std::uint64_t first, std::uint64_t last, const void* buf);
  // The object's communicator (owners are its ranks), for the algorithms' collectives.
  MPI_Comm comm() const noexcept { return comm_; }

  // The dependency of a task on location index.
  void declare(spawn_context& ctx, std::uint64_t index, access_mode mode);
  // The same bound to no phase (phase.hpp, any_phase): ordered with this rank's accesses to
  // the location only, as local memory is; any thread, any task may declare it.
  void declare_unphased(spawn_context& ctx, std::uint64_t index, access_mode mode);
  // copyin(ref, buf) (copyin.hpp): before its task is allocated, the transfer of location
  // index into buf, unless buf already receives it in this phase (or, remote_only, the
  // location is this rank's); then, in the task's spawn, the task's input dependency.
  void prepare_copyin(std::uint64_t index, void* buf, bool remote_only);
  void declare_copyin(spawn_context& ctx, std::uint64_t index, void* buf, bool remote_only);
  // The global input of a copyin's transfer task from another rank (its data are sent by
  // the owner): returns the access's id. Internal.
  std::uint64_t declare_pushed(spawn_context& ctx, std::uint64_t index);

 private:
  std::size_t synthetic_bytes() const;
  // Throws usage_error once the object is detached: what, the use.
  void require_attached(const char* what) const;
  // The bodies of a copyin's transfer task: from this rank's memory, from another rank's.
  void copy_local(std::uint64_t index, void* buf);
  void transfer_range(std::uint64_t first, std::uint64_t last, std::byte* buf, bool put) const;
  void receive_pushed(std::uint64_t index, void* buf, std::uint64_t id);

  const global_layout& layout_;
  const char* kind_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  int rank_ = 0, size_ = 1;
  std::byte* base_ = nullptr;  // this rank's part: window_align-aligned, pads_[rank_] into its allocation
  std::size_t local_bytes_ = 0;
  std::vector<int> world_ranks_;
  std::vector<long> pads_;  // every rank's
  long pad_of(int owner) const { return pads_[static_cast<std::size_t>(owner)]; }
  std::source_location where_;
  std::unique_ptr<std::byte[]> detached_;  // this rank's part, after detach()
  const char* synthetic_ = nullptr;  // 2 reserved bytes per location (see DESIGN.md, global)
  std::uint32_t id_ = 0;
};

[[noreturn]] void throw_global_index(std::uint64_t i, std::uint64_t n, const char* kind);
// global_ptr misuse (global_ptr.hpp): what, the operation; a and b, the objects involved.
[[noreturn]] void throw_global_ptr(const char* what, const global_memory* a, const global_memory* b);
[[noreturn]] void throw_global_range(std::ptrdiff_t length);
[[noreturn]] void throw_global_ptr_range(std::int64_t index, std::uint64_t n, const global_memory* mem);
inline void check_global_index(std::uint64_t i, std::uint64_t n, const char* kind) {
  if (i >= n) throw_global_index(i, n, kind);
}

// tiled_matrix: refuses zero tile sizes; picks (or checks) a grid of `size` ranks.
void check_tile_size(std::size_t mb, std::size_t nb);
void choose_grid(int size, int& grid_rows, int& grid_cols);

// in/out/inout on a global reference.
struct global_access {
  global_memory* mem;
  std::uint64_t index;
  access_mode mode;
  void apply(spawn_context& ctx) const { mem->declare(ctx, index, mode); }
};

// in/out/inout(ref, hytask::any_phase) (phase.hpp).
struct unphased_access {
  global_memory* mem;
  std::uint64_t index;
  access_mode mode;
  void apply(spawn_context& ctx) const { mem->declare_unphased(ctx, index, mode); }
};

// copyin / copyin_r on a global reference (copyin.hpp).
struct copyin_access {
  global_memory* mem;
  std::uint64_t index;
  void* buf;
  bool remote_only;
  void hytask_prepare() const { mem->prepare_copyin(index, buf, remote_only); }
  void apply(spawn_context& ctx) const { mem->declare_copyin(ctx, index, buf, remote_only); }
};

// What element and tile references have in common: the object and the location.
class location_ref {
 public:
  // The location's memory where it is local, else null.
  void* local_address() const {
    const global_place p = mem_->layout().locate(index_);
    return p.owner == mem_->rank() ? mem_->local_base() + p.offset : nullptr;
  }

  location_ref(global_memory* mem, std::uint64_t index) noexcept : mem_(mem), index_(index) {}
  // The owning rank (of the object's communicator), and whether it is this one.
  int owner() const { return mem_->layout().locate(index_).owner; }
  bool is_local() const { return owner() == mem_->rank(); }
  std::uint64_t index() const noexcept { return index_; }
  // The location's size: sizeof(T) for an element, mb·nb·sizeof(T) for a tile.
  std::size_t location_bytes() const { return mem_->layout().locate(index_).bytes; }
  // What hytask::in / out / inout make of the reference.
  global_access hytask_access(access_mode m) const { return {mem_, index_, m}; }
  unphased_access hytask_unphased_access(access_mode m) const { return {mem_, index_, m}; }
  // What hytask::copyin / copyin_r make of it, with the buffer (checked by the caller's type).
  copyin_access hytask_copyin(void* buf, bool remote_only) const {
    return {mem_, index_, buf, remote_only};
  }

 protected:
  global_memory* mem_;
  std::uint64_t index_;
};

}  // namespace hytask::detail
