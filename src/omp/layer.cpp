#include "omp/layer.hpp"

#include <mpi.h>

#include <cstdio>
#include <string>

#include "platform/clock.hpp"
#include "platform/messages.hpp"
#include "platform/stderr_drain.hpp"
#include "hytask/errors.hpp"
#include "omp/session_progress.hpp"

namespace hytask::omp::detail {

layer& the_layer() noexcept {
  static layer l;  // never destroyed before the callbacks that read it: a function-local static
  return l;
}

mpi::detail::engine& need_session(const char* what) {
  if (mpi::detail::engine* e = the_layer().engine.load(std::memory_order_acquire)) return *e;
  throw usage_error(std::string("hytask::omp::") + what +
                    ": no hytask::omp::session is alive: create one in main, after "
                    "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) and before the parallel "
                    "regions that hand requests to hytask, and keep it alive while they run");
}

namespace {
struct outstanding_waiter : hytask::detail::event_waiter {};
void count_completion(hytask::detail::event_waiter* w) {
  the_layer().outstanding.fetch_sub(1, std::memory_order_relaxed);
  delete static_cast<outstanding_waiter*>(w);
}
}  // namespace

void hand_over(mpi::detail::operation* op) {
  layer& L = the_layer();
  if (op->state.load(std::memory_order_acquire) != mpi::detail::op_complete) {
    L.outstanding.fetch_add(1, std::memory_order_relaxed);
    auto* w = new outstanding_waiter;
    w->fire = &count_completion;
    op->done.add_waiter(w);  // fires at once if it completed meanwhile
  }
  if (L.poll_delay_ns > 0) {
    const std::int64_t now = core::now_ns();
    if (now - L.last_post_ns.load(std::memory_order_relaxed) >= L.poll_delay_ns)
      L.burst_start_ns.store(now, std::memory_order_relaxed);
    L.last_post_ns.store(now, std::memory_order_relaxed);
  }
  if (progress_thread* t = L.thread.load(std::memory_order_acquire)) t->registered();
}

void fatal(const std::string& message) {
  core::message(core::verbosity::error, message);
  core::wait_until_stderr_read();  // the launcher forwards it before the abort ends us
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace hytask::omp::detail
