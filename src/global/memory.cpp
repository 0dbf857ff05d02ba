// PGAS objects' memory: the window, transfers, and declaring dependencies on locations.
#include "hytask/global/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "comm/comm.hpp"
#include "core/face.hpp"
#include "comm/operation.hpp"
#include "global/mpi_call.hpp"
#include "global/system.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/core/task_options.hpp"
#include "hytask/errors.hpp"
#include "platform/messages.hpp"

namespace hytask::detail {

namespace gd = hytask::global::detail;
using mpi::detail::kind;
using mpi::detail::operation;

void throw_global_index(std::uint64_t i, std::uint64_t n, const char* kind) {
  throw usage_error("hytask: index " + std::to_string(i) + " out of range for a " + kind +
                    " of " + std::to_string(n) + " (valid: 0 to " +
                    (n ? std::to_string(n - 1) : std::string("none")) + ")");
}

void check_tile_size(std::size_t mb, std::size_t nb) {
  if (mb == 0 || nb == 0)
    throw usage_error("hytask::tiled_matrix: tiles of " + std::to_string(mb) + "x" +
                      std::to_string(nb) + ": tile sizes must be at least 1");
}

void choose_grid(int size, int& grid_rows, int& grid_cols) {
  if (grid_rows < 0 || grid_cols < 0)
    throw usage_error("hytask::tiled_matrix: a negative grid dimension (" + std::to_string(grid_rows) +
                      "x" + std::to_string(grid_cols) + ")");
  if (grid_rows == 0 && grid_cols != 0 && size % grid_cols == 0) grid_rows = size / grid_cols;
  if (grid_cols == 0 && grid_rows != 0 && size % grid_rows == 0) grid_cols = size / grid_rows;
  if (grid_rows == 0 && grid_cols == 0) {
    int dims[2] = {0, 0};
    gd::blocking_mpi("MPI_Dims_create", -1, [&] { return MPI_Dims_create(size, 2, dims); });
    grid_rows = dims[0];
    grid_cols = dims[1];
  }
  if (grid_rows * grid_cols != size)
    throw usage_error("hytask::tiled_matrix: a grid of " + std::to_string(grid_rows) + "x" +
                      std::to_string(grid_cols) + " ranks for a communicator of " +
                      std::to_string(size) + ": P x Q must be the number of ranks (or pass 0 "
                      "and 0 to let MPI_Dims_create choose)");
}

// Every rank's part of the window is allocated in whole multiples of window_align bytes.
// MPICH 4.0 (ch4, shared memory between the ranks of a node) places each rank's part at an
// aligned address but computes the targets of others' accesses as if the parts were packed:
// with a part of, say, 8 bytes, a get from the next rank reads this rank's padding, and a
// put into it lands here. Padding every part to the alignment makes both agree; Open MPI
// does not need it, and the bytes are few (tests/mpi: global_odd_sizes).
//
// The part itself starts window_align bytes into an allocation one alignment larger: Open
// MPI 4.1 returns parts at 8 bytes past a cache line, where every tile would straddle lines
// and BLAS kernels take other code paths than on the program's aligned buffers (Debian's
// generic OpenBLAS kernels then round differently: qr's bit-for-bit check found it). Each
// rank's offset into its allocation is exchanged once: targets of RMA add the owner's.
namespace {
constexpr std::size_t window_align = 64;
std::size_t window_bytes(std::size_t local_bytes) {
  return (local_bytes + window_align - 1) / window_align * window_align + window_align;
}
}  // namespace

global_memory::global_memory(MPI_Comm comm, std::size_t local_bytes, const global_layout& layout,
                             const char* kind, std::source_location where)
    : layout_(layout), kind_(kind), comm_(comm), local_bytes_(local_bytes), where_(where) {
  mpi::detail::comm_system& cs = gd::comm_or_throw("PGAS objects (hytask::global_array, tiled_matrix)");
  if (!core::on_main_outside_tasks())
    throw usage_error(std::string("hytask: a ") + kind +
                      " constructed outside main: PGAS objects are collective, create them "
                      "from main on every rank");
  const MPI_Comm world = cs.world();
  const auto c_world_size = [&cs] { return cs.size(); };
  gd::blocking_mpi("MPI_Group_translate_ranks", -1, [&] {
    int rc = MPI_Comm_rank(comm, &rank_);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &size_);
    if (rc != MPI_SUCCESS) return rc;
    world_ranks_.resize(static_cast<std::size_t>(size_));
    std::vector<int> mine(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) mine[static_cast<std::size_t>(r)] = r;
    MPI_Group g = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    rc = MPI_Comm_group(comm, &g);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_group(world, &wg);
    if (rc == MPI_SUCCESS)
      rc = MPI_Group_translate_ranks(g, size_, mine.data(), wg, world_ranks_.data());
    if (g != MPI_GROUP_NULL) MPI_Group_free(&g);
    if (wg != MPI_GROUP_NULL) MPI_Group_free(&wg);
    return rc;
  });
  for (int w : world_ranks_)
    if (w == MPI_UNDEFINED)
      throw usage_error(std::string("hytask: a ") + kind +
                        " on a communicator with ranks outside hytask::mpi::comm_world(): "
                        "global dependencies order the runtime's ranks only");
  // Phases are the whole job's: every rank's fences and wait_alls meet over comm_world(), so
  // a rank without the object would never join them. Only a communicator of every rank will
  // do (in any order); checked before any collective call, so nothing hangs.
  if (size_ != c_world_size())
    throw usage_error(std::string("hytask: a ") + kind + " on a communicator of " +
                      std::to_string(size_) + " of the " + std::to_string(c_world_size()) +
                      " ranks: global dependencies are the whole job's (fence() and the "
                      "collective wait_all() involve every rank of hytask::mpi::comm_world()), "
                      "so a PGAS object's communicator must hold every rank: pass "
                      "hytask::mpi::comm_world() (the default), a duplicate of it, or a "
                      "reordering of its ranks");
  // Checks first, the window last: a constructor that throws runs no destructor. The first
  // object creates the global layer (collective over comm_world(), as the object is).
  gd::global_system& sys = gd::global_system::acquire();
  id_ = sys.add_object(this);
  // Names for remote locations in this rank's dependency tracker: two bytes each, reserved,
  // never accessible, never backed by memory.
  void* p = mmap(nullptr, synthetic_bytes(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    sys.remove_object(id_);
    throw std::runtime_error("hytask: cannot reserve " + std::to_string(synthetic_bytes()) +
                             " bytes of address space for a " + kind);
  }
  synthetic_ = static_cast<const char*>(p);
  try {
    gd::blocking_mpi("MPI_Win_allocate", -1, [&] {
      std::byte* raw = nullptr;
      int rc = MPI_Win_allocate(static_cast<MPI_Aint>(window_bytes(local_bytes)), 1, MPI_INFO_NULL,
                                comm, &raw, &win_);
      if (rc != MPI_SUCCESS) return rc;
      MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN);
      const auto misalign = reinterpret_cast<std::uintptr_t>(raw) % window_align;
      const long pad = misalign == 0 ? 0 : static_cast<long>(window_align - misalign);
      base_ = raw + pad;
      pads_.resize(static_cast<std::size_t>(size_));
      rc = MPI_Allgather(&pad, 1, MPI_LONG, pads_.data(), 1, MPI_LONG, comm);
      if (rc != MPI_SUCCESS) return rc;
      return MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    });
  } catch (const mpi::error& e) {
    sys.remove_object(id_);
    munmap(p, synthetic_bytes());
    // MPI_ERR_WIN here means the MPI library has no one-sided component for these ranks:
    // say which, and what to select instead.
    throw mpi::error(e.call(), e.code(), e.peer(), e.tag(),
                     std::string(e.what()) + "\nhytask: a " + kind +
                         " needs MPI one-sided communication (MPI_Win_allocate) between its "
                         "ranks, and this MPI library could not provide it. With Open MPI "
                         "between nodes over TCP (pml ob1), select UCX's component: "
                         "OMPI_MCA_osc=ucx (and UCX_TLS=tcp,self where there is no "
                         "InfiniBand); ompi_info | grep osc lists the components built");
  } catch (...) {
    sys.remove_object(id_);
    munmap(p, synthetic_bytes());
    throw;
  }
}

