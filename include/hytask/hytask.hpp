// hytask: tasks with data dependencies for hybrid MPI + threads programs.
// Include this header for the whole API.
#pragma once

#include "hytask/config.hpp"
#include "hytask/core/access.hpp"
#include "hytask/core/event.hpp"
#include "hytask/core/graph.hpp"
#include "hytask/core/parallel_for.hpp"
#include "hytask/core/spawn.hpp"
#include "hytask/core/task_group.hpp"
#include "hytask/core/task_handle.hpp"
#include "hytask/core/task_options.hpp"
#include "hytask/core/this_task.hpp"
#include "hytask/core/versioned.hpp"
#include "hytask/errors.hpp"
#include "hytask/runtime.hpp"
#include "hytask/version.hpp"
