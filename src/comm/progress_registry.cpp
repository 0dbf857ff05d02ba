// The registry of progress policies (comm/progress_registry.hpp): their names, and a factory
// per policy, set by the policy's own registration.
#include "comm/progress_registry.hpp"

#include <atomic>
#include <cstddef>
#include <string>

#include "comm/comm.hpp"
#include "comm/progress_policy.hpp"
#include "hytask/errors.hpp"

namespace hytask::mpi::detail {
namespace {

std::atomic<progress_factory> g_progress_factories[progress_policies.size()];

constexpr std::size_t progress_index(hytask::progress_policy p) noexcept {
  return static_cast<std::size_t>(p);
}
static_assert([] {
  for (std::size_t i = 0; i < progress_policies.size(); ++i)
    if (progress_index(progress_policies[i]) != i) return false;
  return true;
}());

}  // namespace

const char* progress_policy_name(hytask::progress_policy p) noexcept {
  switch (p) {
    case hytask::progress_policy::thread: return "thread";
    case hytask::progress_policy::node: return "node";
    case hytask::progress_policy::none: return "none";
    case hytask::progress_policy::workers: break;
  }
  return "workers";
}

void register_progress_policy(hytask::progress_policy p, progress_factory factory) noexcept {
  g_progress_factories[progress_index(p)].store(factory, std::memory_order_release);
}

std::unique_ptr<progress_policy_impl> make_progress_policy(comm_system& c) {
  const hytask::progress_policy p = c.config().progress;
  if (progress_factory f = g_progress_factories[progress_index(p)].load(std::memory_order_acquire))
    return f(c);
  throw usage_error(std::string("hytask: HYTASK_PROGRESS=") + progress_policy_name(p) +
                    ": the policy is not registered (the runtime registers every policy before "
                    "it initialises MPI)");
}

void register_comm_progress_policies() noexcept {
  register_progress_workers();
  register_progress_thread();
  register_progress_none();
}

}  // namespace hytask::mpi::detail
