#include "fatal_errors.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/errors.hpp"

namespace hytask::detail {

namespace {

std::terminate_handler previous = nullptr;

// This process's rank in the job, from MPI once it is initialised, otherwise from the
// launcher's environment (the error may come before MPI_Init); -1 outside a launcher.
int job_rank(bool mpi_up) {
  if (mpi_up) {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v)) return std::atoi(s);
  return -1;
}

// The message of a hytask exception, or empty for any other exception.
std::string hytask_message(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const config_error& x) {
    return x.what();
  } catch (const usage_error& x) {
    return x.what();
  } catch (const mpi::error& x) {
    return x.what();
  } catch (...) {
  }
  return {};
}

[[noreturn]] void on_terminate() {
  std::exception_ptr e = std::current_exception();
  std::string msg = e ? hytask_message(e) : std::string();
  if (msg.empty()) {
    if (previous != nullptr) previous();
    std::abort();
  }
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  // Under a launcher, before MPI_Init (a bad HYTASK_* value is found first): initialise MPI
  // to end the job with MPI_Abort. Some launchers (MPICH's Hydra) let the other ranks run on
  // when one merely exits, and each would print the same message.
  if (!init && !fin && job_rank(false) >= 0) {
    int provided = 0;
    init = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
  }
  const bool mpi_up = init && !fin;
  const int rank = job_rank(mpi_up);
  if (rank > 0) std::this_thread::sleep_for(std::chrono::seconds(2));
  core::message_as(core::verbosity::error, rank, msg);
  core::wait_until_stderr_read();
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

}  // namespace

void install_fatal_error_handler() {
  static std::once_flag once;
  std::call_once(once, [] { previous = std::set_terminate(on_terminate); });
}

}  // namespace hytask::detail
