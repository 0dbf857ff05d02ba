#include "comm/comm.hpp"

#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "comm/cancel.hpp"
#include "comm/channels.hpp"
#include "comm/error_handler.hpp"
#include "comm/stall_watch.hpp"
#include "core/layer.hpp"
#include "platform/clock.hpp"
#include "platform/cpu.hpp"
#include "platform/futex.hpp"
#include "platform/cpu_wait.hpp"
#include "platform/stderr_drain.hpp"
#include "platform/thread_name.hpp"
#include "platform/topology.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/errors.hpp"
#include "trace/trace.hpp"

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

// ---- initialisation ------------------------------------------------------------------

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

  access_ = mpi_access::make(settings_.mpi_mode, *this);
  policy_ = make_progress_policy(*this);
  if (access_->has_mpi_thread()) {
    // The MPI thread initialises MPI, so that MPI's "main thread" is the one calling it; or,
    // when the program initialised MPI (SERIALIZED or MULTIPLE, checked in initialise()), it
    // adopts it: either way it is the only hytask thread that calls MPI.
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    thread_ = std::thread([this, argc, argv, &m, &cv, &ready] {
      core::name_this_thread("hytask-mpi");
      core::leave_main_core();
      try {
        initialise(argc, argv);
      } catch (const std::exception& e) {
        init_error_ = e.what();
      }
      {
        // Notify under the lock: once it is released the constructor may return and
        // destroy m and cv.
        std::lock_guard<std::mutex> lock(m);
        ready = true;
        cv.notify_one();
      }
      if (init_error_.empty()) thread_main(true);
    });
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return ready; });
    if (!init_error_.empty()) {
      thread_.join();
      throw usage_error(init_error_);
    }
  } else {
    initialise(argc, argv);
  }
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
  try {
    policy_->mpi_ready(world_);
    jobs_.initialise(world_);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (std::atomic<std::uint32_t>* w = policy_->shared_word()) {
    word_ = w;
    shared_word_ = true;
  }
}

