// This rank's progress counters (hytask::mpi::progress_stats(), defined here too): the policy,
// the polls, the CPU time of the progress (or MPI) thread, and the policy's own counters.
#include <pthread.h>
#include <time.h>

#include <cstdint>
#include <thread>

#include "comm/api_common.hpp"
#include "comm/comm.hpp"
#include "comm/progress_registry.hpp"

namespace hytask::mpi::detail {

progress_counters comm_system::counters() const {
  progress_counters out;
  out.policy = progress_policy_name(settings_.progress);
  out.polls = engine_.polls();
  // The thread's CPU clock, read from here; the thread may be running or gone.
  clockid_t clock{};
  timespec ts{};
  if (thread_.joinable() && pthread_getcpuclockid(const_cast<std::thread&>(thread_).native_handle(),
                                                  &clock) == 0 &&
      clock_gettime(clock, &ts) == 0)
    out.thread_cpu_ns = static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
                        static_cast<std::uint64_t>(ts.tv_nsec);
  policy_->counters(out);
  return out;
}

}  // namespace hytask::mpi::detail

namespace hytask::mpi {

progress_counters progress_stats() { return detail::sys("progress_stats").counters(); }

}  // namespace hytask::mpi
