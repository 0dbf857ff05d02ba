// Options of one task: its priority and its name.
#pragma once

#include <string_view>

namespace hytask {

class task_group;

struct task_options {
  // Any int; 0 is normal. Among the ready tasks of a worker, a higher priority always starts
  // first (OpenMP's priority clause, OmpSs-2's priority); among equal priorities, tasks start
  // in the order they became ready — spawn order for tasks ready at spawn — except that a
  // task released by the one that just finished may run next on the same worker.
  //
  // Tasks that communicate (HYTASK_COMM_PRIORITY=1, the default) run just above the tasks of
  // their own priority without being told: a task resumed or released by MPI, one that
  // declares a channel, one of a type that posted an MPI operation before, and a task that
  // such a task depends on. So a transfer needs no priority to start before the compute
  // spawned beside it.
  //
  // Cost: tasks of priority 0 use per-worker FIFOs; the others a heap per worker (a lock and
  // O(log n)), so a program pays for priorities only where it uses them.
  int priority = 0;
  // Shown in traces, error messages and the watchdog. Copied at spawn; any string works.
  std::string_view name{};
  // The group the task joins (hytask/core/task_group.hpp): cancelling the group cancels it
  // and the tasks it spawns. None: only cancellations of an ancestor's group reach it.
  task_group* group = nullptr;
};

}  // namespace hytask