core::progress_hooks comm_system::progress_hooks() {
  core::progress_hooks h;
  h.poll = &comm_system::hook_entry;
  h.has_pending = &comm_system::has_pending_entry;
  h.ctx = this;
  // Under every policy an idle worker polls (or asks the MPI-owning thread to): it is a
  // free core. The policies differ in what happens while every worker is busy.
  h.every = policy_->busy_every();
  h.every_ns = policy_->busy_every_ns();
  return h;
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

void comm_system::wake_thread() noexcept {
  word_->fetch_add(1, std::memory_order_release);
  core::futex_wake(*word_, 1, shared_word_);
}

// ---- who may call MPI ----------------------------------------------------------------

namespace {

// Whether to test an operation right after posting it, learnt per thread from how often
// that test found it complete: an average of the outcomes (fixed point, 1024 = always),
// updated only when a test is made. Tests are made while at least a quarter succeed, and
// otherwise on one post in 16, to notice when they would pay again.
struct post_test_advice {
  std::uint32_t score = 1024;
  std::uint32_t tick = 0;
  bool advise() noexcept { return score >= 256 || (++tick & 15) == 0; }
  void learn(bool complete) noexcept { score = score - score / 16 + (complete ? 64 : 0); }
};
thread_local post_test_advice t_post_test;

}  // namespace

void comm_system::post_here(operation* op) {
  posts_.fetch_add(1, std::memory_order_relaxed);
  if (trace::enabled()) {
    op->posted_ns = trace::now();
    trace::instant(op_name(op), "mpi", op->posted_ns, op->task_id,
                   {"peer", op->peer}, {"bytes", static_cast<std::int64_t>(op->bytes)});
  }
  // Post, then test once: eager sends, receives whose message is already in, and probes
  // that find one are complete at once, which spares them the registry and a suspension.
  // A test that finds an operation still in flight is not free, though: MPI runs its
  // progress engine, a system call over TCP (2.3-2.5 us added to each small exchange on the
  // cluster in a box, issue 16). So sends are always tested, other operations only while
  // the test has paid off recently (see post_test_advice).
  calling_mpi guard;
  if (cancellable(op)) {
    // Its task was cancelled before the operation could be posted (queued for this thread:
    // the waiter is alive, only this thread completes operations), or the job was; or it is
    // a cancelled task's wait, submitted interrupted (intercept/posted.cpp).
    hytask::detail::task* t = op->waiter.load(std::memory_order_seq_cst);
    if (op->cancel_requested.load(std::memory_order_acquire) ||
        (!op->internal && (core::job_cancelled() || (t != nullptr && task_is_cancelled(t))))) {
      if (op->what != kind::polled) {
        complete_cancelled(op);
        return;
      }
      // A wait on the program's requests, which must complete: its hook cancels what MPI
      // can, and it is tested (drained) as usual.
      op->cancel_requested.store(true, std::memory_order_release);
      interrupt_polled(op);
    }
  }
  if (op->comm != world_) forward_errors(op->comm);
  int flag = 0;
  MPI_Status st{};
  int rc = MPI_SUCCESS;
  if (op->what == kind::probe) {
    rc = MPI_Iprobe(op->peer, op->tag, op->comm, &flag, &st);
  } else if (op->what == kind::polled) {
    rc = op->test(op->call_arg, &flag, &st);
  } else if (op->what == kind::call) {
    rc = post_now(op);  // blocking: done as it returns
    flag = 1;
  } else {
    rc = post_now(op);
    if (rc == MPI_SUCCESS) {
      op->state.store(op_posted, std::memory_order_release);
      const bool send = op->what == kind::send;
      if (send || t_post_test.advise()) {
        rc = MPI_Test(&op->req, &flag, &st);
        if (!send) t_post_test.learn(flag != 0);
      }
    }
  }
  if (rc != MPI_SUCCESS || flag) {
    complete(op, rc == MPI_SUCCESS ? &st : nullptr, rc);
    return;
  }
  op->state.store(op_posted, std::memory_order_release);
  engine_.add(op);
  // Asked to cancel while it was being posted (a scan found it neither queued nor pending).
  if (op->cancel_requested.load(std::memory_order_seq_cst)) engine_.request_cancel(op);
  // Someone must poll it: idle workers do (or ask the MPI thread to, funneled), and a worker
  // may have gone to sleep while the operation was neither queued nor registered yet, so
  // sleepers are woken even when the poster is not a worker. Then the progress policy.
  if (access_->workers_poll())
    core::wake_for_progress();
  policy_->registered();
}

void comm_system::submit(operation* op, bool internal) {
  jobs_.before_submit();  // comm/job_cancel.hpp
  op->internal = internal;
  const bool worker = !internal && core::on_worker();
  core::task* me = worker ? core::current_task() : nullptr;
  if (!internal) jobs_.note_comm(op->comm);
  // While the job is cancelled main posts nothing either (comm/job_cancel.hpp).
  if (worker && me == nullptr && core::job_cancelled()) throw_cancelled(op);
  if (me != nullptr) {
    // A cancelled task starts nothing that may never complete (comm/cancel.hpp).
    if (task_is_cancelled(me)) throw_cancelled(op);
    op->task_name = me->name;
    op->task_id = core::id_of(me);
    check_post_order(op, settings_.order_check, rank_);
    // Tasks of this type communicate: later ones start in the communication class.
    if (!(me->flags & hytask::detail::flag_internal)) core::learn_comm(me);
  }
  if (may_call_mpi()) {
    post_here(op);
    return;
  }
  op->refs.fetch_add(1, std::memory_order_relaxed);  // held by the command queue
  {
    std::lock_guard<std::mutex> lock(commands_mutex_);
    commands_.push_back(op);
  }
  has_commands_.store(true, std::memory_order_release);
  nudge();
}

void comm_system::run_commands() {
  if (!has_commands_.load(std::memory_order_acquire)) return;
  std::vector<operation*> batch;
  {
    std::lock_guard<std::mutex> lock(commands_mutex_);
    batch.swap(commands_);
    has_commands_.store(false, std::memory_order_release);
  }
  for (operation* op : batch) {
    post_here(op);
    release(op);
  }
}

// ---- waiting ---------------------------------------------------------------------------

void comm_system::wait(operation* op) {
  if (op->state.load(std::memory_order_acquire) == op_complete) return;
  if (core::on_main_outside_tasks()) {
    op->done.wait();  // main: runs other tasks (and, through the hook, polls) meanwhile
    return;
  }
  if (core::task* me = core::current_task()) {
    // A task suspends; it is resumed in the communication class when HYTASK_COMM_PRIORITY=1.
    struct node : hytask::detail::event_waiter {
      operation* op;
      hytask::detail::task* t;
      bool high;
    } n;
    n.op = op;
    n.high = settings_.comm_priority;
    // A cancellation interrupts it (comm/cancel.hpp): a receive is cancelled, a send drained.
    watch_cancellation(op, me);
    core::suspend(
        [](hytask::detail::task* t, void* arg) {
          auto* self = static_cast<node*>(arg);
          self->t = t;
          self->fire = [](hytask::detail::event_waiter* e) {
            auto* me = static_cast<node*>(e);
            core::resume(me->t, me->high);
          };
          self->op->done.add_waiter(self);
        },
        &n);
    return;
  }
  // A thread that is not a worker.
  std::int64_t backoff_ns = 1000;
  while (op->state.load(std::memory_order_acquire) != op_complete) {
    if (may_call_mpi()) {
      run_commands();
      if (engine_.poll() == core::poll_result::progressed) {
        backoff_ns = 1000;
        continue;
      }
    } else {
      nudge();
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(backoff_ns));
    backoff_ns = std::min<std::int64_t>(2 * backoff_ns, 1000000);
  }
}

bool comm_system::test(operation* op) {
  if (op->state.load(std::memory_order_acquire) == op_complete) return true;
  if (may_call_mpi()) {
    run_commands();
    engine_.poll();
  } else {
    nudge();
  }
  return op->state.load(std::memory_order_acquire) == op_complete;
}

// ---- progress --------------------------------------------------------------------------

core::poll_result comm_system::hook_entry(void* self, unsigned worker, bool idle) {
  return static_cast<comm_system*>(self)->access_->worker_poll(worker, idle);
}

bool comm_system::has_pending_entry(void* self, unsigned worker) {
  return static_cast<comm_system*>(self)->access_->worker_has_pending(worker);
}

void comm_system::thread_main(bool is_mpi_thread) {
  // The funneled MPI thread exists before the trace and the workers: it idles until start()
  // (nothing can be submitted before), so that it sees both set up.
  for (;;) {
    const std::uint32_t seen = word_->load(std::memory_order_acquire);
    if (started_.load(std::memory_order_acquire) || stopping_.load(std::memory_order_acquire)) break;
    core::futex_wait(*word_, seen, -1, shared_word_);
  }
  if (trace::enabled()) trace::set_thread(1000, is_mpi_thread ? "MPI thread" : "progress thread");
  core::set_timer_slack(policy_->timer_slack_ns());
  const std::int64_t spin_ns = static_cast<std::int64_t>(settings_.spin_us) * 1000;
  std::int64_t serving_since = -1;  // serving idle workers: since the last completion
  for (;;) {
    const std::uint32_t seen = word_->load(std::memory_order_acquire);
    // The request is taken before the commands are run: a poster queues its command, then
    // asks, and wakes this thread only if no request was pending. Taken after them, a
    // request left by an earlier nudge could swallow the wake-up of a command queued between
    // the two, and this thread would sleep with it queued (a hang seen in CI, one run in a
    // few hundred under load).
    const bool asked = poll_requested_.exchange(false, std::memory_order_acq_rel);
    if (is_mpi_thread) run_commands();
    if (is_mpi_thread && serves_idle_workers()) {
      // A worker idles while operations are pending: it cannot poll (access.cpp) and
      // sleeps, so this thread polls for it as an idle worker would in multiple mode: back
      // to back for HYTASK_SPIN_US after the last completion, then yielding the core between
      // polls; and it yields right after a completion, which may have woken that worker.
      // The policy's own schedule resumes once every worker is busy or nothing is pending.
      const core::poll_result r = engine_.poll();
      const std::int64_t now = core::now_ns();
      if (r == core::poll_result::progressed || serving_since < 0) serving_since = now;
      if (r != core::poll_result::progressed && now - serving_since < spin_ns) {
        for (int i = 0; i < 16; ++i) core::cpu_relax();
      } else {
        std::this_thread::yield();
      }
      continue;
    }
    serving_since = -1;
    long timeout = policy_->round(asked);
    if (stopping_.load(std::memory_order_acquire) && !has_work()) break;
    if (stopping_.load(std::memory_order_acquire)) timeout = 1000000;  // draining: keep polling
    if (timeout < 0) {
      // Parked until an operation is registered: announce it, then look again (against the
      // poster's register-then-look, no registration is missed).
      thread_parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() != 0) timeout = policy_->park_timeout();
    }
    if (word_->load(std::memory_order_acquire) == seen)
      core::futex_wait(*word_, seen, timeout, shared_word_);
    thread_parked_.store(false, std::memory_order_relaxed);
    policy_->woke();
  }
  if (is_mpi_thread) finalise();
}

