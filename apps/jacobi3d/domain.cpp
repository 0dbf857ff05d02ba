#include "domain.hpp"

#include "app_support.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace jacobi {

namespace {

using hytask_apps::splitmix;

const char* axis_name(int d) { return d == 0 ? "z" : d == 1 ? "x" : "y"; }

// The stencil over one box, R = radius. The sum's order is fixed (and the same in the
// sequential reference): that is what makes every variant bit-identical.
template <int R>
void sweep_radius(const domain& g, const double* in, double* out, const box& b) {
  constexpr double w = 1.0 / (6.0 * R);
  const long sz = g.stride_z, sx = g.stride_x;
  const int ny = b.hi[2] - b.lo[2];
  for (int z = b.lo[0]; z < b.hi[0]; ++z)
    for (int x = b.lo[1]; x < b.hi[1]; ++x) {
      const long c0 = g.index(z, x, b.lo[2]);
      const double* c = in + c0;
      double* o = out + c0;
      for (int y = 0; y < ny; ++y) {
        double s = 0.0;
        for (int k = 1; k <= R; ++k) {
          s += c[y - k];
          s += c[y + k];
          s += c[y - k * sx];
          s += c[y + k * sx];
          s += c[y - k * sz];
          s += c[y + k * sz];
        }
        o[y] = s * w;
      }
    }
}

}  // namespace

