// Configuration: every knob is a HYTASK_* environment variable and a field of config.
//
// ```cpp
// hytask::runtime rt;  // HYTASK_* variables, then defaults
// ```
// or
// ```cpp
// hytask::runtime rt(hytask::config{.threads = 4});  // a field set here wins over HYTASK_*
// ```
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
enum class mpi_use { automatic, on, off };
enum class mpi_mode { multiple, funneled, masteronly, serialized };
enum class progress_policy { workers, thread, node, none };
enum class ompt_use { automatic, on, off };
enum class order_check { warn, error, off };
enum class graph_placement { automatic, steal, owner };
enum class global_am { automatic, two_sided, rma };

struct config {
  std::optional<unsigned> threads{};          // HYTASK_THREADS: workers, main included
  std::optional<std::size_t> max_tasks{};     // HYTASK_MAX_TASKS: tasks in flight before spawn throttles
  std::optional<std::size_t> stack_size{};    // HYTASK_STACK_SIZE: bytes per task stack
  std::optional<unsigned> spin_us{};          // HYTASK_SPIN_US: idle spin before sleeping
  std::optional<pin_policy> pin{};            // HYTASK_PIN: none | cores
  std::optional<std::string> trace{};         // HYTASK_TRACE: timeline file, "" = off
  std::optional<std::size_t> trace_buffer{};  // HYTASK_TRACE_BUFFER: events per thread per flush
  std::optional<mpi_use> mpi{};                 // HYTASK_MPI: auto | on | off
  std::optional<hytask::mpi_mode> mpi_mode{};   // HYTASK_MPI_MODE: multiple | funneled | serialized | masteronly
  std::optional<progress_policy> progress{};    // HYTASK_PROGRESS: workers | thread | node | none
  std::optional<unsigned> poll_every{};         // HYTASK_POLL_EVERY: busy-worker poll interval
  std::optional<unsigned> poll_us{};            // HYTASK_POLL_US: busy-worker poll period, 0 = off
  std::optional<unsigned> backstop_us{};        // HYTASK_BACKSTOP_US: poll when no worker has, 0 = off
  std::optional<unsigned> progress_min_us{};    // HYTASK_PROGRESS_MIN_US: shortest poll period
  std::optional<unsigned> progress_max_us{};    // HYTASK_PROGRESS_MAX_US: longest poll period
  std::optional<bool> comm_priority{};          // HYTASK_COMM_PRIORITY: 1 | 0
  std::optional<bool> intercept{};              // HYTASK_INTERCEPT: 1 | 0 (hytask::mpi_intercept)
  std::optional<bool> node_stats{};             // HYTASK_NODE_STATS: 1 | 0
  std::optional<bool> display_affinity{};       // HYTASK_DISPLAY_AFFINITY: 1 | 0
  std::optional<ompt_use> ompt{};               // HYTASK_OMPT: auto | on | off (hytask::omp)
  std::optional<bool> omp_task_hooks{};         // HYTASK_OMP_TASK_HOOKS: 1 | 0 (libgomp's task entry)
  std::optional<unsigned> ompt_poll_us{};       // HYTASK_OMPT_POLL_US: OMPT polls' spacing
  std::optional<unsigned> omp_poll_delay_us{};  // HYTASK_OMP_POLL_DELAY_US: first poll after a hand-over
  std::optional<unsigned> watchdog_s{};         // HYTASK_WATCHDOG_S: 0 = off
  std::optional<hytask::order_check> order_check{};  // HYTASK_ORDER_CHECK: warn | error | off
  std::optional<unsigned> phase_window{};       // HYTASK_PHASE_WINDOW: active global phases
  std::optional<hytask::global_am> global_am{};  // HYTASK_GLOBAL_AM: auto | two-sided | rma
  std::optional<std::size_t> rename_max_bytes{};  // HYTASK_RENAME_MAX_BYTES: memory of versions
  std::optional<hytask::graph_placement> graph_placement{};  // HYTASK_GRAPH_PLACEMENT: auto | steal | owner
  std::optional<unsigned> verbose{};            // HYTASK_VERBOSE: 0 errors .. 3 debug messages
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
  mpi_use mpi = mpi_use::automatic;
  hytask::mpi_mode mpi_mode = hytask::mpi_mode::multiple;
  progress_policy progress = progress_policy::workers;
  unsigned poll_every = 0;
  unsigned poll_us = 0;
  unsigned backstop_us = 0;
  unsigned progress_min_us = 0;
  unsigned progress_max_us = 0;
  bool comm_priority = true;
  bool intercept = true;
  bool node_stats = false;
  bool display_affinity = false;
  ompt_use ompt = ompt_use::automatic;
  bool omp_task_hooks = true;
  unsigned ompt_poll_us = 0;
  unsigned omp_poll_delay_us = 0;
  unsigned watchdog_s = 0;
  hytask::order_check order_check = hytask::order_check::warn;
  unsigned phase_window = 0;
  hytask::global_am global_am = hytask::global_am::automatic;
  std::size_t rename_max_bytes = 0;
  hytask::graph_placement graph_placement = hytask::graph_placement::automatic;
  unsigned verbose = 1;

  // Throws config_error on the first invalid value.
  static settings resolve(const config& explicit_values = {});
};

// One knob as hytask-info shows it.
struct knob_info {
  std::string variable;  // HYTASK_...
  std::string value;     // resolved value, as text
  std::string source;    // "default", "environment", "config", "slurm" (SLURM_CPUS_PER_TASK)
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