bool comm_system::serves_idle_workers() const {
  if (!has_work()) return false;
  return core::any_worker_idle();
}

void comm_system::drain() {
  // Every operation must complete before MPI_Finalize. Pending ones are normally sends whose
  // requests the program dropped, or collectives other ranks have not reached yet.
  const std::int64_t start = core::now_ns();
  bool warned = false;
  while (engine_.pending() != 0 || has_commands_.load(std::memory_order_acquire)) {
    if (may_call_mpi()) {
      run_commands();
      engine_.poll();
    } else {
      nudge();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (!warned && core::now_ns() - start > 10'000'000'000LL) {
      std::fprintf(stderr,
                   "hytask: rank %d: %zu MPI operation(s) still pending at shutdown; waiting for "
                   "them before MPI_Finalize (HYTASK_WATCHDOG_S makes hytask abort instead of "
                   "waiting forever)\n",
                   rank_, engine_.pending());
      warned = true;
    }
  }
  stop_watchdog();  // it reads the scheduler, which the runtime destroys next
}

void comm_system::stop_watchdog() {
  watchdog_stop_.store(true, std::memory_order_release);
  watchdog_word_.fetch_add(1, std::memory_order_release);
  core::futex_wake(watchdog_word_, 1);
  if (watchdog_.joinable()) watchdog_.join();
}

comm_system::~comm_system() {
  stopping_.store(true, std::memory_order_release);
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

// ---- watchdog --------------------------------------------------------------------------

void comm_system::watchdog_main() {
  const std::int64_t limit = static_cast<std::int64_t>(settings_.watchdog_s) * 1'000'000'000LL;
  constexpr long look_ns = 100'000'000L;
  constexpr std::int64_t late_slack_ns = 20'000'000;  // timer slack and wake-up, not starvation
  stall_watch watch(limit, core::now_ns());
  std::uint64_t last_progress = 0;
  std::int64_t unrun = 0;             // the looks' total lateness: time the rank did not run
  std::int64_t delay_at = -1;         // the process's run-queue delay when the stall began
  std::uint64_t polls_at = 0;         // its polls then
  std::int64_t last_look = -1;  // the watchdog's word changes only at stop: every wait times out
  while (!watchdog_stop_.load(std::memory_order_acquire)) {
    const std::uint32_t seen = watchdog_word_.load(std::memory_order_acquire);
    const std::int64_t now = core::now_ns();
    if (last_look >= 0) unrun += std::max<std::int64_t>(0, now - last_look - look_ns - late_slack_ns);
    const std::uint64_t progress =
        core::tasks_started() + engine_.completions() + posts_.load(std::memory_order_relaxed);
    const bool busy = engine_.pending() != 0 || core::tasks_in_flight() > 0 ||
                      has_commands_.load(std::memory_order_acquire);
    // A worker running a task (or main running the program's code) is progress, however
    // long it computes: only a rank whose workers all idle can be stuck.
    const bool progressed = progress != last_progress || !busy || core::any_worker_busy();
    last_progress = progress;
    const bool was_stalled = watch.stalled();
    const stall_watch::verdict v = watch.look(progressed, now, unrun);
    if (!was_stalled && watch.stalled()) {  // for the report, should this become a hang
      delay_at = core::process_run_delay_ns();
      polls_at = engine_.polls();
    }
    if (v == stall_watch::verdict::starved) {
      std::fprintf(stderr,
                   "hytask watchdog: rank %d: nothing has progressed for %.1f s, but this "
                   "rank did not run for %.1f s of it (stopped, or kept off the CPUs by other "
                   "threads): not counted as a hang (watching again, %d of %d)\n",
                   rank_, static_cast<double>(watch.window_ns()) * 1e-9,
                   static_cast<double>(watch.unrun_ns()) * 1e-9, watch.extensions(),
                   watch.max_extensions());
      std::fflush(stderr);
    } else if (v == stall_watch::verdict::hung) {
      std::string report;
      std::size_t n = 0;
      engine_.for_each_pending([&](operation* op) {
        if (op->passive) return;  // the notice receive of job cancellation: never a hang
        ++n;
        report += "  " + describe(op) + "\n";
      });
      if (core::job_cancelled())
        report += "  (the job is cancelled: every rank must call hytask::mpi::cancel_collective(), "
                  "which drains what cancelled tasks left; a task suspended in a collective "
                  "that other ranks' cancelled tasks never posted cannot be interrupted)\n";
      {
        // Operations waiting for the thread that may call MPI (funneled, masteronly).
        std::lock_guard<std::mutex> lock(commands_mutex_);
        for (operation* op : commands_) {
          ++n;
          report += "  " + describe(op) + " (queued, not yet posted: waiting for the thread "
                    "that calls MPI)\n";
        }
      }
      // How much this rank and the node waited for CPUs: on an oversubscribed node a rank
      // may wait for a peer that does not get to run.
      char cpu[512];
      const std::int64_t delay = delay_at < 0 ? -1 : core::process_run_delay_ns();
      const double pressure = core::node_cpu_pressure_pct();
      int len = std::snprintf(cpu, sizeof cpu,
                              "hytask watchdog: rank %d: since the stall began it polled %" PRIu64
                              " times",
                              rank_, engine_.polls() - polls_at);
      if (delay >= 0 && len > 0 && len < static_cast<int>(sizeof cpu))
        len += std::snprintf(cpu + len, sizeof cpu - len,
                             ", its threads waited %.1f s in all for a CPU",
                             static_cast<double>(std::max<std::int64_t>(0, delay - delay_at)) * 1e-9);
      if (pressure >= 0 && len > 0 && len < static_cast<int>(sizeof cpu))
        len += std::snprintf(cpu + len, sizeof cpu - len,
                             "; some thread of the node waited for a CPU %.0f %% of the last 10 s",
                             pressure);
      if (watch.extensions() > 0 && len > 0 && len < static_cast<int>(sizeof cpu))
        len += std::snprintf(cpu + len, sizeof cpu - len,
                             "; %.1f s before that were not counted (the rank did not run)",
                             static_cast<double>(watch.starved_ns()) * 1e-9);
      if (len > 0 && len < static_cast<int>(sizeof cpu) - 1) std::strcat(cpu, "\n");
      std::fprintf(stderr,
                   "hytask watchdog: rank %d: nothing has progressed for %u s (no task started "
                   "or finished, no MPI operation completed); %zu MPI operation(s) pending, "
                   "%" PRId64 " task(s) in flight:\n%s%s"
                   "hytask watchdog: rank %d: aborting the job (HYTASK_WATCHDOG_S=%u)\n",
                   rank_, settings_.watchdog_s, n, core::tasks_in_flight(), report.c_str(), cpu,
                   rank_, settings_.watchdog_s);
      std::fflush(stderr);
      core::wait_until_stderr_read();
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::abort();
    }
    last_look = core::now_ns();
    core::futex_wait(watchdog_word_, seen, look_ns);
  }
}

namespace {
const char* progress_policy_name(progress_policy p) {
  switch (p) {
    case progress_policy::thread: return "thread";
    case progress_policy::node: return "node";
    case progress_policy::none: return "none";
    case progress_policy::workers: break;
  }
  return "workers";
}
}  // namespace

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

// ---- the progress policies (one file each: progress_<policy>.cpp) ---------------------

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
