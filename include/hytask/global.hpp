// Global task dependencies over a partitioned global address space, after Schuchart, "Global
// Task Data Dependencies in the Partitioned Global Address Space": PGAS objects on MPI-3 RMA,
// in/out/inout on their elements and tiles, phases.
#pragma once

#include "hytask/global/copyin.hpp"
#include "hytask/global/global_array.hpp"
#include "hytask/global/algorithm.hpp"
#include "hytask/global/global_ptr.hpp"
#include "hytask/global/global_ref.hpp"
#include "hytask/global/phase.hpp"
#include "hytask/global/stats.hpp"
#include "hytask/global/tiled_matrix.hpp"
