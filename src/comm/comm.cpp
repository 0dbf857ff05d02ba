#include "comm/comm.hpp"

#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "comm/channels.hpp"
#include "comm/error_handler.hpp"
#include "core/futex.hpp"
#include "core/scheduler.hpp"
#include "hytask/comm/error.hpp"
#include "hytask/errors.hpp"
#include "trace/trace.hpp"

namespace hytask::mpi::detail {

comm_system* comm_system::instance_ = nullptr;

namespace {

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown thread level";
  }
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK",
                        "MPI_LOCALNRANKS", "HYDRA_CONTROL_FD"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

bool comm_system::wanted(const settings& s) {
  if (s.mpi == mpi_use::on) return true;
  if (s.mpi == mpi_use::off) return false;
  int initialised = 0;
  MPI_Initialized(&initialised);
  return initialised != 0 || launched_by_mpi();
}

// ---- initialisation ------------------------------------------------------------------

comm_system::comm_system(const settings& s, int* argc, char*** argv) : settings_(s) {
  if (instance_ != nullptr)
    throw usage_error("hytask: the MPI layer is already initialised (a second runtime?)");
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      throw usage_error(
          "hytask: MPI was already finalised when the runtime started; create the runtime "
          "before MPI_Finalize (or let the runtime initialise and finalise MPI)");
  }

