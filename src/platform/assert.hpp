// HYTASK_ASSERT: the runtime's invariants (the scheduler's, the dependency tracker's, the
// recorded graphs', the MPI operations', the global engine's), checked in debug builds and in
// the sanitizer variants of the library (HYTASK_ASSERTIONS), compiled out otherwise. A failed
// check prints the condition, where it is and why it must hold, then aborts: it is a bug in
// hytask, not a misuse (misuse throws hytask::usage_error).
#pragma once

#if defined(HYTASK_ASSERTIONS)
#include <cstdlib>

#include "platform/messages.hpp"

namespace hytask::core {
[[noreturn]] inline void assertion_failed(const char* cond, const char* why, const char* file,
                                          int line) {
  messagef(verbosity::error, "internal error at %s:%d: %s (%s). Please report it.", file, line,
           why, cond);
  std::abort();
}
}  // namespace hytask::core

#define HYTASK_ASSERT(cond, why) \
  ((cond) ? void(0) : ::hytask::core::assertion_failed(#cond, why, __FILE__, __LINE__))
#else
#define HYTASK_ASSERT(cond, why) ((void)0)
#endif
