#include "global/mpi_call.hpp"

#include <string>

#include "comm/operation.hpp"
#include "core/face.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/errors.hpp"

namespace hytask::global::detail {

mpi::detail::comm_system& comm_or_throw(const char* what) {
  if (auto* c = mpi::detail::comm_system::instance()) return *c;
  if (!core::scheduler_alive())
    throw usage_error(std::string("hytask: ") + what +
                      " with no hytask::runtime alive: construct one in main first");
  throw usage_error(std::string("hytask: ") + what +
                    " need MPI, and the runtime did not initialise it (HYTASK_MPI=off, or auto "
                    "without an MPI launcher): start the program with mpiexec, or set "
                    "HYTASK_MPI=on");
}

mpi::detail::operation* layer_op(mpi::detail::kind k, MPI_Comm comm) {
  auto* op = new mpi::detail::operation;
  op->what = k;
  op->comm = comm;
  op->task_name = "hytask global dependencies";
  return op;
}

void run_and_wait(mpi::detail::operation* op) {
  struct hold {
    mpi::detail::operation* op;
    ~hold() { mpi::detail::release(op); }
  } h{op};
  mpi::detail::comm_system& c = comm_or_throw(mpi::detail::op_name(op));
  c.submit(op, true);
  c.wait(op);
  if (op->error != MPI_SUCCESS) throw mpi::make_error(op);
}

void blocking_mpi(const char* name, int peer, const std::function<int()>& f) {
  mpi::detail::comm_system& c = comm_or_throw(name);
  mpi::detail::operation* op = layer_op(mpi::detail::kind::call, c.world());
  op->call = [](void* arg) { return (*static_cast<const std::function<int()>*>(arg))(); };
  op->call_arg = const_cast<std::function<int()>*>(&f);
  op->call_name = name;
  op->peer = peer;
  run_and_wait(op);
}

}  // namespace hytask::global::detail
