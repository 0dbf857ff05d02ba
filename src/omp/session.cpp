// The session: checks that an OpenMP program's progress can work, then starts a runtime with
// no workers besides main that adopts the program's MPI, and joins the OMPT tool and the
// progress thread to its engine.
#include "hytask/omp/session.hpp"

#include <dlfcn.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "comm/comm.hpp"
#include "comm/progress_registry.hpp"
#include "platform/topology.hpp"
#include "hytask/errors.hpp"
#include "hytask/runtime.hpp"
#include "omp/layer.hpp"
#include "omp/session_progress.hpp"
#include "omp/task_priority.hpp"

namespace hytask::omp {

namespace {

std::atomic<bool> g_alive{false};

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

// The threads that compute: the OpenMP team's size, within the CPUs the process may use.
int compute_threads() {
  const int allowed = static_cast<int>(core::topology::get().pus);
  return std::max(1, std::min(omp_get_max_threads(), allowed));
}

}  // namespace

const char* openmp_runtime() noexcept {
  // libomp also exports GOMP_* entry points (for code compiled by GCC); libgomp has no __kmpc_*.
  if (dlsym(RTLD_DEFAULT, "__kmpc_fork_call") != nullptr) return "libomp";
  if (dlsym(RTLD_DEFAULT, "GOMP_parallel") != nullptr) return "libgomp";
  return "unknown";
}

struct session::impl {
  std::optional<hytask::runtime> rt;
  std::unique_ptr<detail::progress_thread> thread;
  progress_policy progress = progress_policy::thread;
  bool ompt = false;
  bool task_hooks = false;
  bool owns_mpi = false;

