// Names the calling thread as `top`, `ps -L`, gdb and /proc/<pid>/task/<tid>/comm show it, so
// that a user (and hytask-overlap) can tell the runtime's threads apart: hytask-worker,
// hytask-progress, hytask-mpi, hytask-watchdog, hytask-agent. At most 15 characters.
#pragma once

#include <pthread.h>

namespace hytask::core {

inline void name_this_thread(const char* name) noexcept { pthread_setname_np(pthread_self(), name); }

}  // namespace hytask::core
