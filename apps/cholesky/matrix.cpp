// The test matrix and local copies.
#include <cstring>

#include "app_support.hpp"
#include "cholesky.hpp"

namespace chol {

double element(long i, long j, long n, std::uint64_t seed, long not_spd) {
  if (i == j) return i == not_spd ? -static_cast<double>(n) : static_cast<double>(n);
  const long lo = i < j ? i : j, hi = i < j ? j : i;  // symmetric
  const std::uint64_t h = hytask_apps::splitmix(seed ^ hytask_apps::splitmix(
                                                           static_cast<std::uint64_t>(lo) * 0x100000001b3ull +
                                                           static_cast<std::uint64_t>(hi)));
  return static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5;
}

void generate(matrix& a, const options& o) {
  const std::size_t ld = a.mb();
  for (std::size_t i = 0; i < a.tile_rows(); ++i)
    for (std::size_t j = 0; j <= i; ++j)
      if (double* t = a.tile(i, j).local_data())
        for (std::size_t c = 0; c < a.tile_width(j); ++c)
          for (std::size_t r = 0; r < a.tile_height(i); ++r)
            t[r + c * ld] = element(static_cast<long>(i * a.mb() + r), static_cast<long>(j * a.nb() + c),
                                    o.n, o.seed, o.not_spd);
}

void copy_local(const matrix& from, matrix& to) {
  const std::size_t bytes = from.mb() * from.nb() * sizeof(double);
  for (std::size_t i = 0; i < from.tile_rows(); ++i)
    for (std::size_t j = 0; j <= i; ++j)
      if (const double* s = from.tile(i, j).local_data()) std::memcpy(to.tile(i, j).local_data(), s, bytes);
}

}  // namespace chol
