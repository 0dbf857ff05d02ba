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

}  // namespace hytask