  void start(int* argc, char*** argv, const config& cfg);
  void stop() noexcept;
};

void session::impl::start(int* argc, char*** argv, const config& cfg) {
  if (omp_in_parallel())
    throw usage_error(
        "hytask::omp::session created inside an OpenMP parallel region: create it in main, "
        "before the parallel regions that use it");
  if (hytask::runtime::active())
    throw usage_error(
        "hytask::omp::session: a hytask::runtime is alive; an OpenMP program uses a session "
        "instead (it starts its own runtime, with no workers besides main): remove the runtime");
  settings s = settings::resolve(cfg);  // config_error on an invalid value
  if (cfg.mpi_mode.has_value() || std::getenv("HYTASK_MPI_MODE") != nullptr)
    if (s.mpi_mode != mpi_mode::multiple)
      throw usage_error(
          "hytask::omp::session needs HYTASK_MPI_MODE=multiple: OpenMP threads poll MPI at "
          "scheduling points and the program calls MPI from its tasks; unset the variable");
  if (s.mpi == mpi_use::off)
    throw usage_error("hytask::omp::session needs MPI, but HYTASK_MPI=off: unset it");
  // The session's own default: a thread, not hytask's workers policy (it has no workers).
  progress = cfg.progress.has_value() || std::getenv("HYTASK_PROGRESS") != nullptr
                 ? s.progress
                 : progress_policy::thread;

  (void)omp_get_max_threads();  // the OpenMP runtime is initialised (and has started its tool)
  ompt = s.ompt != ompt_use::off && detail::ompt_tool_running();
  if (s.ompt == ompt_use::on && !ompt)
    throw usage_error(std::string("hytask::omp::session: HYTASK_OMPT=on, but OMPT is ") +
                      detail::ompt_tool_state() + ": use Clang's libomp, or HYTASK_OMPT=auto");
  if (progress == progress_policy::none && !ompt)
    throw usage_error(std::string("hytask::omp::session: HYTASK_PROGRESS=none leaves the polling "
                                  "to OMPT callbacks, and OMPT is ") +
                      detail::ompt_tool_state() +
                      "; nothing would complete the requests: use HYTASK_PROGRESS=thread");

  int initialised = 0, finalised = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (finalised)
    throw usage_error("hytask::omp::session: MPI was finalised already; create the session "
                      "between MPI_Init_thread and MPI_Finalize");
  if (!initialised) {
    if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
      throw usage_error("hytask::omp::session: MPI_Init_thread failed");
    owns_mpi = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (owns_mpi) MPI_Finalize();
    owns_mpi = false;
    throw usage_error(
        std::string("hytask::omp::session needs MPI_THREAD_MULTIPLE: OpenMP threads and hytask's "
                    "progress thread poll MPI while the program's tasks call it; ") +
        (initialised ? "the program initialised MPI with " : "this MPI provides only ") +
        level_name(provided) +
        (initialised ? ": call MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) "
                       "(nothing else in the program needs to change)"
                     : ": use an MPI built with thread support"));
  }

  config rc = cfg;
  rc.threads = 1;  // OpenMP's threads own the cores; main is the runtime's only worker
  rc.mpi = mpi_use::on;
  rc.mpi_mode = mpi_mode::multiple;
  rc.progress = progress == progress_policy::thread ? progress_policy::none : progress;
  rc.pin = pin_policy::none;  // main is an OpenMP thread: OpenMP places it (OMP_PROC_BIND)
  try {
    rt.emplace(rc);
  } catch (...) {
    if (owns_mpi) MPI_Finalize();
    owns_mpi = false;
    throw;
  }
  mpi::detail::engine& e = mpi::detail::comm_system::instance()->eng();
  detail::layer& L = detail::the_layer();
  L.point_poll_ns = static_cast<std::int64_t>(rt->settings().ompt_poll_us) * 1000;
  L.poll_delay_ns = static_cast<std::int64_t>(rt->settings().omp_poll_delay_us) * 1000;
  L.ompt_polls.store(0);
  L.hook_polls.store(0);
  L.fulfilled.store(0);
  // libgomp: no OMPT, but its task entry point reaches hytask's (gomp_task_hook.cpp).
  task_hooks = !ompt && s.omp_task_hooks && std::strcmp(openmp_runtime(), "libgomp") == 0 &&
               detail::gomp_task_hooked();
  if (progress == progress_policy::thread) {
    thread = std::make_unique<detail::progress_thread>(
        e, static_cast<std::int64_t>(s.progress_min_us) * 1000,
        static_cast<std::int64_t>(s.progress_max_us) * 1000, ompt, task_hooks, compute_threads());
    L.thread.store(thread.get(), std::memory_order_release);
  }
  L.engine.store(&e, std::memory_order_release);
  if (ompt || task_hooks) L.point_engine.store(&e, std::memory_order_release);
  L.task_hooks.store(task_hooks, std::memory_order_release);
}

void session::impl::stop() noexcept {
  detail::layer& L = detail::the_layer();
  L.engine.store(nullptr, std::memory_order_release);
  L.task_hooks.store(false, std::memory_order_release);
  // No callback may use the engine or the thread once they go.
  L.point_engine.store(nullptr, std::memory_order_seq_cst);
  L.thread.store(nullptr, std::memory_order_seq_cst);
  while (L.users.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  // The thread polls the engine, which the runtime's shutdown destroys: it goes first. The
  // runtime then waits for every request still pending (MPI_Finalize needs it), polling
  // itself as it waits.
  thread.reset();
  try {
    if (rt) rt->shutdown();
  } catch (...) {
  }
  rt.reset();
  if (owns_mpi) MPI_Finalize();
  owns_mpi = false;
}

session::session(const config& cfg) : impl_(std::make_unique<impl>()) {
  if (g_alive.exchange(true))
    throw usage_error("hytask::omp::session: a session already exists; create exactly one, in main");
  try {
    impl_->start(nullptr, nullptr, cfg);
  } catch (...) {
    g_alive.store(false);
    throw;
  }
}

session::session(int& argc, char**& argv, const config& cfg) : impl_(std::make_unique<impl>()) {
  if (g_alive.exchange(true))
    throw usage_error("hytask::omp::session: a session already exists; create exactly one, in main");
  try {
    impl_->start(&argc, &argv, cfg);
  } catch (...) {
    g_alive.store(false);
    throw;
  }
}

session::~session() {
  if (omp_in_parallel())
    detail::fatal("hytask::omp::session destroyed inside an OpenMP parallel region: its threads "
                  "may still be in hytask's callbacks; end the session after the parallel regions");
  impl_->stop();
  g_alive.store(false);
}

session_stats session::stats() const {
  const detail::layer& L = detail::the_layer();
  session_stats out;
  out.ompt = impl_->ompt;
  out.ompt_state = impl_->ompt ? detail::ompt_tool_state()
                               : (detail::ompt_tool_running() ? "off: HYTASK_OMPT=off"
                                                              : detail::ompt_tool_state());
  out.progress = mpi::detail::progress_policy_name(impl_->progress);
  out.ompt_polls = L.ompt_polls.load(std::memory_order_relaxed);
  out.task_hooks = impl_->task_hooks;
  out.hook_polls = L.hook_polls.load(std::memory_order_relaxed);
  out.fulfilled = L.fulfilled.load(std::memory_order_relaxed);
  out.openmp_runtime = openmp_runtime();
  out.max_task_priority = omp_get_max_task_priority();
  out.task_priority = detail::task_priority_state();
  if (impl_->thread) {
    out.thread_polls = impl_->thread->polls();
    out.thread_aside = impl_->thread->aside();
    out.thread_cpu_ns = impl_->thread->cpu_ns();
  }
  return out;
}

bool session::active() noexcept { return g_alive.load(); }

}  // namespace hytask::omp
