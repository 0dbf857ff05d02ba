// The face (core/face.hpp) over the scheduler: each call forwards to the scheduler or the
// calling thread's worker.
#include "core/face.hpp"

#include <memory>

#include "core/sched/cancellation.hpp"
#include "core/sched/scheduler.hpp"
#include "core/sched/scheduler_internal.hpp"

namespace hytask::core {

namespace {
scheduler& face_scheduler() noexcept { return *scheduler::instance(); }
std::unique_ptr<scheduler> g_face_owned;  // the one start_scheduler made
}  // namespace

void start_scheduler(const core_settings& settings, const progress_hooks& hooks) {
  g_face_owned = std::make_unique<scheduler>(settings, hooks);
}
void shutdown_scheduler() {
  if (g_face_owned) g_face_owned->shutdown();
}
void destroy_scheduler() noexcept { g_face_owned.reset(); }

bool scheduler_alive() noexcept { return scheduler::instance() != nullptr; }
bool on_worker() noexcept { return current_worker() != nullptr; }
task* current_task() noexcept {
  worker* w = current_worker();
  return w != nullptr ? w->current_task : nullptr;
}
thread_place this_thread_place() noexcept {
  worker* w = current_worker();
  return w != nullptr ? thread_place{true, w->current_task} : thread_place{};
}
std::uint64_t id_of(task* t) { return task_id(current_worker(), t); }

task* hold_current() { return face_scheduler().hold_current(); }
void release_hold(task* t, std::exception_ptr error) { face_scheduler().release_hold(t, std::move(error)); }

void suspend(arm_fn arm, void* arg) { face_scheduler().suspend(arm, arg); }
void resume(task* t, bool comm) { face_scheduler().resume(t, comm); }

void learn_comm(task* t) { face_scheduler().learn_comm(t); }
void raise_to_comm(task* t) noexcept { face_scheduler().raise_to_comm(t); }

void wake_for_progress() {
  if (scheduler* s = scheduler::instance()) s->wake_for_progress();
}
void wake_worker(unsigned index) {
  if (scheduler* s = scheduler::instance()) s->wake_worker(index);
}

std::int64_t tasks_in_flight() noexcept { return scheduler_alive() ? face_scheduler().in_flight() : 0; }
std::uint64_t tasks_started() noexcept { return scheduler_alive() ? face_scheduler().tasks_started() : 0; }
bool any_worker_busy() noexcept { return scheduler_alive() && face_scheduler().any_worker_busy(); }
bool any_worker_idle() noexcept { return scheduler_alive() && face_scheduler().any_worker_idle(); }
void set_aside(std::int64_t tasks) noexcept { face_scheduler().set_aside(tasks); }
void take_back(std::int64_t tasks) noexcept { face_scheduler().take_back(tasks); }

bool cancellation_active() noexcept { return scheduler_alive() && face_scheduler().cancel_active() != 0; }
bool is_cancelled(const task* t) noexcept { return cancellation_active() && task_cancelled(t); }

ending how_it_ended(const task* t) noexcept {
  if (!sched::has_failed(t)) return ending::succeeded;
  return t->error == cancel_marker() ? ending::cancelled : ending::failed;
}
const std::exception_ptr& cancelled_error() noexcept { return cancel_marker(); }

}  // namespace hytask::core
