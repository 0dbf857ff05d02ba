// The frame of an app's main: the usage errors, MPI's start and end, and the errors that end
// the job. Every app (jacobi3d, hpl, cholesky, qr) runs inside it.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "app_support.hpp"
#include "command_line.hpp"
#include "hytask/errors.hpp"

namespace hytask_apps {

// `body()`'s status. A usage error: its text (hytask_cli::error_text) and status 2; any other
// exception: "<app>: <what>" and status 1; once MPI is up, either ends the job (fail).
template <class Body>
int app_main(const char* app, Body body) {
  try {
    return body();
  } catch (const hytask_cli::usage_error& e) {
    std::fputs(hytask_cli::error_text(app, e.what()).c_str(), stderr);
    return fail(app, nullptr, 2);
  } catch (const hytask::usage_error& e) {
    return fail(app, e.what(), 2);
  } catch (const std::exception& e) {
    return fail(app, e.what(), 1);
  }
}

// MPI for the length of an app's run: MPI_Init_thread asking for `needed`, MPI_Finalize at
// the end. ok() is false, with `why` and the level MPI provides said once (by rank 0), when
// MPI provides less.
class mpi_job {
 public:
  mpi_job(const char* app, int& argc, char**& argv, int needed, const char* why) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, needed, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    ok_ = provided >= needed;
    if (!ok_ && rank_ == 0) std::fprintf(stderr, "%s: %s; this MPI provides level %d\n", app, why, provided);
  }
  ~mpi_job() { MPI_Finalize(); }
  mpi_job(const mpi_job&) = delete;
  mpi_job& operator=(const mpi_job&) = delete;

  bool ok() const { return ok_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }

 private:
  int rank_ = 0, size_ = 1;
  bool ok_ = false;
};

}  // namespace hytask_apps