  if (settings_.mpi_mode == hytask::mpi_mode::funneled) {
    // The MPI thread initialises MPI, so that MPI's "main thread" is the one calling it; or,
    // when the program initialised MPI (SERIALIZED or MULTIPLE, checked in initialise()), it
    // adopts it: either way it is the only hytask thread that calls MPI.
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    thread_ = std::thread([this, argc, argv, &m, &cv, &ready] {
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
  instance_ = this;
}

void comm_system::initialise(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  const int needed = settings_.mpi_mode == hytask::mpi_mode::multiple ? MPI_THREAD_MULTIPLE
                                                                      : MPI_THREAD_FUNNELED;
  int provided = MPI_THREAD_SINGLE;
  if (!initialised) {
    int rc = MPI_Init_thread(argc, argv, needed, &provided);
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
  switch (settings_.mpi_mode) {
    case hytask::mpi_mode::multiple:
      if (provided < MPI_THREAD_MULTIPLE)
        fail(std::string("HYTASK_MPI_MODE=multiple needs MPI_THREAD_MULTIPLE, but this MPI ") +
             (initialised ? "was initialised with " : "provides only ") + level_name(provided) +
             ": use HYTASK_MPI_MODE=funneled (one hytask thread makes every MPI call" +
             (initialised ? ", which needs hytask to initialise MPI or MPI_THREAD_SERIALIZED"
                          : "") +
             ") or HYTASK_MPI_MODE=masteronly");
      break;
    case hytask::mpi_mode::funneled:
      if (initialised && provided < MPI_THREAD_SERIALIZED)
        fail(std::string("HYTASK_MPI_MODE=funneled makes MPI calls from a hytask thread, but the "
                         "program initialised MPI with ") +
             level_name(provided) +
             ", which allows only its own main thread to call MPI: let hytask::runtime "
             "initialise MPI, initialise it with MPI_THREAD_SERIALIZED or MULTIPLE, or use "
             "HYTASK_MPI_MODE=masteronly");
      if (!initialised && provided < MPI_THREAD_FUNNELED)
        fail(std::string("HYTASK_MPI_MODE=funneled needs MPI_THREAD_FUNNELED, but this MPI "
                         "provides only ") +
             level_name(provided) + ": use HYTASK_MPI_MODE=masteronly");
      mpi_thread_id_ = std::this_thread::get_id();
      break;
    case hytask::mpi_mode::masteronly: {
      if (provided < MPI_THREAD_FUNNELED)
        fail(std::string("HYTASK_MPI_MODE=masteronly needs MPI_THREAD_FUNNELED (MPI calls from "
                         "main while other threads exist), but this MPI provides only ") +
             level_name(provided));
      int is_main = 0;
      MPI_Is_thread_main(&is_main);
      if (!is_main)
        fail("HYTASK_MPI_MODE=masteronly: the thread creating hytask::runtime is not the one "
             "that initialised MPI; create the runtime on that thread");
      mpi_thread_id_ = std::this_thread::get_id();
      break;
    }
  }
  forward_predefined_errors();
  if (MPI_Comm_dup(MPI_COMM_WORLD, &world_) != MPI_SUCCESS)
    fail("hytask: MPI_Comm_dup(MPI_COMM_WORLD) failed");
  MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(world_, &rank_);
  MPI_Comm_size(world_, &size_);
}

core::progress_hooks comm_system::progress_hooks() {
  core::progress_hooks h;
  h.poll = &comm_system::hook_entry;
  h.has_pending = &comm_system::has_pending_entry;
  h.ctx = this;
  // Under every policy an idle worker polls (or asks the MPI-owning thread to): it is a
  // free core. The policies differ in what happens while every worker is busy.
  const bool workers = settings_.progress == progress_policy::workers;
  h.every = workers ? settings_.poll_every : 0;
  h.every_ns = workers ? static_cast<std::int64_t>(settings_.poll_us) * 1000 : 0;
  return h;
}

bool comm_system::backstop() const noexcept {
  return settings_.progress == progress_policy::workers && settings_.backstop_us > 0 &&
         settings_.mpi_mode != hytask::mpi_mode::masteronly;
}

void comm_system::start() {
  const bool timer = settings_.progress == progress_policy::thread &&
                     settings_.mpi_mode != hytask::mpi_mode::masteronly;
  if (settings_.mpi_mode == hytask::mpi_mode::multiple && (timer || backstop()))
    thread_ = std::thread([this] { thread_main(false); });
  if (settings_.watchdog_s > 0) watchdog_ = std::thread([this] { watchdog_main(); });
  started_.store(true, std::memory_order_release);
  thread_word_.fetch_add(1, std::memory_order_release);
  core::futex_wake(thread_word_);
}

// ---- who may call MPI ----------------------------------------------------------------

bool comm_system::may_call_mpi() const {
  if (settings_.mpi_mode == hytask::mpi_mode::multiple) return true;
  return std::this_thread::get_id() == mpi_thread_id_;
}

void comm_system::post_here(operation* op) {
  posts_.fetch_add(1, std::memory_order_relaxed);
  if (trace::enabled()) {
    op->posted_ns = trace::now();
    trace::instant(mpi_call_name(op->what), "mpi", op->posted_ns, op->task_id,
                   {"peer", op->peer}, {"bytes", static_cast<std::int64_t>(op->bytes)});
  }
  // Post, then test once: eager messages (and probes that find a message) are often
  // complete at once, which spares them the registry and a suspension.
  calling_mpi guard;
  if (op->comm != world_) forward_errors(op->comm);
  int flag = 0;
  MPI_Status st{};
  int rc = MPI_SUCCESS;
  if (op->what == kind::probe) {
    rc = MPI_Iprobe(op->peer, op->tag, op->comm, &flag, &st);
  } else {
    rc = post_now(op);
    if (rc == MPI_SUCCESS) {
      op->state.store(op_posted, std::memory_order_release);
      rc = MPI_Test(&op->req, &flag, &st);
    }
  }
  if (rc != MPI_SUCCESS || flag) {
    complete(op, rc == MPI_SUCCESS ? &st : nullptr, rc);
    return;
  }
  op->state.store(op_posted, std::memory_order_release);
  engine_.add(op);
  // Someone must poll it: idle workers do (or ask the MPI thread to, funneled), and a worker
  // may have gone to sleep while the operation was neither queued nor registered yet, so
  // sleepers are woken even when the poster is not a worker. A progress thread that sleeps
  // because nothing was pending is woken too; one that sleeps a polling period is not (a
  // wake per message would cost a system call and a context switch each).
  if (settings_.mpi_mode != hytask::mpi_mode::masteronly)
    if (auto* s = core::scheduler::instance()) s->wake_for_progress();
  if ((settings_.progress == progress_policy::thread || backstop()) &&
      settings_.mpi_mode == hytask::mpi_mode::multiple &&
      thread_parked_.load(std::memory_order_seq_cst)) {
    thread_word_.fetch_add(1, std::memory_order_release);
    core::futex_wake(thread_word_);
  } else if (backstop()) {
    // A new operation may need its handshake soon: the backstop's next sleep is its shortest
    // period, and a backstop asleep for long is woken (at most once per 16 periods, see
    // thread_main).
    if (!backstop_reset_.load(std::memory_order_relaxed))
      backstop_reset_.store(true, std::memory_order_release);
    if (backstop_wakeable_.load(std::memory_order_relaxed) &&
        backstop_wakeable_.exchange(false, std::memory_order_acq_rel)) {
      thread_word_.fetch_add(1, std::memory_order_release);
      core::futex_wake(thread_word_);
    }
  }
}

void comm_system::submit(operation* op) {
  if (core::worker* w = core::current_worker(); w != nullptr && w->current_task != nullptr) {
    op->task_name = w->current_task->name;
    op->task_id = core::task_id(w, w->current_task);
    check_post_order(op, settings_.order_check, rank_);
    // Tasks of this type communicate: later ones start in the communication class.
    if (!(w->current_task->flags & hytask::detail::flag_internal))
      core::scheduler::instance()->learn_comm(w->current_task);
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

void comm_system::nudge() {
  if (settings_.mpi_mode == hytask::mpi_mode::funneled) {
    // A request still pending will be served: no second wake-up (idle workers nudge in a
    // loop while they wait).
    if (poll_requested_.exchange(true, std::memory_order_acq_rel)) return;
    thread_word_.fetch_add(1, std::memory_order_release);
    core::futex_wake(thread_word_);
  } else if (settings_.mpi_mode == hytask::mpi_mode::masteronly) {
    if (auto* s = core::scheduler::instance()) s->wake_worker(0);
  }
}

// ---- waiting ---------------------------------------------------------------------------

void comm_system::wait(operation* op) {
  if (op->state.load(std::memory_order_acquire) == op_complete) return;
  core::worker* w = core::current_worker();
  if (w != nullptr && w->current_task == nullptr) {
    op->done.wait();  // main: runs other tasks (and, through the hook, polls) meanwhile
    return;
  }
  if (w != nullptr) {
    // A task suspends; it is resumed in the communication class when HYTASK_COMM_PRIORITY=1.
    struct node : hytask::detail::event_waiter {
      operation* op;
      hytask::detail::task* t;
      bool high;
    } n;
    n.op = op;
    n.high = settings_.comm_priority;
    core::scheduler::instance()->suspend(
        [](hytask::detail::task* t, void* arg) {
          auto* self = static_cast<node*>(arg);
          self->t = t;
          self->fire = [](hytask::detail::event_waiter* e) {
            auto* me = static_cast<node*>(e);
            core::scheduler::instance()->resume(me->t, me->high);
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
      if (settings_.mpi_mode == hytask::mpi_mode::funneled ||
          settings_.mpi_mode == hytask::mpi_mode::masteronly)
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
    if (settings_.mpi_mode != hytask::mpi_mode::multiple) run_commands();
    engine_.poll();
  } else {
    nudge();
  }
  return op->state.load(std::memory_order_acquire) == op_complete;
}

// ---- progress --------------------------------------------------------------------------

core::poll_result comm_system::hook_entry(void* self, unsigned worker, bool idle) {
  return static_cast<comm_system*>(self)->hook(worker, idle);
}

bool comm_system::has_pending_entry(void* self, unsigned worker) {
  auto* c = static_cast<comm_system*>(self);
  if (c->settings_.mpi_mode == hytask::mpi_mode::masteronly && worker != 0) return false;
  return c->engine_.pending() != 0 || c->has_commands_.load(std::memory_order_acquire);
}

core::poll_result comm_system::hook(unsigned worker, bool idle) {
  switch (settings_.mpi_mode) {
    case hytask::mpi_mode::multiple:
      return engine_.poll();
    case hytask::mpi_mode::funneled:
      if (engine_.pending() == 0 && !has_commands_.load(std::memory_order_relaxed))
        return core::poll_result::nothing_pending;
      nudge();  // the MPI thread polls; this worker checks back later
      return idle ? core::poll_result::pending : core::poll_result::nothing_pending;
    case hytask::mpi_mode::masteronly: {
      if (worker != 0) return core::poll_result::nothing_pending;  // only main calls MPI
      // Main polls at its scheduling points only when it has nothing else to run, or every
      // HYTASK_POLL_EVERY task switches with the workers policy.
      const bool had = has_commands_.load(std::memory_order_acquire);
      run_commands();
      core::poll_result r = engine_.poll();
      return had && r != core::poll_result::nothing_pending ? core::poll_result::progressed : r;
    }
  }
  return core::poll_result::nothing_pending;
}

void comm_system::thread_main(bool is_mpi_thread) {
  // The funneled MPI thread exists before the trace and the workers: it idles until start()
  // (nothing can be submitted before), so that it sees both set up.
  for (;;) {
    const std::uint32_t seen = thread_word_.load(std::memory_order_acquire);
    if (started_.load(std::memory_order_acquire) || stopping_.load(std::memory_order_acquire)) break;
    core::futex_wait(thread_word_, seen, -1);
  }
  if (trace::enabled()) trace::set_thread(1000, is_mpi_thread ? "MPI thread" : "progress thread");
  const bool timer = settings_.progress == progress_policy::thread;
  // Its sleeps are polling periods. The backstop's need no precision: a slack of half the
  // period lets the kernel fold its wake-ups into timer interrupts that happen anyway.
  core::set_timer_slack(timer || !backstop() ? core::poll_timer_slack_ns
                                              : settings_.backstop_us * 500ul);
  const std::int64_t min_wait = static_cast<std::int64_t>(settings_.progress_min_us) * 1000;
  const std::int64_t max_wait = static_cast<std::int64_t>(settings_.progress_max_us) * 1000;
  std::int64_t wait = min_wait;
  // The backstop (HYTASK_PROGRESS=workers): while operations are pending, look every period;
  // poll only when nobody polled since the last look (every worker is inside a long task).
  // A wake costs the core's compute 20-50 us on a virtual machine (measured: a thread waking
  // every 500 us slowed the compute beside it by 10 %), so:
  //   - while the workers poll (the look was not needed), the period doubles, up to 16x;
  //   - while its own polls complete nothing (a receive waiting for a message not sent yet)
  //     it doubles up to 4x only: a large transfer over TCP moves only when polled and
  //     completes nothing until its end (16x took an 8 MiB transfer beside 10 ms tasks from
  //     55-87 % overlap to 31 %);
  //   - a poll that completes something, or one after a new operation, brings it back to
  //     HYTASK_BACKSTOP_US.
  const bool backstop_on = backstop();
  const std::int64_t backstop_ns = static_cast<std::int64_t>(settings_.backstop_us) * 1000;
  const std::int64_t backstop_max = 4 * backstop_ns, backstop_idle_max = 16 * backstop_ns;
  std::int64_t backstop_wait = backstop_ns;
  constexpr std::int64_t backstop_idle_ns = 50'000'000;  // 50 ms without operations: park
  std::int64_t last_active_ns = 0, last_post_wake_ns = 0;
  std::uint64_t polls_seen = engine_.polls();
  bool needed = true;  // the backstop's last look had to poll (or found nothing pending)
  for (;;) {
    const std::uint32_t seen = thread_word_.load(std::memory_order_acquire);
    if (is_mpi_thread) run_commands();
    const bool asked = poll_requested_.exchange(false, std::memory_order_acq_rel);
    core::poll_result r = core::poll_result::nothing_pending;
    if (timer || asked) {
      r = engine_.poll();
    } else if (backstop_on && engine_.pending() != 0) {
      const bool fresh = backstop_reset_.exchange(false, std::memory_order_acq_rel);
      needed = engine_.polls() == polls_seen;  // no worker polled since the last look
      if (needed) {
        r = engine_.poll();
        backstop_polls_.fetch_add(1, std::memory_order_relaxed);
        backstop_wait = fresh || r == core::poll_result::progressed
                            ? backstop_ns
                            : std::min(backstop_max, 2 * std::min(backstop_wait, backstop_max / 2));
      } else {
        backstop_wait = std::min(backstop_idle_max, 2 * backstop_wait);
      }
    } else if (backstop_on) {
      backstop_wait = std::min(backstop_idle_max, 2 * backstop_wait);  // nothing pending
      needed = true;  // a post after a quiet spell may start a transfer beside long tasks
    }
    polls_seen = engine_.polls();
    if (stopping_.load(std::memory_order_acquire) && engine_.pending() == 0 &&
        !has_commands_.load(std::memory_order_acquire))
      break;
    // The polling period adapts multiplicatively: halved by a poll that completed something,
    // doubled by one that did not, within [HYTASK_PROGRESS_MIN_US, HYTASK_PROGRESS_MAX_US].
    // Resetting to the minimum on every completion would wake the thread tens of thousands
    // of times a second in a steady exchange, each wake taking a core from a worker.
    long timeout = -1;  // sleep until submit, nudge or stop
    if (timer && r != core::poll_result::nothing_pending) {
      wait = r == core::poll_result::progressed ? std::max(min_wait, wait / 2)
                                                : std::min(max_wait, 2 * wait);
      timeout = static_cast<long>(wait);
    }
    if (backstop_on) {
      // While operations come and go (an exchange in progress) the backstop keeps looking
      // at its period even when none is pending at this instant, so that posts need not
      // wake it: a wake per message (a system call on the poster's side, a context switch on
      // the backstop's) took a ping-pong from 1.3 to 5 us per round trip. Only after
      // backstop_idle_ns without any pending operation does it park until the next post.
      const std::int64_t t = now_ns();
      if (engine_.pending() != 0) last_active_ns = t;
      if (t - last_active_ns < backstop_idle_ns) timeout = static_cast<long>(backstop_wait);
      // Asleep for longer than its shortest period, it may be woken by a post (a transfer
      // beginning beside long tasks should not wait up to 16 periods for its first poll) —
      // unless the workers were polling at its last look (they will see the post), and at
      // most once per 16 periods, so that a steady exchange does not pay a wake per message.
      backstop_wakeable_.store(needed && timeout > backstop_ns &&
                                   t - last_post_wake_ns >= backstop_idle_max,
                               std::memory_order_seq_cst);
    }
    if (stopping_.load(std::memory_order_acquire)) timeout = 1000000;  // draining: keep polling
    if (timeout < 0) {
      // Parked until an operation is registered: announce it, then look again (against the
      // poster's register-then-look, no registration is missed).
      thread_parked_.store(true, std::memory_order_seq_cst);
      if (engine_.pending() != 0) {
        if (timer) timeout = static_cast<long>(wait);
        if (backstop_on) timeout = static_cast<long>(backstop_wait = backstop_ns);
      }
    }
    if (thread_word_.load(std::memory_order_acquire) == seen)
      core::futex_wait(thread_word_, seen, timeout);
    thread_parked_.store(false, std::memory_order_relaxed);
    if (backstop_on && !backstop_wakeable_.exchange(false, std::memory_order_acq_rel) &&
        backstop_reset_.load(std::memory_order_relaxed))
      last_post_wake_ns = now_ns();  // woken by a post (it cleared the flag): look now
  }
  if (is_mpi_thread) finalise();
}

void comm_system::drain() {
  // Every operation must complete before MPI_Finalize. Pending ones are normally sends whose
  // requests the program dropped, or collectives other ranks have not reached yet.
  const std::int64_t start = now_ns();
  bool warned = false;
  while (engine_.pending() != 0 || has_commands_.load(std::memory_order_acquire)) {
    if (may_call_mpi()) {
      run_commands();
      engine_.poll();
    } else {
      nudge();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (!warned && now_ns() - start > 10'000'000'000LL) {
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
    thread_word_.fetch_add(1, std::memory_order_release);
    core::futex_wake(thread_word_);
    thread_.join();  // the MPI thread finalises on its way out
  }
  if (settings_.mpi_mode != hytask::mpi_mode::funneled) finalise();
  instance_ = nullptr;
}

void comm_system::finalise() {
  if (world_ != MPI_COMM_NULL) {
    MPI_Comm_free(&world_);
    restore_predefined_errors();
  }
  if (owns_mpi_) {
    MPI_Finalize();
    owns_mpi_ = false;
  }
}

// ---- watchdog --------------------------------------------------------------------------

void comm_system::watchdog_main() {
  auto* sched = core::scheduler::instance();
  const std::int64_t limit = static_cast<std::int64_t>(settings_.watchdog_s) * 1'000'000'000LL;
  std::uint64_t last_progress = 0;
  std::int64_t last_change = now_ns();
  while (!watchdog_stop_.load(std::memory_order_acquire)) {
    const std::uint32_t seen = watchdog_word_.load(std::memory_order_acquire);
    const std::uint64_t progress =
        sched->tasks_started() + engine_.completions() + posts_.load(std::memory_order_relaxed);
    const bool busy = engine_.pending() != 0 || sched->in_flight() > 0 ||
                      has_commands_.load(std::memory_order_acquire);
    const std::int64_t t = now_ns();
    // A worker running a task (or main running the program's code) is progress, however
    // long it computes: only a rank whose workers all idle can be stuck.
    if (progress != last_progress || !busy || sched->any_worker_busy()) {
      last_progress = progress;
      last_change = t;
    } else if (t - last_change > limit) {
      std::string report;
      std::size_t n = 0;
      engine_.for_each_pending([&](operation* op) {
        ++n;
        report += "  " + describe(op) + "\n";
      });
      {
        // Operations waiting for the thread that may call MPI (funneled, masteronly).
        std::lock_guard<std::mutex> lock(commands_mutex_);
        for (operation* op : commands_) {
          ++n;
          report += "  " + describe(op) + " (queued, not yet posted: waiting for the thread "
                    "that calls MPI)\n";
        }
      }
      std::fprintf(stderr,
                   "hytask watchdog: rank %d: nothing has progressed for %u s (no task started "
                   "or finished, no MPI operation completed); %zu MPI operation(s) pending, "
                   "%" PRId64 " task(s) in flight:\n%s"
                   "hytask watchdog: rank %d: aborting the job (HYTASK_WATCHDOG_S=%u)\n",
                   rank_, settings_.watchdog_s, n, sched->in_flight(), report.c_str(), rank_,
                   settings_.watchdog_s);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::abort();
    }
    core::futex_wait(watchdog_word_, seen, 100'000'000L);
  }
}

}  // namespace hytask::mpi::detail
