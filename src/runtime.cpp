// The runtime object ties the layers together: it resolves the settings, starts the trace
// and the scheduler, and stops them in the reverse order.
#include "hytask/runtime.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "affinity_report.hpp"
#include "comm/comm.hpp"
#include "comm/message_rank.hpp"
#include "comm/progress_registry.hpp"
#include "core/face.hpp"
#include "platform/messages.hpp"
#include "platform/topology.hpp"
#include "fatal_errors.hpp"
#include "global/system.hpp"
#include "node/progress_node.hpp"
#include "runtime_settings.hpp"
#include "trace/merge.hpp"
#include "trace/paths.hpp"
#include "trace/trace.hpp"

namespace hytask {

struct runtime::impl {
  hytask::settings settings;
  std::unique_ptr<mpi::detail::comm_system> comm;
  bool tracing = false;
  bool stopped = false;
  void start(const config& cfg, int* argc, char*** argv);
};

namespace {

std::atomic<const hytask::settings*> g_settings{nullptr};

// Workers beyond a few per core only take turns on them: each task switch, wake-up and
// steal then costs a context switch (4096 workers on 2 cores ran 30 times slower than 512).
// Allowed — oversubscribed tests do it on purpose — but said once, on one rank.
constexpr unsigned threads_per_core_warned = 8;

void warn_about_threads(unsigned threads) {
  const unsigned cores = std::max(1u, core::topology::get().cores);
  if (threads <= threads_per_core_warned * cores) return;
  core::messagef_once_per_job(
      core::verbosity::warning,
      "HYTASK_THREADS=%u is more than %u times the %u core(s) this process may run on: the "
      "workers only take turns on them, and every task switch costs a context switch (expect "
      "it many times slower); use HYTASK_THREADS=auto (one per core) unless oversubscribing on "
      "purpose",
      threads, threads_per_core_warned, cores);
}

// HYTASK_VERBOSE=2 and 3: what the runtime set up, once per job and then per rank.
void describe_start(const hytask::settings& s, bool with_mpi, int size) {
  if (core::message_enabled(core::verbosity::info)) {
    std::string text = "runtime started: " + std::to_string(s.threads) + " worker(s) per process";
    if (with_mpi)
      text += ", " + std::to_string(size) + " rank(s), HYTASK_MPI_MODE=" +
              detail::knob_text(s, "HYTASK_MPI_MODE") +
              ", HYTASK_PROGRESS=" + detail::knob_text(s, "HYTASK_PROGRESS");
    text += ", HYTASK_PIN=" + detail::knob_text(s, "HYTASK_PIN");
    core::message_once_per_job(core::verbosity::info, text);
  }
  core::messagef(core::verbosity::debug, "pid %d, %s", static_cast<int>(getpid()),
                 core::topology::get().description.c_str());
}

}  // namespace

const hytask::settings* detail::runtime_settings() noexcept {
  return g_settings.load(std::memory_order_acquire);
}

void runtime::impl::start(const config& cfg, int* argc, char*** argv) {
  // An uncaught hytask exception prints its message and exits 1 instead of a core dump.
  hytask::detail::install_fatal_error_handler();
  mpi::detail::install_message_rank();  // messages carry the rank from here on
  if (core::scheduler_alive())
    throw usage_error(
        "hytask: a hytask::runtime already exists; create exactly one, in main, and keep it "
        "alive while tasks run");
  settings = settings::resolve(cfg);
  core::set_verbosity(static_cast<int>(settings.verbose));
  warn_about_threads(settings.threads);
  global::detail::configure(settings.phase_window, settings.global_am);
  // MPI first (a rank names the trace; funneled mode starts its MPI thread here), then the
  // trace, the workers, and the progress hooks that join them.
  const auto comm_settings = mpi::detail::comm_settings::from(settings);
  // The progress policies, comm's and the node layer's, by name (comm/progress_registry.hpp).
  mpi::detail::register_comm_progress_policies();
  node::register_progress_policy();
  if (mpi::detail::comm_system::wanted(comm_settings))
    comm = std::make_unique<mpi::detail::comm_system>(comm_settings, argc, argv);
  const int rank = comm ? comm->rank() : 0;
  const int size = comm ? comm->size() : 1;
  try {
    if (!settings.trace.empty()) {
      // Each rank its own timeline (trace/paths.hpp), on rank 0's clock when MPI aligned
      // them; the comm layer merges them as it finalises MPI.
      trace::start(trace::rank_path(settings.trace, rank, size), settings.trace_buffer, rank,
                   comm ? "hytask rank " + std::to_string(rank) : std::string("hytask"),
                   comm ? comm->trace_clock() : trace::clock_alignment{});
      tracing = true;
    }
    auto core_settings = core::core_settings::from(settings);
    if (comm) core_settings.crowded_node = comm->census().oversubscribed();
    if (comm) core::start_scheduler(core_settings, comm->progress_hooks());
    else core::start_scheduler(core_settings);
    if (comm) comm->start();
  } catch (...) {
    core::destroy_scheduler();
    comm.reset();
    if (tracing) trace::stop();
    throw;
  }
  // Before the program's first task: nothing reads it until a task runs.
  g_settings.store(&settings, std::memory_order_release);
  describe_start(settings, comm != nullptr, size);
  std::string node;  // the node's census, for the messages below
  if (comm) {
    const mpi::detail::node_census& c = comm->census();
    node = std::to_string(c.ranks) + " rank(s), " + std::to_string(c.threads) + " worker(s) on " +
           std::to_string(c.cpus) + " CPU(s)" +
           (c.oversubscribed() ? ": oversubscribed, idle workers sleep between polls" : "");
    if (c.oversubscribed())
      core::messagef_once_per_job(core::verbosity::info,
                                  "this node runs %s (HYTASK_THREADS sets the workers per rank)",
                                  node.c_str());
  }
  if (settings.display_affinity)
    hytask::detail::print_affinity_report(settings, comm != nullptr, rank, size, node);
}

runtime::runtime(int& argc, char**& argv) : impl_(std::make_unique<impl>()) {
  impl_->start(config{}, &argc, &argv);
}

runtime::runtime(const config& cfg) : impl_(std::make_unique<impl>()) {
  impl_->start(cfg, nullptr, nullptr);
}

void runtime::shutdown() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  std::exception_ptr error;
  try {
    // A job cancelled across ranks and not settled: drain what its cancelled tasks left, on
    // every rank, before anything waits for them (one small allreduce otherwise).
    if (impl_->comm) impl_->comm->jobs().at_shutdown();
  } catch (...) {
    error = std::current_exception();
  }
  try {
    // Global dependencies: a last collective wait_all, then their messages' communicator goes.
    global::detail::global_system::shutdown();
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  try {
    core::shutdown_scheduler();
  } catch (...) {
    if (!error) error = std::current_exception();
  }
  const bool had_comm = impl_->comm != nullptr;
  if (impl_->comm) impl_->comm->drain();  // MPI_Finalize needs every operation complete
  // The workers are joined; the comm layer's own threads (progress, MPI thread) may still be
  // inside the scheduler — e.g. finishing the wake-up of a task whose resumption let main
  // get here — so they stop before the scheduler goes.
  impl_->comm.reset();
  core::destroy_scheduler();
  g_settings.store(nullptr, std::memory_order_release);
  if (impl_->tracing) {
    trace::stop();  // with MPI, the comm layer stopped it and merged the ranks' timelines
    if (!had_comm && trace::merged(impl_->settings.trace, 1)) {
      // Without MPI, an OTF2 trace is this process's timeline converted.
      const std::string mine = trace::rank_path(impl_->settings.trace, 0, 1);
      try {
        trace::merge_files({mine}, trace::job_path(impl_->settings.trace));
        std::remove(mine.c_str());
      } catch (const std::exception& e) {
        core::message(core::verbosity::warning, e.what());
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

runtime::~runtime() {
  try {
    shutdown();
  } catch (const std::exception& e) {
    core::messagef(core::verbosity::error,
                   "a task threw an exception that no wait_all collected: %s\n"
                   "call hytask::wait_all() or runtime::shutdown() to handle it.",
                   e.what());
    std::terminate();
  } catch (...) {
    core::message(core::verbosity::error,
                  "a task threw a non-standard exception that no wait_all collected.\n"
                  "call hytask::wait_all() or runtime::shutdown() to handle it.");
    std::terminate();
  }
}

const hytask::settings& runtime::settings() const noexcept { return impl_->settings; }

bool runtime::active() noexcept { return core::scheduler_alive(); }

}  // namespace hytask
