// comm_system's life: whether the runtime wants MPI, MPI initialised or adopted (phase 1,
// before the scheduler), the progress thread and the watchdog started (phase 2), and at the
// end the threads stopped and MPI finalised if this runtime initialised it.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "platform/messages.hpp"
#include "comm/cancel.hpp"
#include "comm/channels.hpp"
#include "comm/clock_exchange.hpp"
#include "comm/comm.hpp"
#include "comm/error_handler.hpp"
#include "comm/message_rank.hpp"
#include "comm/node_census.hpp"
#include "comm/progress_registry.hpp"
#include "comm/trace_gather.hpp"
#include "core/face.hpp"
#include "hytask/errors.hpp"
#include "platform/thread_name.hpp"
#include "platform/topology.hpp"

namespace hytask::mpi::detail {

comm_system* comm_system::instance_ = nullptr;

namespace {
// Set when a runtime that initialised MPI finalised it: MPI cannot be initialised again, and
// a later runtime's message says which runtime did it.
std::atomic<bool> g_runtime_finalised_mpi{false};
std::atomic<bool> g_program_calls_mpi{false};  // note_program_calls_mpi
}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                        "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

void note_program_calls_mpi() noexcept { g_program_calls_mpi.store(true); }

bool comm_system::wanted(const comm_settings& s) {
  if (s.mpi == mpi_use::on) return true;
  if (s.mpi == mpi_use::off) return false;
  int initialised = 0;
  MPI_Initialized(&initialised);
  return initialised != 0 || launched_by_mpi() || g_program_calls_mpi.load();
}

comm_system::comm_system(const comm_settings& s, int* argc, char*** argv) : settings_(s) {
  if (instance_ != nullptr)
    throw usage_error("hytask: the MPI layer is already initialised (a second runtime?)");
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized && g_runtime_finalised_mpi.load())
      throw usage_error(
          "hytask: a second hytask::runtime under MPI: the first one initialised MPI and "
          "finalised it at its end, and MPI cannot be initialised twice. Keep one runtime for "
          "the whole program (its scope in main), or initialise MPI yourself "
          "(MPI_Init_thread; MPI_THREAD_MULTIPLE suits every mode) before the first runtime and call "
          "MPI_Finalize after the last: a runtime leaves MPI it did not initialise running");
    if (finalized)
      throw usage_error(
          "hytask: MPI was already finalised when the runtime started (the program called "
          "MPI_Finalize); create the runtime before MPI_Finalize (or let the runtime "
          "initialise and finalise MPI)");
  }

  const access_port port{engine_, commands_, word_, &comm_system::run_commands_entry, this,
                         static_cast<std::int64_t>(settings_.spin_us) * 1000};
  access_ = mpi_access::make(settings_.mpi_mode, port);
  policy_ = make_progress_policy(*this);
  // On this thread, or on the MPI thread that the access mode starts for it, which then runs
  // the thread loop (funneled).
  thread_ = access_->initialise_mpi([this, argc, argv] { initialise(argc, argv); },
                                    [this] { thread_main(true); });
  install_channel_state_release();
  install_cancel_hook();
  instance_ = this;
}

void comm_system::initialise(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  int provided = MPI_THREAD_SINGLE;
  if (!initialised) {
    int rc = MPI_Init_thread(argc, argv, access_->level_needed(), &provided);
    if (rc != MPI_SUCCESS)
      throw usage_error("hytask: MPI_Init_thread failed (error " + std::to_string(rc) + ")");
    owns_mpi_ = true;
  } else {
    MPI_Query_thread(&provided);
  }
  auto fail = [&](const std::string& why) {
    if (owns_mpi_) MPI_Finalize();
    owns_mpi_ = false;
    throw usage_error(why);
  };
  if (std::string why = access_->accept(initialised != 0, provided); !why.empty()) fail(why);
  forward_predefined_errors();
  if (MPI_Comm_dup(MPI_COMM_WORLD, &world_) != MPI_SUCCESS)
    fail("hytask: MPI_Comm_dup(MPI_COMM_WORLD) failed");
  MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(world_, &rank_);
  MPI_Comm_size(world_, &size_);
  note_message_rank(rank_);
  try {
    // Before anything is traced: the ranks' trace clocks on rank 0's.
    if (!settings_.trace.empty() && size_ > 1) trace_clock_ = align_clocks(world_);
    policy_->mpi_ready(world_);
    jobs_.initialise(world_);
    census_ = take_node_census(world_, settings_.threads);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (std::atomic<std::uint32_t>* w = policy_->shared_word()) word_.use_shared(w);
}

void comm_system::start() {
  if (settings_.mpi_mode == hytask::mpi_mode::multiple && policy_->wants_thread())
    thread_ = std::thread([this] {
      core::name_this_thread("hytask-progress");
      core::leave_main_core();
      thread_main(false);
    });
  if (settings_.watchdog_s > 0)
    watchdog_ = std::thread([this] {
      core::name_this_thread("hytask-watchdog");
      core::leave_main_core();
      watchdog_main();
    });
  started_.store(true, std::memory_order_release);
  wake_thread();
}

comm_system::~comm_system() {
  stopping_.store(true, std::memory_order_release);
  policy_->stopping();
  stop_watchdog();
  if (thread_.joinable()) {
    wake_thread();
    thread_.join();  // the MPI thread finalises on its way out
  }
  if (!access_->has_mpi_thread()) finalise();
  uninstall_cancel_hook();
  instance_ = nullptr;
}

void comm_system::finalise() {
  // The last events are recorded (the workers and this layer's threads have stopped): the
  // ranks' timelines become the job's.
  if (!settings_.trace.empty() && world_ != MPI_COMM_NULL) {
    try {
      finish_job_trace(world_, settings_.trace, trace_clock_);
    } catch (const std::exception& e) {
      core::message(core::verbosity::warning, e.what());
    }
  }
  jobs_.finalise();
  if (world_ != MPI_COMM_NULL) {
    MPI_Comm_free(&world_);
    restore_predefined_errors();
  }
  if (owns_mpi_) {
    MPI_Finalize();
    owns_mpi_ = false;
    g_runtime_finalised_mpi.store(true);
  }
}

}  // namespace hytask::mpi::detail
