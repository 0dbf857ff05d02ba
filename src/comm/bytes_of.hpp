// The size in bytes of count elements of an MPI datatype, as operations record it for the
// watchdog's reports and the trace (operation::bytes): 0 for a non-positive count,
// MPI_DATATYPE_NULL, or a type MPI cannot size. Used by hytask::mpi's calls and by the
// interception library's.
#pragma once

#include <mpi.h>

#include <cstddef>

namespace hytask::mpi::detail {

inline std::size_t bytes_of(MPI_Count count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || MPI_Type_size(type, &size) != MPI_SUCCESS ||
      size < 0)
    return 0;
  return static_cast<std::size_t>(size) * static_cast<std::size_t>(count);
}

}  // namespace hytask::mpi::detail
