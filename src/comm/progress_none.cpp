// HYTASK_PROGRESS=none: nobody polls while every worker is busy (the baseline). Operations
// move when a worker idles, or when the program waits for them.
#include "comm/comm.hpp"
#include "comm/progress_policy.hpp"
#include "comm/progress_registry.hpp"

namespace hytask::mpi::detail {
namespace {

class progress_none final : public progress_policy_impl {
 public:
  using progress_policy_impl::progress_policy_impl;
  long round(bool asked) override {
    if (asked) c_.eng().poll();
    return -1;
  }
};

std::unique_ptr<progress_policy_impl> make_progress_none(comm_system& c) {
  return std::make_unique<progress_none>(c);
}

}  // namespace

void register_progress_none() noexcept {
  register_progress_policy(hytask::progress_policy::none, &make_progress_none);
}

}  // namespace hytask::mpi::detail
