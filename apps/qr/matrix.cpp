// The test matrix, local copies, and gathering a tiled matrix on rank 0.
#include <mpi.h>

#include <algorithm>
#include <cstring>

#include "app_support.hpp"
#include "qr.hpp"

namespace qr {

double element(long i, long j, std::uint64_t seed) {
  const std::uint64_t h = hytask_apps::splitmix(
      seed ^ hytask_apps::splitmix(static_cast<std::uint64_t>(i) * 0x100000001b3ull + static_cast<std::uint64_t>(j)));
  return static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
}

void generate(matrix& a, const options& o) {
  const std::size_t ld = a.mb();
  for (std::size_t i = 0; i < a.tile_rows(); ++i)
    for (std::size_t j = 0; j < a.tile_cols(); ++j)
      if (double* t = a.tile(i, j).local_data())
        for (std::size_t c = 0; c < a.tile_width(j); ++c)
          for (std::size_t r = 0; r < a.tile_height(i); ++r)
            t[r + c * ld] = element(static_cast<long>(i * a.mb() + r), static_cast<long>(j * a.nb() + c), o.seed);
}

void copy_local(const matrix& from, matrix& to) {
  const std::size_t bytes = from.mb() * from.nb() * sizeof(double);
  for (std::size_t i = 0; i < from.tile_rows(); ++i)
    for (std::size_t j = 0; j < from.tile_cols(); ++j)
      if (const double* s = from.tile(i, j).local_data()) std::memcpy(to.tile(i, j).local_data(), s, bytes);
}

void zero_local(matrix& a) {
  for (std::size_t i = 0; i < a.tile_rows(); ++i)
    for (std::size_t j = 0; j < a.tile_cols(); ++j)
      if (double* t = a.tile(i, j).local_data()) std::fill(t, t + a.mb() * a.nb(), 0.0);
}

tile_set gather(const matrix& a) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tile_set s;
  if (rank == 0) s = tile_set(a.tile_rows(), a.tile_cols(), a.mb(), a.nb());
  const int count = static_cast<int>(a.mb() * a.nb());
  // Rank 0 receives in tile order, and each rank sends its tiles in that order: no cycle.
  for (std::size_t i = 0; i < a.tile_rows(); ++i)
    for (std::size_t j = 0; j < a.tile_cols(); ++j) {
      auto t = a.tile(i, j);
      if (rank == 0 && t.is_local()) std::memcpy(s.tile(i, j), t.local_data(), sizeof(double) * a.mb() * a.nb());
      else if (rank == 0) MPI_Recv(s.tile(i, j), count, MPI_DOUBLE, t.owner(), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else if (t.is_local()) MPI_Send(t.local_data(), count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
  return s;
}

shape shape_of(const options& o) {
  shape s{o.m, o.n, o.nb, o.ib, 0, 0};
  s.mt = static_cast<std::size_t>((o.m + o.nb - 1) / o.nb);
  s.nt = static_cast<std::size_t>((o.n + o.nb - 1) / o.nb);
  return s;
}

}  // namespace qr
