// The progress policy a runtime uses (HYTASK_PROGRESS): one implementation per file,
// progress_<policy>.cpp (node's in src/node/).
#include <memory>

#include "comm/comm.hpp"
#include "comm/progress_policy.hpp"

namespace hytask::mpi::detail {

std::unique_ptr<progress_policy_impl> make_progress_none(comm_system& c);
std::unique_ptr<progress_policy_impl> make_progress_thread(comm_system& c);
std::unique_ptr<progress_policy_impl> make_progress_workers(comm_system& c);

std::unique_ptr<progress_policy_impl> make_progress_policy(comm_system& c) {
  switch (c.config().progress) {
    case progress_policy::thread: return make_progress_thread(c);
    case progress_policy::none: return make_progress_none(c);
    case progress_policy::node: return make_progress_node(c);
    case progress_policy::workers: break;
  }
  return make_progress_workers(c);
}

}  // namespace hytask::mpi::detail
