// The sequential reference: the whole domain on rank 0, one plain loop nest per iteration.
// Written apart from domain.cpp on purpose (only the initial values and the point hash are
// shared), so that the decomposed variants are checked against independent code.
#include <cstdint>
#include <vector>

#include "variants.hpp"

namespace jacobi {

reference_result run_sequential(const options& o, MPI_Comm comm) {
  reference_result res;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  if (rank == 0) {
    const int r = o.radius;
    const long nz = o.size[0], nx = o.size[1], ny = o.size[2];
    const long ex = nx + 2 * r, ey = ny + 2 * r;
    const std::size_t cells = static_cast<std::size_t>((nz + 2 * r) * ex * ey);
    std::vector<double> u(cells, 0.0), v(cells, 0.0);
    auto at = [&](long z, long x, long y) { return static_cast<std::size_t>(((z + r) * ex + (x + r)) * ey + (y + r)); };
    for (long z = -r; z < nz + r; ++z)
      for (long x = -r; x < nx + r; ++x)
        for (long y = -r; y < ny + r; ++y) {
          const int outside = (z < 0 || z >= nz) + (x < 0 || x >= nx) + (y < 0 || y >= ny);
          if (outside <= 1) u[at(z, x, y)] = v[at(z, x, y)] = initial_value(z, x, y, o.size);
        }
    const double w = 1.0 / (6.0 * r);
    for (int k = 0; k < o.iters; ++k) {
      for (long z = 0; z < nz; ++z)
        for (long x = 0; x < nx; ++x)
          for (long y = 0; y < ny; ++y) {
            double s = 0.0;
            for (long j = 1; j <= r; ++j) {
              s += u[at(z, x, y - j)];
              s += u[at(z, x, y + j)];
              s += u[at(z, x - j, y)];
              s += u[at(z, x + j, y)];
              s += u[at(z - j, x, y)];
              s += u[at(z + j, x, y)];
            }
            v[at(z, x, y)] = s * w;
          }
      u.swap(v);
    }
    for (long z = 0; z < nz; ++z)
      for (long x = 0; x < nx; ++x)
        for (long y = 0; y < ny; ++y)
          res.checksum += point_hash(u[at(z, x, y)], static_cast<std::uint64_t>((z * nx + x) * ny + y));
  }
  MPI_Barrier(comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

}  // namespace jacobi