std::size_t global_memory::synthetic_bytes() const {
  return std::max<std::size_t>(2 * layout_.locations(), 2);
}

std::string global_memory::name() const {
  std::string file = where_.file_name();
  if (auto slash = file.rfind('/'); slash != std::string::npos) file.erase(0, slash + 1);
  return std::string(kind_) + " " + std::to_string(id_) + " (created at " + file + ":" +
         std::to_string(where_.line()) + ")";
}

void global_memory::require_attached(const char* what) const {
  if (detached_ == nullptr && win_ != MPI_WIN_NULL) return;
  throw usage_error("hytask: " + std::string(what) + " on " + name() +
                    " after the runtime's end: its window was released then; only local() "
                    "still reads this rank's last values. Destroy PGAS objects before the "
                    "runtime (create hytask::runtime first in main, so that it ends last)");
}

void global_memory::detach(bool unwinding) {
  if (detached_ != nullptr) return;
  detached_ = std::make_unique<std::byte[]>(local_bytes_ ? local_bytes_ : 1);
  if (local_bytes_) std::memcpy(detached_.get(), base_, local_bytes_);
  base_ = detached_.get();
  if (auto* sys = gd::global_system::instance()) sys->remove_object(id_);
  if (unwinding) {  // the other ranks may not come to a collective MPI_Win_free
    win_ = MPI_WIN_NULL;
    return;
  }
  try {
    gd::blocking_mpi("MPI_Win_free", -1, [&] {
      MPI_Win_unlock_all(win_);
      return MPI_Win_free(&win_);
    });
  } catch (const std::exception& e) {
    core::messagef(core::verbosity::warning, "releasing %s at the runtime's end: %s",
                   name().c_str(), e.what());
  }
  win_ = MPI_WIN_NULL;
}

