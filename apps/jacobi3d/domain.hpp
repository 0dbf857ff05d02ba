// One rank's part of the Jacobi domain: decomposition, storage, kernels, halos, checksum.
//
// Axes are (z, x, y), y innermost (unit stride), as in seed 000 (L1246). A rank stores its
// n_z x n_x x n_y interior points with a halo of `radius` points on every side; local
// interior coordinates run from 0 to n-1, the halo from -radius to -1 and n to n+radius-1.
// Halo points outside the global domain hold fixed boundary values; the others are
// refreshed from the neighbours each iteration. The stencils read only along the axes, so
// only face halos (no edges, no corners) are exchanged.
//
// Every point's new value is computed by the same expression in the same order whatever
// the decomposition, the variant or the threads, so results are bit-identical.
#pragma once

#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compute_meter.hpp"
#include "options.hpp"

namespace jacobi {

// A box of local interior coordinates, [lo, hi) per axis.
struct box {
  std::array<int, 3> lo{}, hi{};
  bool empty() const { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  long points() const {
    return empty() ? 0 : static_cast<long>(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  }
};

// One neighbour: what this rank sends it and where its data lands.
struct face {
  int dim = 0, side = 0;  // side 0: the low neighbour along dim, 1: the high one
  int peer = MPI_PROC_NULL;
  int send_tag = 0, recv_tag = 0;
  box send_box, recv_box;  // the last `radius` interior layers; the halo layers beyond them
  MPI_Datatype send_type = MPI_DATATYPE_NULL, recv_type = MPI_DATATYPE_NULL;
  long count = 0;          // points in either box
};

// An MPI error, with the call and the peer.
struct mpi_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check(int rc, const char* call, int peer);

// 64-byte aligned storage that is not touched at allocation, so that the first write —
// by the thread that will compute on it — places its pages (first touch).
struct untouched_array {
  explicit untouched_array(std::size_t n);
  double* data() const { return p_.get(); }
  struct free_deleter {
    void operator()(double* p) const;
  };
  std::unique_ptr<double, free_deleter> p_;
};

class domain {
 public:
  // Collective over `world`: builds the Cartesian communicator and the halo datatypes.
  domain(const options& o, MPI_Comm world);
  ~domain();
  domain(const domain&) = delete;
  domain& operator=(const domain&) = delete;

  const options& opts;
  int radius;
  MPI_Comm comm = MPI_COMM_NULL;  // Cartesian, errors returned
  int rank = 0, ranks = 1;
  std::array<int, 3> dims{}, coords{}, global{}, local{}, offset{};
  std::array<long, 3> extent{};   // local + 2 radius
  long stride_z = 0, stride_x = 0;
  std::vector<face> faces;        // existing neighbours only

  std::size_t cells() const { return static_cast<std::size_t>(extent[0] * extent[1] * extent[2]); }
  long index(int z, int x, int y) const {
    return ((z + radius) * extent[1] + (x + radius)) * extent[2] + (y + radius);
  }

  box whole() const { return box{{0, 0, 0}, local}; }
  // The points that read no halo refreshed by a neighbour, and the rest cut into at most 26
  // boxes (one per combination of low band / middle / high band per axis, middle^3 excepted).
  box inner() const;
  std::vector<box> boundary() const;
  // The whole domain cut along each axis into the low band, chunks of `block` points of the
  // middle, and the high band: the tasks of commtask and dataflow.
  std::vector<std::array<int, 2>> intervals(int dim, int block) const;
  // Bit i set: the box reads the halo that faces[i] refreshes.
  unsigned needs(const box& b) const;

  // First touch: writes every cell of planes [z0, z1) of a (halo planes included, local z
  // from -radius to local[0] + radius), initial values inside, boundary values outside.
  void init_planes(double* a, int z0, int z1) const;
  // out = stencil(in) over box b; timed into *meter when one is set.
  void sweep(const double* in, double* out, const box& b) const;
  compute_meter* meter = nullptr;
  void pack(const double* a, const face& f, double* buf) const;
  void unpack(double* a, const face& f, const double* buf) const;
  // Order-independent 64-bit checksum of this rank's interior (sum it over ranks).
  std::uint64_t checksum(const double* a) const;
};

// The value of a global point before the first iteration, and of the fixed boundary outside
// the domain; both in [0, 1), functions of the global coordinates only.
double initial_value(long gz, long gx, long gy, const std::array<int, 3>& global);
std::uint64_t point_hash(double v, std::uint64_t global_index);

// Splits b into `parts` nearly equal boxes along its longest of z and x; part p of them.
box split(const box& b, int parts, int p);

}  // namespace jacobi
