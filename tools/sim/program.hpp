// What a simulated rank's program does, as hytask's API sees it: spawn tasks with accesses,
// fence, wait_all. An application model (cholesky_model.cpp, qr_model.cpp) yields these per
// rank, in the order the real application's main thread calls the API.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "generator.hpp"

namespace hytask::sim {

// A tile of a distributed matrix, or a local buffer of the rank (owner < 0).
struct place {
  std::uint64_t key = 0;  // unique in the job (global locations) or on the rank (buffers)
  int owner = -1;
  std::uint64_t bytes = 0;
};

// in / inout on a global location; copyin / copyin_r of a global location into a buffer of
// this rank, which the task then reads (copyin_r reads a local location in place).
enum class mode : std::uint8_t { in, inout, copyin, copyin_r };

struct access {
  mode m;
  place where;
  place buffer;  // copyin, copyin_r
};

struct op {
  enum class kind : std::uint8_t { spawn, fence, wait_all } k = kind::spawn;
  int kernel = -1;  // spawn: an index into the model's kernels
  std::vector<access> accesses;
};

// The model's spelling of hytask's calls.
inline access in(place p) { return access{mode::in, p, place{}}; }
inline access inout(place p) { return access{mode::inout, p, place{}}; }
inline access copyin(place p, place buffer) { return access{mode::copyin, p, buffer}; }
inline access copyin_r(place p, place buffer) { return access{mode::copyin_r, p, buffer}; }
// Variadic rather than an initializer list: GCC 12 mishandles an initializer list's array
// in a coroutine's co_yield.
template <class... Access>
op spawn(int kernel, Access... accesses) {
  op o;
  o.kernel = kernel;
  o.accesses.reserve(sizeof...(accesses));
  (o.accesses.push_back(accesses), ...);
  return o;
}
inline op fence() {
  op o;
  o.k = op::kind::fence;
  return o;
}
inline op wait_all() {
  op o;
  o.k = op::kind::wait_all;
  return o;
}

struct grid {
  int p = 1, q = 1;  // process rows and columns; rank (r, c) is r·q + c
  int owner(std::size_t i, std::size_t j) const {
    return static_cast<int>(i % static_cast<std::size_t>(p)) * q + static_cast<int>(j % static_cast<std::size_t>(q));
  }
  int ranks() const { return p * q; }
};

// An application at one size on one grid.
class app_model {
 public:
  virtual ~app_model() = default;
  virtual std::string name() const = 0;
  virtual const std::vector<std::string>& kernels() const = 0;
  // Floating-point operations of the whole factorisation (for Gflop/s).
  virtual double flops() const = 0;
  virtual int ranks() const = 0;
  // What rank `rank`'s main thread calls, in order (the model must outlive it).
  virtual generator<op> program(int rank) const = 0;
  // The size of a global location (what its owner sends for a copyin).
  virtual std::uint64_t bytes(std::uint64_t key) const = 0;
};

// Matrix ids in keys: (id << 40) | tile index; buffers have the top bit set.
inline std::uint64_t tile_key(unsigned id, std::uint64_t index) { return (std::uint64_t{id} << 40) | index; }
inline std::uint64_t buffer_key(unsigned id, std::uint64_t index) {
  return (std::uint64_t{1} << 63) | (std::uint64_t{id} << 40) | index;
}

struct cholesky_size {
  long n = 4096;
  int nb = 256;
};
struct qr_size {
  long m = 0, n = 4096;  // m = 0: square
  int nb = 256, ib = 32;
};
std::unique_ptr<app_model> make_cholesky(cholesky_size s, grid g);
std::unique_ptr<app_model> make_qr(qr_size s, grid g);

}  // namespace hytask::sim
