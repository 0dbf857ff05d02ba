// How an MPI test program fails: it names its rank and what went wrong, then ends the job.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "hytask/mpi.hpp"

namespace hytask_test {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: rank %d: %s\n", hytask::mpi::rank(), what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace hytask_test