void check(int rc, const char* call, int peer) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::string where = peer == MPI_PROC_NULL ? "" : " (peer " + std::to_string(peer) + ")";
  throw mpi_failure(std::string("jacobi3d: ") + call + where + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

untouched_array::untouched_array(std::size_t n) {
  std::size_t bytes = (n * sizeof(double) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  p_.reset(static_cast<double*>(p));
}
void untouched_array::free_deleter::operator()(double* p) const { std::free(p); }

double initial_value(long gz, long gx, long gy, const std::array<int, 3>& global) {
  // Shift by the largest radius so halo coordinates (down to -4) index uniquely.
  const std::uint64_t i = (static_cast<std::uint64_t>(gz + 4) * static_cast<std::uint64_t>(global[1] + 8) +
                           static_cast<std::uint64_t>(gx + 4)) *
                              static_cast<std::uint64_t>(global[2] + 8) +
                          static_cast<std::uint64_t>(gy + 4);
  return static_cast<double>(splitmix(i) >> 11) * 0x1.0p-53;
}

std::uint64_t point_hash(double v, std::uint64_t global_index) {
  return splitmix(std::bit_cast<std::uint64_t>(v) ^ (global_index * 0xD1B54A32D192ED03ull));
}

box split(const box& b, int parts, int p) {
  if (parts <= 1) return b;
  const int d = (b.hi[0] - b.lo[0]) >= (b.hi[1] - b.lo[1]) ? 0 : 1;
  const long n = b.hi[d] - b.lo[d];
  box r = b;
  r.lo[d] = b.lo[d] + static_cast<int>(n * p / parts);
  r.hi[d] = b.lo[d] + static_cast<int>(n * (p + 1) / parts);
  return r;
}

domain::domain(const options& o, MPI_Comm world) : opts(o), radius(o.radius), global(o.size) {
  MPI_Comm_size(world, &ranks);
  dims = {0, 0, 0};
  if (o.decomp == decomposition::d1) {
    dims = {ranks, 1, 1};
  } else {
    check(MPI_Dims_create(ranks, 3, dims.data()), "MPI_Dims_create", MPI_PROC_NULL);
  }
  int periods[3] = {0, 0, 0};
  check(MPI_Cart_create(world, 3, dims.data(), periods, 1, &comm), "MPI_Cart_create", MPI_PROC_NULL);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm, &rank);
  MPI_Cart_coords(comm, rank, 3, coords.data());
  // Every rank checks its own part; all ranks fail together (no rank left waiting in a
  // collective), and the first rank with a problem explains it.
  std::string problem;
  for (int d = 0; d < 3; ++d) {
    const int n = global[d] / dims[d], rem = global[d] % dims[d];
    local[d] = n + (coords[d] < rem ? 1 : 0);
    offset[d] = coords[d] * n + std::min(coords[d], rem);
    if (problem.empty() && global[d] < dims[d])
      problem = "the domain has " + std::to_string(global[d]) + " points along " + axis_name(d) + " for " +
                std::to_string(dims[d]) + " ranks along it: use a larger --size or fewer ranks";
    else if (problem.empty() && dims[d] > 1 && local[d] < radius)
      problem = "a rank's part of the domain is " + std::to_string(local[d]) + " points thick along " +
                axis_name(d) + ", less than the stencil's radius " + std::to_string(radius) +
                ": use a larger --size or fewer ranks";
    extent[d] = local[d] + 2 * radius;
  }
  int first = problem.empty() ? ranks : rank;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first < ranks) {
    MPI_Comm_free(&comm);
    throw usage_error(rank == first ? problem : std::string());
  }
  stride_x = extent[2];
  stride_z = extent[1] * extent[2];

  for (int d = 0; d < 3; ++d) {
    int lo = MPI_PROC_NULL, hi = MPI_PROC_NULL;
    check(MPI_Cart_shift(comm, d, 1, &lo, &hi), "MPI_Cart_shift", MPI_PROC_NULL);
    for (int side = 0; side < 2; ++side) {
      int peer = side == 0 ? lo : hi;
      if (peer == MPI_PROC_NULL) continue;
      face f;
      f.dim = d;
      f.side = side;
      f.peer = peer;
      f.send_tag = 10 + 2 * d + side;
      f.recv_tag = 10 + 2 * d + (1 - side);
      f.send_box = whole();
      f.recv_box = whole();
      if (side == 0) {
        f.send_box.hi[d] = radius;
        f.recv_box.lo[d] = -radius;
        f.recv_box.hi[d] = 0;
      } else {
        f.send_box.lo[d] = local[d] - radius;
        f.recv_box.lo[d] = local[d];
        f.recv_box.hi[d] = local[d] + radius;
      }
      f.count = f.send_box.points();
      for (int which = 0; which < 2; ++which) {
        const box& b = which == 0 ? f.send_box : f.recv_box;
        int sizes[3], sub[3], starts[3];
        for (int k = 0; k < 3; ++k) {
          sizes[k] = static_cast<int>(extent[k]);
          sub[k] = b.hi[k] - b.lo[k];
          starts[k] = b.lo[k] + radius;
        }
        MPI_Datatype& t = which == 0 ? f.send_type : f.recv_type;
        check(MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t), "MPI_Type_create_subarray",
              peer);
        check(MPI_Type_commit(&t), "MPI_Type_commit", peer);
      }
      faces.push_back(f);
    }
  }
}

domain::~domain() {
  for (face& f : faces) {
    MPI_Type_free(&f.send_type);
    MPI_Type_free(&f.recv_type);
  }
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

box domain::inner() const {
  box b = whole();
  for (const face& f : faces) {
    if (f.side == 0) b.lo[f.dim] = std::min(radius, local[f.dim]);
    else b.hi[f.dim] = local[f.dim] - radius;
  }
  for (int d = 0; d < 3; ++d) b.hi[d] = std::max(b.hi[d], b.lo[d]);
  return b;
}

std::vector<std::array<int, 2>> domain::intervals(int dim, int block) const {
  const box in = inner();
  std::vector<std::array<int, 2>> out;
  if (in.lo[dim] > 0) out.push_back({0, in.lo[dim]});
  const int step = block > 0 ? block : std::max(1, in.hi[dim] - in.lo[dim]);
  for (int a = in.lo[dim]; a < in.hi[dim]; a += step) out.push_back({a, std::min(in.hi[dim], a + step)});
  if (in.hi[dim] < local[dim]) out.push_back({in.hi[dim], local[dim]});
  return out;
}

std::vector<box> domain::boundary() const {
  std::vector<box> out;
  const box in = inner();
  std::array<std::array<std::array<int, 2>, 3>, 3> bands;  // [dim][band] = range
  for (int d = 0; d < 3; ++d) bands[d] = {{{0, in.lo[d]}, {in.lo[d], in.hi[d]}, {in.hi[d], local[d]}}};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) {
        if (a == 1 && b == 1 && c == 1) continue;
        box x{{bands[0][a][0], bands[1][b][0], bands[2][c][0]}, {bands[0][a][1], bands[1][b][1], bands[2][c][1]}};
        if (!x.empty()) out.push_back(x);
      }
  return out;
}