global_memory::~global_memory() {
  if (detached_ == nullptr)
    if (auto* sys = gd::global_system::instance()) sys->remove_object(id_);
  munmap(const_cast<char*>(synthetic_), synthetic_bytes());
  if (detached_ != nullptr) return;  // released at the runtime's end
  try {
    gd::blocking_mpi("MPI_Win_free", -1, [&] {
      MPI_Win_unlock_all(win_);
      return MPI_Win_free(&win_);
    });
  } catch (const std::exception& e) {
    core::messagef(core::verbosity::warning,
                   "freeing a %s: %s (destroy PGAS objects before the runtime)", kind_, e.what());
  }
}

namespace {

// pad: the owner's offset into its allocation (the window's displacement of its part).
operation* rma_op(kind k, MPI_Win win, const global_place& p, long pad) {
  operation* op = gd::layer_op(k, MPI_COMM_NULL);
  op->win = win;
  op->peer = p.owner;
  op->disp = static_cast<MPI_Aint>(pad) + static_cast<MPI_Aint>(p.offset);
  op->bytes = p.bytes;
  op->stype = op->rtype = MPI_BYTE;
  op->scount = op->rcount = static_cast<MPI_Count>(p.bytes);
  return op;
}

mpi::request start(operation* op) {
  mpi::detail::comm_system& c = gd::comm_or_throw("global_array / tiled_matrix transfers");
  mpi::request r(op);
  c.submit(op, true);
  return r;
}

}  // namespace

void global_memory::get(std::uint64_t index, void* buf) const {
  require_attached("get()");
  const global_place p = layout_.locate(index);
  if (p.owner == rank_) {
    std::memcpy(buf, base_ + p.offset, p.bytes);
    return;
  }
  operation* op = rma_op(kind::rget, win_, p, pad_of(p.owner));
  op->rbuf = buf;
  gd::run_and_wait(op);
}

void global_memory::put(std::uint64_t index, const void* buf) {
  require_attached("put()");
  const global_place p = layout_.locate(index);
  if (p.owner == rank_) {
    std::memcpy(base_ + p.offset, buf, p.bytes);
    return;
  }
  operation* op = rma_op(kind::rput, win_, p, pad_of(p.owner));
  op->sbuf = buf;
  gd::run_and_wait(op);
  flush(p.owner);
}

mpi::request global_memory::get_async(std::uint64_t index, void* buf) const {
  require_attached("get_async()");
  const global_place p = layout_.locate(index);
  operation* op = rma_op(kind::rget, win_, p, pad_of(p.owner));
  op->rbuf = buf;
  return start(op);
}

mpi::request global_memory::put_async(std::uint64_t index, const void* buf) {
  require_attached("put_async()");
  const global_place p = layout_.locate(index);
  operation* op = rma_op(kind::rput, win_, p, pad_of(p.owner));
  op->sbuf = buf;
  return start(op);
}

void global_memory::flush(int owner) {
  require_attached("flush()");
  gd::blocking_mpi("MPI_Win_flush", owner, [&] { return MPI_Win_flush(owner, win_); });
}

namespace {
// MPI's counts are ints here (comm posts MPI_Rget / MPI_Rput with int counts): a run longer
// than this goes as several operations of at most this many bytes.
constexpr std::size_t max_transfer_bytes = std::size_t(1) << 30;
}  // namespace

