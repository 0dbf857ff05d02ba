// The tasks variant's update width when --update-blocks is not given (docs/hpl.md, "The
// tasks variant"). Every DGEMM call packs the whole jb-wide panel L21 once, so a call over w
// columns costs about m * (a + b * w) and spends a / (a + b * w) of its time packing;
// pack_columns() (kernels.cpp) measures a / b on this core: "packing the panel costs as much
// as the update of that many columns". No MPI, no BLAS here: tests/apps/test_hpl_granularity.cpp.
#pragma once

#include <algorithm>

namespace hpl {

// The packing's share of an update task that the width allows at most.
constexpr double update_overhead = 0.01;

// The width (columns, a multiple of nb) of the update tasks that share `cols` local columns
// on `workers` workers: as narrow as possible (a narrow task keeps the critical path's tasks
// and the polls waiting little) while packing costs at most `overhead` of each task, but one
// task per worker at least when there is a block for each.
inline long update_width(long cols, int nb, int workers, double pack_columns, double overhead = update_overhead) {
  if (cols <= 0 || nb <= 0) return std::max(nb, 1);
  const long blocks = (cols + nb - 1) / nb;
  // Packing within `overhead`: pack / (pack + w) <= overhead.
  const double narrowest = std::max<double>(nb, std::max(0.0, pack_columns) * (1 - overhead) / overhead);
  const long tasks = std::min(blocks, std::max(1L, static_cast<long>(double(cols) / narrowest)));
  if (tasks < workers) return std::max(1L, blocks / std::min<long>(workers, blocks)) * nb;  // a share each
  return (blocks + tasks - 1) / tasks * nb;  // rounded up: no task narrower than `narrowest`
}

}  // namespace hpl
