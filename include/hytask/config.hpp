// Configuration: every knob is a HYTASK_* environment variable and a field of config.
//
//   hytask::runtime rt;                                  // HYTASK_* variables, then defaults
//   hytask::runtime rt(hytask::config{.threads = 4});    // a field set here wins over HYTASK_*
//
// An invalid value — in the environment or in a field — makes the runtime constructor throw
// hytask::config_error naming the variable, the value and what is allowed. `hytask-info`
// prints every knob with its value and where it came from.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hytask/errors.hpp"

namespace hytask {

enum class pin_policy { none, cores };

struct config {
  std::optional<unsigned> threads{};          // HYTASK_THREADS: workers, main included
  std::optional<std::size_t> max_tasks{};     // HYTASK_MAX_TASKS: tasks in flight before spawn throttles
  std::optional<std::size_t> stack_size{};    // HYTASK_STACK_SIZE: bytes per task stack
  std::optional<unsigned> spin_us{};          // HYTASK_SPIN_US: idle spin before sleeping
  std::optional<pin_policy> pin{};            // HYTASK_PIN: none | cores
  std::optional<std::string> trace{};         // HYTASK_TRACE: timeline file, "" = off
  std::optional<std::size_t> trace_buffer{};  // HYTASK_TRACE_BUFFER: events per thread per flush
};

// Every knob resolved: explicit config field, else HYTASK_* variable, else the default.
struct settings {
  unsigned threads = 1;
  std::size_t max_tasks = 0;
  std::size_t stack_size = 0;
  unsigned spin_us = 0;
  pin_policy pin = pin_policy::none;
  std::string trace;
  std::size_t trace_buffer = 0;

  // Throws config_error on the first invalid value.
  static settings resolve(const config& explicit_values = {});
};

// One knob as hytask-info shows it.
struct knob_info {
  std::string variable;  // HYTASK_...
  std::string value;     // resolved value, as text
  std::string source;    // "default", "environment" or "config"
  std::string allowed;   // the accepted values
  std::string help;      // one line
};

// Describes every knob. Throws config_error like settings::resolve.
std::vector<knob_info> describe_knobs(const config& explicit_values = {});

// One line on the machine as the runtime sees it: packages, NUMA nodes, cores and hardware
// threads available to this process.
std::string describe_topology();

// Parses a byte size such as 262144, 256K, 4M or 1G (powers of 1024).
std::optional<std::size_t> parse_size(const std::string& text);

}  // namespace hytask
