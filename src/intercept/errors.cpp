#include "intercept/errors.hpp"

#include "comm/error_handler.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/errors.hpp"

namespace hytask::intercept::detail {

std::string task_words() {
  const std::string_view name = hytask::this_task::name();
  return name.empty() ? std::string("in an unnamed task") : "in task '" + std::string(name) + "'";
}

void raise(const char* call, int code, int peer, int tag, const std::string& what) {
  throw mpi::error(call, code, peer, tag, std::string("hytask: ") + call + " inside a task failed: " + what);
}

void interrupted(const char* call, const std::string& what, const std::string& then) {
  throw hytask::task_cancelled(std::string("hytask: ") + call + (what.empty() ? "" : " ") + what + " " +
                               task_words() + ": cancelled with its task (hytask::task_group)" + then);
}

int failed(const char* call, MPI_Comm comm, const mpi::error& e) {
  if (!mpi::detail::errors_abort(comm)) return e.code();
  // e describes the operation hytask posted ("hytask::mpi: MPI_Irecv from rank 1 ..."): keep
  // that, under the program's call.
  std::string what = e.what();
  const std::string prefix = "hytask::mpi: ";
  if (what.compare(0, prefix.size(), prefix) == 0) what.erase(0, prefix.size());
  raise(call, e.code(), e.peer(), e.tag(), what);
}

}  // namespace hytask::intercept::detail
