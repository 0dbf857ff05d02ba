// HYTASK_PROGRESS=thread: a thread polls on a timer whose period adapts
// (comm/polling_period.hpp) within [HYTASK_PROGRESS_MIN_US, HYTASK_PROGRESS_MAX_US]: the
// progress thread in multiple mode, the MPI thread in funneled mode, nothing in masteronly
// mode (main's waits poll). It parks while nothing is pending, and a post wakes it then.
#include "comm/comm.hpp"
#include "comm/polling_period.hpp"
#include "comm/progress_policy.hpp"
#include "comm/progress_registry.hpp"

namespace hytask::mpi::detail {
namespace {

class progress_thread final : public progress_policy_impl {
 public:
  explicit progress_thread(comm_system& c)
      : progress_policy_impl(c),
        period_(static_cast<std::int64_t>(c.config().progress_min_us) * 1000,
                static_cast<std::int64_t>(c.config().progress_max_us) * 1000) {}

  bool wants_thread() const override { return true; }

  long round(bool) override {
    const core::poll_result r = c_.eng().poll();
    if (r == core::poll_result::nothing_pending) return -1;
    return static_cast<long>(period_.after(r));
  }

  long park_timeout() override { return static_cast<long>(period_.current()); }

  void registered() override {
    // Only a thread parked with nothing pending is woken: one that sleeps a polling period
    // is not (a wake per message costs a system call and a context switch each).
    if (c_.mode() == hytask::mpi_mode::multiple && c_.thread_parked()) c_.wake_thread();
  }

 private:
  polling_period period_;
};

std::unique_ptr<progress_policy_impl> make_progress_thread(comm_system& c) {
  return std::make_unique<progress_thread>(c);
}

}  // namespace

void register_progress_thread() noexcept {
  register_progress_policy(hytask::progress_policy::thread, &make_progress_thread);
}

}  // namespace hytask::mpi::detail
