// hytask's OMPT tool: polls the session's MPI requests at task scheduling points (OpenMP
// 5.0's tool interface, which Clang's libomp implements and GCC's libgomp does not).
//
// The OpenMP runtime calls ompt_start_tool once, when it initialises (libomp: as it is loaded,
// before main), and uses the first tool that answers: the program's own definition of the
// symbol — this one, linked from libhytask_omp — before any named by OMP_TOOL_LIBRARIES.
// So HYTASK_OMPT=auto declines when OMP_TOOL_LIBRARIES is set (the user asked for another
// tool, a profiler or a checker), HYTASK_OMPT=off always declines, and OMP_TOOL=disabled
// makes the runtime ask nobody.
//
// Callbacks run for every OpenMP program that links this library, session or not; without
// one they load a pointer and return. With one, a callback at a scheduling point polls when
// requests are pending, HYTASK_OMPT_POLL_US have passed since the rank's last poll from a
// callback, and none was handed over in the last HYTASK_OMP_POLL_DELAY_US (layer.hpp): a
// clock read, and only while something is pending.
//
// Where they poll, measured on libomp 14 (a completion calls omp_fulfill_event there):
//   - task switches (a task completes, yields or starts: task_schedule), task creation, the
//     start and end of a worksharing construct, and the start of any wait (barrier,
//     taskwait, taskgroup);
//   - not where libomp holds a lock around the callback or has no team for the thread: a
//     task detaching (its event's lock is held: fulfilling that very event would deadlock),
//     early and late fulfilment, and the end of a wait — the end of an implicit barrier is
//     reported by workers only when the next parallel region wakes them, and fulfilments
//     made there were lost (the test hung).
// A thread that starts a wait while requests are pending may go idle without further
// callbacks: it tells the progress thread, which then polls instead of standing aside.
#include <cstdlib>
#include <cstring>

#include "omp/layer.hpp"
#include "omp/scheduling_point.hpp"

#if HYTASK_HAVE_OMPT
#include <omp-tools.h>
#endif

namespace hytask::omp::detail {

namespace {

enum class tool_state { not_started, running, declined_off, declined_other, no_callbacks, not_built };
std::atomic<tool_state> g_state{
#if HYTASK_HAVE_OMPT
    tool_state::not_started
#else
    tool_state::not_built
#endif
};

}  // namespace

bool ompt_tool_running() noexcept { return g_state.load() == tool_state::running; }

const char* ompt_tool_state() noexcept {
  switch (g_state.load()) {
    case tool_state::running: return "hytask's OMPT tool polls at task scheduling points";
    case tool_state::declined_off: return "off: HYTASK_OMPT=off when the OpenMP runtime started";
    case tool_state::declined_other:
      return "stepped aside: OMP_TOOL_LIBRARIES names another tool (HYTASK_OMPT=on takes OMPT)";
    case tool_state::no_callbacks:
      return "unavailable: the OpenMP runtime refused the task_schedule callback";
    case tool_state::not_built:
      return "unavailable: this hytask was built without omp-tools.h (install libomp-dev)";
    case tool_state::not_started: break;
  }
  return "unavailable: the OpenMP runtime did not start an OMPT tool (GCC's libgomp has no OMPT; "
         "Clang's libomp has, unless OMP_TOOL=disabled)";
}

}  // namespace hytask::omp::detail

#if HYTASK_HAVE_OMPT

namespace {

using hytask::omp::detail::scheduling_point;

void on_task_create(ompt_data_t*, const ompt_frame_t*, ompt_data_t*, int, int, const void*) {
  scheduling_point(false);
}

void on_task_schedule(ompt_data_t*, ompt_task_status_t status, ompt_data_t*) {
  if (status == ompt_task_complete || status == ompt_task_switch || status == ompt_task_yield)
    scheduling_point(false);
}

void on_sync_region_wait(ompt_sync_region_t, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                         ompt_data_t*, const void*) {
  if (endpoint == ompt_scope_begin) scheduling_point(true);
}

void on_work(ompt_work_t, ompt_scope_endpoint_t, ompt_data_t*, ompt_data_t*, std::uint64_t,
             const void*) {
  scheduling_point(false);
}

int tool_initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  using hytask::omp::detail::g_state;
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr ||
      set_callback(ompt_callback_task_schedule, reinterpret_cast<ompt_callback_t>(&on_task_schedule)) <
          ompt_set_sometimes) {
    g_state.store(hytask::omp::detail::tool_state::no_callbacks);
    return 0;  // the runtime then calls no callback of this tool
  }
  // The others are welcome where the runtime has them.
  set_callback(ompt_callback_task_create, reinterpret_cast<ompt_callback_t>(&on_task_create));
  set_callback(ompt_callback_sync_region_wait, reinterpret_cast<ompt_callback_t>(&on_sync_region_wait));
  set_callback(ompt_callback_work, reinterpret_cast<ompt_callback_t>(&on_work));
  g_state.store(hytask::omp::detail::tool_state::running);
  return 1;
}

void tool_finalize(ompt_data_t*) {}

}  // namespace

// The tool entry point. HYTASK_OMPT is read here, when the OpenMP runtime starts (an invalid
// value counts as auto; the session's configuration rejects it with a message). Weak: a
// program that defines its own tool entry point keeps it (and hytask's stays unused, as
// session_stats::ompt_state then says) instead of failing to link.
extern "C" __attribute__((weak)) ompt_start_tool_result_t* ompt_start_tool(unsigned int,
                                                                             const char*) {
  using hytask::omp::detail::g_state;
  using hytask::omp::detail::tool_state;
  const char* mode = std::getenv("HYTASK_OMPT");
  const bool on = mode != nullptr && std::strcmp(mode, "on") == 0;
  if (mode != nullptr && std::strcmp(mode, "off") == 0) {
    g_state.store(tool_state::declined_off);
    return nullptr;
  }
  const char* others = std::getenv("OMP_TOOL_LIBRARIES");
  if (!on && others != nullptr && *others != '\0') {
    g_state.store(tool_state::declined_other);
    return nullptr;
  }
  static ompt_start_tool_result_t result{&tool_initialize, &tool_finalize, {}};
  return &result;
}

#endif  // HYTASK_HAVE_OMPT
