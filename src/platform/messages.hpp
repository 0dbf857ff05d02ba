// The library's own messages to stderr: one format, one verbosity filter (HYTASK_VERBOSE).
//
// Every message is one or more lines, each beginning with "hytask[rank R]: " — or "hytask: "
// when the process is not one rank of an MPI job — and the first line then names the level:
//
//   hytask[rank 3]: warning: HYTASK_THREADS=40 is more than 8 times ...
//   hytask: error: HYTASK_THREADS='lots' is invalid: ...
//
// Levels: 0 error (always printed), 1 warning (the default), 2 info, 3 debug; a message is
// printed when its level is at most the verbosity. The platform knows nothing of MPI: the
// rank comes from a hook that the MPI layer installs (set_message_rank_source). A message is
// written by one write(2) call, so that ranks sharing a pipe do not interleave mid-line.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

namespace hytask::core {

enum class verbosity : int { error = 0, warning = 1, info = 2, debug = 3 };

inline constexpr int default_verbosity = 1;

inline std::atomic<int> g_message_verbosity{default_verbosity};  // through the two below

// HYTASK_VERBOSE, set by the runtime once its settings are resolved.
inline void set_verbosity(int level) noexcept {
  g_message_verbosity.store(level, std::memory_order_relaxed);
}
inline int verbosity_level() noexcept {
  return g_message_verbosity.load(std::memory_order_relaxed);
}
// Whether a message of this level is printed (errors always are).
inline bool message_enabled(verbosity v) noexcept {
  return v == verbosity::error || static_cast<int>(v) <= verbosity_level();
}

// The rank hook: returns this process's rank in the job, or -1 when it is not one rank of
// an MPI job. Null (the default) means -1.
using message_rank_fn = int (*)() noexcept;
void set_message_rank_source(message_rank_fn source) noexcept;
int message_rank() noexcept;

// The text of a message as written: every line prefixed, the first with the level's name,
// ending in a newline. A leading "hytask: " in `text` (exception messages carry one) is
// dropped, so that it is not said twice.
std::string format_message(verbosity v, int rank, std::string_view text);

// Prints `text` at level `v` with this process's rank.
void message(verbosity v, std::string_view text);
// Prints it once per job: on rank 0, or where there is no rank. For messages every rank
// would print identically (a setting they share).
void message_once_per_job(verbosity v, std::string_view text);
// Prints it with the rank given (-1: none), for the fatal-error path, which may run before
// the hook is installed.
void message_as(verbosity v, int rank, std::string_view text);
// In a catch block: the exception being handled as an error message (`what`, the failed
// call, names an exception that is no std::exception).
void message_current_exception(std::string_view what);

// A report that a knob asked for (HYTASK_NODE_STATS): printed whatever the verbosity, with
// the prefix and no level name. (HYTASK_DISPLAY_AFFINITY's report has lines of its own, made
// to sort by rank: affinity_report.hpp.)
void report(std::string_view text);

// printf-style variants.
void messagef(verbosity v, const char* format, ...) __attribute__((format(printf, 2, 3)));
void messagef_once_per_job(verbosity v, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
void reportf(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace hytask::core
