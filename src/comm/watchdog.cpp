// The watchdog (HYTASK_WATCHDOG_S): a thread that looks every 100 ms and, when nothing has
// progressed for that long while work is pending (and the rank did run: comm/stall_watch.hpp),
// prints every pending and queued operation and aborts the job.
#include <mpi.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "comm/comm.hpp"
#include "comm/stall_watch.hpp"
#include "core/face.hpp"
#include "platform/cpu_wait.hpp"
#include "platform/futex.hpp"
#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"

namespace hytask::mpi::detail {

void comm_system::stop_watchdog() {
  watchdog_stop_.store(true, std::memory_order_release);
  watchdog_word_.fetch_add(1, std::memory_order_release);
  core::futex_wake(watchdog_word_, 1);
  if (watchdog_.joinable()) watchdog_.join();
}

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
    const bool busy = engine_.pending() != 0 || core::tasks_in_flight() > 0 || commands_.any();
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
      core::messagef(core::verbosity::warning,
                     "watchdog: nothing has progressed for %.1f s, but this rank did not run "
                     "for %.1f s of it (stopped, or kept off the CPUs by other threads): not "
                     "counted as a hang (watching again, %d of %d)",
                     static_cast<double>(watch.window_ns()) * 1e-9,
                     static_cast<double>(watch.unrun_ns()) * 1e-9, watch.extensions(),
                     watch.max_extensions());
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
        commands_.for_each([&](operation* op) {
          ++n;
          report += "  " + describe(op) + " (queued, not yet posted: waiting for the thread "
                    "that calls MPI)\n";
        });
      }
      // How much this rank and the node waited for CPUs: on an oversubscribed node a rank
      // may wait for a peer that does not get to run.
      char cpu[512];
      const std::int64_t delay = delay_at < 0 ? -1 : core::process_run_delay_ns();
      const double pressure = core::node_cpu_pressure_pct();
      int len = std::snprintf(cpu, sizeof cpu,
                              "watchdog: since the stall began it polled %" PRIu64
                              " times",
                              engine_.polls() - polls_at);
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
      core::messagef(core::verbosity::error,
                     "watchdog: nothing has progressed for %u s (no task started or finished, "
                     "no MPI operation completed); %zu MPI operation(s) pending, %" PRId64
                     " task(s) in flight:\n%s%swatchdog: aborting the job (HYTASK_WATCHDOG_S=%u)",
                     settings_.watchdog_s, n, core::tasks_in_flight(), report.c_str(), cpu,
                     settings_.watchdog_s);
      core::wait_until_stderr_read();
      MPI_Abort(MPI_COMM_WORLD, 3);
      std::abort();
    }
    last_look = core::now_ns();
    core::futex_wait(watchdog_word_, seen, look_ns);
  }
}

}  // namespace hytask::mpi::detail