// Shared by get_range and put_range: every run of [first, last) either copied here (this
// rank's) or started as MPI operations, then all waited for together; a put flushes each
// owner it wrote to once.
void global_memory::transfer_range(std::uint64_t first, std::uint64_t last, std::byte* buf,
                                   bool put) const {
  std::vector<mpi::request> pending;
  std::vector<int> owners;
  while (first < last) {
    const std::uint64_t end = layout_.run_end(first, last);
    const global_place p = layout_.locate(first);
    const std::size_t bytes = static_cast<std::size_t>(end - first) * p.bytes;
    if (p.owner == rank_) {
      if (put) std::memcpy(base_ + p.offset, buf, bytes);
      else std::memcpy(buf, base_ + p.offset, bytes);
    } else {
      for (std::size_t done = 0; done < bytes; done += max_transfer_bytes) {
        const global_place part{p.owner, p.offset + done, std::min(max_transfer_bytes, bytes - done)};
        operation* op = rma_op(put ? kind::rput : kind::rget, win_, part, pad_of(part.owner));
        if (put) op->sbuf = buf + done;
        else op->rbuf = buf + done;
        pending.push_back(start(op));
      }
      if (put && std::find(owners.begin(), owners.end(), p.owner) == owners.end())
        owners.push_back(p.owner);
    }
    buf += bytes;
    first = end;
  }
  if (!pending.empty()) mpi::waitall(pending);
  for (int owner : owners)
    gd::blocking_mpi("MPI_Win_flush", owner, [&] { return MPI_Win_flush(owner, win_); });
}

void global_memory::get_range(std::uint64_t first, std::uint64_t last, void* buf) const {
  require_attached("a range's get (hytask::copy)");
  transfer_range(first, last, static_cast<std::byte*>(buf), false);
}

void global_memory::put_range(std::uint64_t first, std::uint64_t last, const void* buf) {
  require_attached("a range's put (hytask::copy)");
  transfer_range(first, last, static_cast<std::byte*>(const_cast<void*>(buf)), true);
}

void throw_global_ptr(const char* what, const global_memory* a, const global_memory* b) {
  const auto name = [](const global_memory* m) { return m ? m->name() : std::string("a null global_ptr"); };
  if (a != b)
    throw usage_error(std::string("hytask::global_ptr: ") + what + " of pointers into different objects (" +
                      name(a) + " and " + name(b) + "): pointers compare, subtract and form "
                      "ranges only within one global_array");
  throw usage_error(std::string("hytask::global_ptr: ") + what + " of a null global_ptr: make it "
                    "from a global_array (a.begin(), a.begin() + i)");
}

void throw_global_range(std::ptrdiff_t length) {
  throw usage_error("hytask: a global range of " + std::to_string(length) +
                    " elements: a range [first, last) needs first <= last");
}

void throw_global_ptr_range(std::int64_t index, std::uint64_t n, const global_memory* mem) {
  throw usage_error("hytask::global_ptr: index " + std::to_string(index) + " outside " +
                    (mem ? mem->name() : std::string("a global_array")) + " of " + std::to_string(n) +
                    " elements: a pointer may point at elements 0 to " + std::to_string(n) +
                    " (one past the end), and only elements below " + std::to_string(n) +
                    " may be read, written or asked for their owner");
}

void throw_copyin_buffer(std::size_t have, std::size_t need, const char* which) {
  throw usage_error("hytask::" + std::string(which) + ": a buffer of " + std::to_string(have) +
                    " elements for a location of " + std::to_string(need) +
                    ": the buffer holds the whole element or tile (mb * nb elements)");
}

namespace {
// The transfer tasks are never cancelled (core/cancel.hpp): the owner sends the data whatever
// happens to this rank's tasks, and the receive must be posted to match it.
struct protocol_task {
  void apply(spawn_context& ctx) const { core::make_uncancellable(ctx.target()); }
};

// Puts the task being spawned in the communication class before its other accesses, so
// that the tasks it waits for join it too (a transfer is communication).
struct comm_class {
  void apply(spawn_context& ctx) const { ctx.raise_priority(); }
};
}  // namespace

namespace {
// The input of a copyin's transfer task from another rank's location: a global `in` whose
// data the owner sends when it releases the access; the access's id, which tags that
// message, is known once declared.
struct pushed_input {
  global_memory* mem;
  std::uint64_t index;
  std::shared_ptr<std::uint64_t> id;
  void apply(spawn_context& ctx) const { *id = mem->declare_pushed(ctx, index); }
};
}  // namespace

