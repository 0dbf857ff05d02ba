// Exceptions hytask throws. Each message names the problem and how to fix it.
#pragma once

#include <stdexcept>
#include <string>

namespace hytask {

// An invalid configuration value: a HYTASK_* variable or a hytask::config field.
class config_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The API used in a way it does not support (no runtime, spawn from a foreign thread...).
class usage_error : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Thrown inside a cancelled task (hytask/core/task_group.hpp) by a hytask call that would wait
// for something a cancellation may never bring — an MPI operation (which is then cancelled
// or drained) — or that would start one. Let it leave the task: the runtime counts the task
// as cancelled, not failed, and wait_all does not rethrow it.
class task_cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hytask
