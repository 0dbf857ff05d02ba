// Statuses handed back to the program.
#pragma once

#include <mpi.h>

namespace hytask::intercept::detail {

// Copies a completed operation's status to the program's, unless it passed
// MPI_STATUS_IGNORE. The MPI_ERROR field stays as the program left it: single-completion
// calls do not set it.
inline void give_status(MPI_Status* out, const MPI_Status& st) {
  if (out == MPI_STATUS_IGNORE) return;
  const int keep = out->MPI_ERROR;
  *out = st;
  out->MPI_ERROR = keep;
}

}  // namespace hytask::intercept::detail