void global_memory::prepare_copyin(std::uint64_t index, void* buf, bool remote_only) {
  require_attached("hytask::copyin");
  gd::global_system& sys = *gd::global_system::instance();
  sys.require_main("hytask::copyin");
  const global_place p = layout_.locate(index);
  if (buf == nullptr && p.bytes != 0)
    throw usage_error("hytask::copyin: a null buffer for " + layout_.describe(index) + " of a " +
                      kind_);
  if (remote_only && p.owner == rank_) return;  // read in place
  if (!sys.copyin_needed(buf, (std::uint64_t(id_) << 40) | index, p.bytes)) return;
  global_memory* self = this;
  auto* bytes = static_cast<std::byte*>(buf);
  if (p.owner == rank_) {
    hytask::spawn(task_options{.name = "hytask copyin"}, [self, index, buf] { self->copy_local(index, buf); },
                  protocol_task{}, global_access{this, index, access_mode::in}, hytask::out(bytes, p.bytes));
    return;
  }
  auto id = std::make_shared<std::uint64_t>(0);
  hytask::spawn(task_options{.name = "hytask copyin"},
                [self, index, buf, id] { self->receive_pushed(index, buf, *id); }, protocol_task{},
                comm_class{}, pushed_input{this, index, id}, hytask::out(bytes, p.bytes));
}

void global_memory::declare_copyin(spawn_context& ctx, std::uint64_t index, void* buf,
                                   bool remote_only) {
  const global_place p = layout_.locate(index);
  if (remote_only && p.owner == rank_) declare(ctx, index, access_mode::in);
  else ctx.region(buf, p.bytes, access_mode::in);
}

void global_memory::copy_local(std::uint64_t index, void* buf) {
  gd::global_system::instance()->count_transfer();
  const global_place p = layout_.locate(index);
  std::memcpy(buf, base_ + p.offset, p.bytes);
}

std::uint64_t global_memory::declare_pushed(spawn_context& ctx, std::uint64_t index) {
  const global_place p = layout_.locate(index);
  const gd::location where{world_ranks_[static_cast<std::size_t>(p.owner)],
                           (std::uint64_t(id_) << 40) | index};
  return gd::global_system::instance()->declare(ctx, where, synthetic_ + 2 * index, 2,
                                                access_mode::in, true);
}

// The owner sends the location once this access is released (not a get: an RMA get over TCP
// moves only while the owner polls MPI, and its pending operations do not tell it to).
void global_memory::receive_pushed(std::uint64_t index, void* buf, std::uint64_t id) {
  gd::global_system& sys = *gd::global_system::instance();
  sys.count_transfer();
  const global_place p = layout_.locate(index);
  operation* op = gd::layer_op(kind::recv, sys.data_comm());
  op->rbuf = buf;
  op->rcount = static_cast<MPI_Count>(p.bytes);
  op->rtype = MPI_BYTE;
  op->peer = world_ranks_[static_cast<std::size_t>(p.owner)];
  op->tag = sys.data_tag(id);
  op->bytes = p.bytes;
  mpi::bind(start(op));  // the task ends now; its readers start when the data is in
}

void global_memory::declare(spawn_context& ctx, std::uint64_t index, access_mode mode) {
  require_attached("in/out/inout");
  gd::global_system* sys = gd::global_system::instance();
  const global_place p = layout_.locate(index);
  const gd::location where{world_ranks_[static_cast<std::size_t>(p.owner)],
                           (std::uint64_t(id_) << 40) | index};
  if (p.owner == rank_)
    sys->declare(ctx, where, base_ + p.offset, p.bytes, mode);
  else
    sys->declare(ctx, where, synthetic_ + 2 * index, 2, mode);
}

// No record, no owner: the location's address (or, for another rank's, its two synthetic
// bytes, which this rank's phase-bound accesses declare too) in the task's domain.
void global_memory::declare_unphased(spawn_context& ctx, std::uint64_t index, access_mode mode) {
  require_attached("in/out/inout with hytask::any_phase");
  const global_place p = layout_.locate(index);
  if (p.owner == rank_)
    ctx.region(base_ + p.offset, p.bytes, mode);
  else
    ctx.region(synthetic_ + 2 * index, 2, mode);
}

}  // namespace hytask::detail
