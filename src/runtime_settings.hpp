// The settings of the runtime that is alive, for the layers it does not start itself: the
// interception library (src/intercept) is linked by the program, not by libhytask, so the
// runtime cannot hand it its knobs; it reads them here.
#pragma once

#include "hytask/config.hpp"

namespace hytask::detail {

// The resolved settings of the live runtime, or null before it starts and after it stops.
// Set before its workers start and cleared after they stop, so a task may read it freely.
const hytask::settings* runtime_settings() noexcept;

}  // namespace hytask::detail