unsigned domain::needs(const box& b) const {
  unsigned m = 0;
  if (b.empty()) return 0;
  for (std::size_t i = 0; i < faces.size(); ++i) {
    const face& f = faces[i];
    if (f.side == 0 ? b.lo[f.dim] < radius : b.hi[f.dim] > local[f.dim] - radius) m |= 1u << i;
  }
  return m;
}

void domain::init_planes(double* a, int z0, int z1) const {
  const int r = radius;
  for (int z = z0; z < z1; ++z)
    for (int x = -r; x < local[1] + r; ++x)
      for (int y = -r; y < local[2] + r; ++y) {
        const long g[3] = {offset[0] + z, offset[1] + x, offset[2] + y};
        int outside = 0;
        for (int d = 0; d < 3; ++d) outside += g[d] < 0 || g[d] >= global[d];
        // Inside: the initial value; a face of the global halo: the fixed boundary value;
        // edges and corners of the halo are never read.
        a[index(z, x, y)] = outside <= 1 ? initial_value(g[0], g[1], g[2], global) : 0.0;
      }
}

void domain::sweep(const double* in, double* out, const box& b) const {
  if (b.empty()) return;
  const auto t0 = meter ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (radius == 1) sweep_radius<1>(*this, in, out, b);
  else sweep_radius<4>(*this, in, out, b);
  if (meter) meter->add(std::chrono::steady_clock::now() - t0);
}

void domain::pack(const double* a, const face& f, double* buf) const {
  const box& b = f.send_box;
  const int ny = b.hi[2] - b.lo[2];
  for (int z = b.lo[0]; z < b.hi[0]; ++z)
    for (int x = b.lo[1]; x < b.hi[1]; ++x) {
      std::memcpy(buf, a + index(z, x, b.lo[2]), static_cast<std::size_t>(ny) * sizeof(double));
      buf += ny;
    }
}

void domain::unpack(double* a, const face& f, const double* buf) const {
  const box& b = f.recv_box;
  const int ny = b.hi[2] - b.lo[2];
  for (int z = b.lo[0]; z < b.hi[0]; ++z)
    for (int x = b.lo[1]; x < b.hi[1]; ++x) {
      std::memcpy(a + index(z, x, b.lo[2]), buf, static_cast<std::size_t>(ny) * sizeof(double));
      buf += ny;
    }
}

std::uint64_t domain::checksum(const double* a) const {
  std::uint64_t sum = 0;
  for (int z = 0; z < local[0]; ++z)
    for (int x = 0; x < local[1]; ++x)
      for (int y = 0; y < local[2]; ++y) {
        const std::uint64_t gi = (static_cast<std::uint64_t>(offset[0] + z) * static_cast<std::uint64_t>(global[1]) +
                                  static_cast<std::uint64_t>(offset[1] + x)) *
                                     static_cast<std::uint64_t>(global[2]) +
                                 static_cast<std::uint64_t>(offset[2] + y);
        sum += point_hash(a[index(z, x, y)], gi);
      }
  return sum;
}

}  // namespace jacobi
