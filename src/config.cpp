// Every knob in one table: its variable, what it accepts, its default, how it is parsed and
// shown. settings::resolve and describe_knobs (hytask-info) both read this table, so a knob
// added here is documented and validated everywhere at once.
#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>

#include "comm/progress_registry.hpp"
#include "platform/topology.hpp"
#include "hytask/config.hpp"

namespace hytask {
namespace {

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::uint64_t> parse_uint(const std::string& text) {
  std::string t = trim(text);
  if (t.empty() || t.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

std::string show_size(std::size_t v) {
  if (v % (1u << 30) == 0 && v >= (1u << 30)) return std::to_string(v >> 30) + "G";
  if (v % (1u << 20) == 0 && v >= (1u << 20)) return std::to_string(v >> 20) + "M";
  if (v % (1u << 10) == 0 && v >= (1u << 10)) return std::to_string(v >> 10) + "K";
  return std::to_string(v);
}

constexpr std::size_t kib = 1024;

struct knob {
  const char* variable;
  const char* field;    // hytask::config member
  const char* allowed;  // what an error message and hytask-info say is accepted
  const char* help;
  std::function<void(settings&)> set_default;
  // Parses text into settings; false when invalid.
  std::function<bool(const std::string&, settings&)> parse;
  // Applies the explicit config field if set: 1 applied, 0 unset, -1 invalid.
  std::function<int(const config&, settings&, std::string& shown)> apply_explicit;
  std::function<std::string(const settings&)> show;
};

template <class T, class Check>
std::function<int(const config&, settings&, std::string&)> explicit_number(
    std::optional<T> config::*field, T settings::*target, Check check) {
  return [=](const config& c, settings& s, std::string& shown) {
    if (!(c.*field)) return 0;
    shown = std::to_string(*(c.*field));
    if (!check(*(c.*field))) return -1;
    s.*target = *(c.*field);
    return 1;
  };
}

// An integer knob accepting [lo, hi], from the environment or the config field alike.
template <class T>
knob number_knob(const char* variable, const char* field, const char* allowed, const char* help,
                 T def, std::uint64_t lo, std::uint64_t hi, std::optional<T> config::*cfg,
                 T settings::*target) {
  return knob{variable, field, allowed, help, [=](settings& s) { s.*target = def; },
              [=](const std::string& t, settings& s) {
                auto v = parse_uint(t);
                if (!v || *v < lo || *v > hi) return false;
                s.*target = static_cast<T>(*v);
                return true;
              },
              explicit_number<T>(cfg, target,
                                 [=](T v) {
                                   const auto u = static_cast<std::uint64_t>(v);
                                   return u >= lo && u <= hi;
                                 }),
              [=](const settings& s) { return std::to_string(s.*target); }};
}

// A size in bytes accepting [lo, hi], with an optional K, M or G suffix in the environment;
// shown with the largest suffix that divides it.
knob size_knob(const char* variable, const char* field, const char* allowed, const char* help,
               std::size_t def, std::size_t lo, std::size_t hi,
               std::optional<std::size_t> config::*cfg, std::size_t settings::*target) {
  return knob{variable, field, allowed, help, [=](settings& s) { s.*target = def; },
              [=](const std::string& t, settings& s) {
                auto v = parse_size(t);
                if (!v || *v < lo || *v > hi) return false;
                s.*target = *v;
                return true;
              },
              explicit_number<std::size_t>(cfg, target,
                                           [=](std::size_t v) { return v >= lo && v <= hi; }),
              [=](const settings& s) { return show_size(s.*target); }};
}

// An enumerated knob (a 0/1 switch too): names[i] is the spelling of values[i].
template <class E, std::size_t N>
knob enum_knob(const char* variable, const char* field, const char* allowed, const char* help,
               E def, std::optional<E> config::*cfg, E settings::*target,
               const std::array<const char*, N>& names, const std::array<E, N>& values) {
  auto show = [=](E v) {
    for (std::size_t i = 0; i < N; ++i)
      if (values[i] == v) return std::string(names[i]);
    return std::string("?");
  };
  return knob{variable, field, allowed, help, [=](settings& s) { s.*target = def; },
              [=](const std::string& t, settings& s) {
                std::string v = lower(trim(t));
                for (std::size_t i = 0; i < N; ++i)
                  if (v == names[i]) {
                    s.*target = values[i];
                    return true;
                  }
                return false;
              },
              [=](const config& c, settings& s, std::string& shown) {
                if (!(c.*cfg)) return 0;
                shown = show(*(c.*cfg));
                s.*target = *(c.*cfg);
                return 1;
              },
              [=](const settings& s) { return show(s.*target); }};
}

// The progress policies' names, from comm's registry (comm/progress_registry.hpp).
std::array<const char*, mpi::detail::progress_policies.size()> progress_policy_names() {
  std::array<const char*, mpi::detail::progress_policies.size()> names{};
  for (std::size_t i = 0; i < names.size(); ++i)
    names[i] = mpi::detail::progress_policy_name(mpi::detail::progress_policies[i]);
  return names;
}

// "'a', 'b' or 'c'": what an error message and hytask-info say an enum knob accepts.
template <std::size_t N>
std::string quoted_choices(const std::array<const char*, N>& names) {
  std::string s;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) s += i + 1 < N ? ", " : " or ";
    s += std::string("'") + names[i] + "'";
  }
  return s;
}

// Under Slurm, HYTASK_THREADS defaults to the CPUs the job gave each task (--cpus-per-task),
// which Slurm's task binding may not express as an affinity mask (TaskPlugin=task/none,
// --cpu-bind=none). Never more than the CPUs the process may run on: Slurm 22.05's srun does
// not inherit sbatch's --cpus-per-task, yet its tasks see the batch job's variable while
// bound to one CPU each.
constexpr const char* slurm_cpus_variable = "SLURM_CPUS_PER_TASK";

std::optional<unsigned> slurm_cpus_per_task() {
  const char* v = std::getenv(slurm_cpus_variable);
  if (v == nullptr) return std::nullopt;
  auto n = parse_uint(v);
  if (!n || *n < 1 || *n > 4096) return std::nullopt;
  return static_cast<unsigned>(*n);
}

unsigned default_threads() {
  if (auto n = slurm_cpus_per_task()) return std::min(*n, std::max(1u, core::topology::get().pus));
  return std::max(1u, core::topology::get().cores);
}

const std::vector<knob>& knobs() {
  static const auto progress_names = progress_policy_names();
  static const std::string progress_allowed = quoted_choices(progress_names);
  static const std::vector<knob> table = {
      {"HYTASK_THREADS", "threads", "'auto' or an integer from 1 to 4096",
       "worker threads, main included (auto: one per core available to the process); unset, "
       "SLURM_CPUS_PER_TASK when Slurm sets it (at most the CPUs available), else auto",
       [](settings& s) { s.threads = default_threads(); },
       [](const std::string& t, settings& s) {
         if (lower(trim(t)) == "auto") {
           s.threads = std::max(1u, core::topology::get().cores);
           return true;
         }
         auto v = parse_uint(t);
         if (!v || *v < 1 || *v > 4096) return false;
         s.threads = static_cast<unsigned>(*v);
         return true;
       },
       explicit_number<unsigned>(&config::threads, &settings::threads,
                                 [](unsigned v) { return v >= 1 && v <= 4096; }),
       [](const settings& s) { return std::to_string(s.threads); }},

      number_knob<std::size_t>(
          "HYTASK_MAX_TASKS", "max_tasks", "an integer from 16 to 1000000000",
          "tasks in flight (created, not completed) before spawn runs tasks instead of creating "
          "more",
          4096, 16, 1000000000, &config::max_tasks, &settings::max_tasks),

      size_knob("HYTASK_STACK_SIZE", "stack_size",
                "a size from 16K to 1G (bytes, or with a K, M or G suffix)",
                "stack of each task fiber; only the pages a task touches use memory",
                256 * kib, 16 * kib, kib * kib * kib, &config::stack_size, &settings::stack_size),

      size_knob("HYTASK_RENAME_MAX_BYTES", "rename_max_bytes",
                "a size from 0 to 1024G (bytes, or with a K, M or G suffix; 0 = no renaming)",
                "memory that the versions of hytask::versioned objects may hold (in use or "
                "pooled); a writer that would need more waits for the readers and writes in place",
                256 * kib * kib, 0, kib * kib * kib * kib, &config::rename_max_bytes,
                &settings::rename_max_bytes),

      enum_knob<hytask::graph_placement, 3>(
          "HYTASK_GRAPH_PLACEMENT", "graph_placement", "'auto', 'steal' or 'owner'",
          "where a recorded graph's tasks run: released to the worker that released them and "
          "stolen by idle ones (steal), each on a worker fixed for the graph that hears of "
          "its predecessors by message (owner), or whichever of the two this graph's runs "
          "measure faster (auto)",
          hytask::graph_placement::automatic, &config::graph_placement,
          &settings::graph_placement, {"auto", "steal", "owner"},
          {hytask::graph_placement::automatic, hytask::graph_placement::steal,
           hytask::graph_placement::owner}),

      number_knob<unsigned>(
          "HYTASK_SPIN_US", "spin_us", "an integer from 0 to 1000000 (microseconds)",
          "how long an idle worker spins looking for work before it sleeps",
          50, 0, 1000000, &config::spin_us, &settings::spin_us),

      {"HYTASK_PIN", "pin", "'none' or 'cores'",
       "pin worker i to the i-th core available to the process (cores), or let the OS place them",
       [](settings& s) { s.pin = pin_policy::none; },
       [](const std::string& t, settings& s) {
         std::string v = lower(trim(t));
         if (v == "none") s.pin = pin_policy::none;
         else if (v == "cores") s.pin = pin_policy::cores;
         else return false;
         return true;
       },
       [](const config& c, settings& s, std::string& shown) {
         if (!c.pin) return 0;
         shown = *c.pin == pin_policy::cores ? "cores" : "none";
         s.pin = *c.pin;
         return 1;
       },
       [](const settings& s) { return std::string(s.pin == pin_policy::cores ? "cores" : "none"); }},

      {"HYTASK_TRACE", "trace", "a file path, or empty for no trace",
       "write a Chrome trace-event JSON timeline (open it in Perfetto) to this file; with MPI "
       "each rank writes its own and rank 0 merges them into it; OTF2 for a name ending in .otf2",
       [](settings& s) { s.trace.clear(); },
       [](const std::string& t, settings& s) {
         s.trace = trim(t);
         return true;
       },
       [](const config& c, settings& s, std::string& shown) {
         if (!c.trace) return 0;
         shown = *c.trace;
         s.trace = *c.trace;
         return 1;
       },
       [](const settings& s) { return s.trace.empty() ? std::string("(off)") : s.trace; }},

      number_knob<std::size_t>(
          "HYTASK_TRACE_BUFFER", "trace_buffer", "an integer from 1024 to 100000000 (events)",
          "events a thread buffers before appending them to the trace file",
          65536, 1024, 100000000, &config::trace_buffer, &settings::trace_buffer),

      enum_knob<mpi_use, 3>(
          "HYTASK_MPI", "mpi", "'auto', 'on' or 'off'",
          "initialise MPI (or adopt it): auto does when MPI is already initialised, the "
          "program was started by an MPI launcher, or it links the interception library",
          mpi_use::automatic, &config::mpi, &settings::mpi, {"auto", "on", "off"},
          {mpi_use::automatic, mpi_use::on, mpi_use::off}),

      enum_knob<hytask::mpi_mode, 4>(
          "HYTASK_MPI_MODE", "mpi_mode", "'multiple', 'funneled', 'serialized' or 'masteronly'",
          "who calls MPI: any thread (needs MPI_THREAD_MULTIPLE), one hytask MPI thread, that "
          "thread while the program calls MPI from any thread in hytask::mpi::serialized_section "
          "(MPI_THREAD_SERIALIZED), or main when it has nothing else to run",
          hytask::mpi_mode::multiple, &config::mpi_mode, &settings::mpi_mode,
          {"multiple", "funneled", "serialized", "masteronly"},
          {hytask::mpi_mode::multiple, hytask::mpi_mode::funneled, hytask::mpi_mode::serialized,
           hytask::mpi_mode::masteronly}),

      enum_knob<progress_policy, mpi::detail::progress_policies.size()>(
          "HYTASK_PROGRESS", "progress", progress_allowed.c_str(),
          "when pending MPI requests are polled: by idle workers and, at task switches, every "
          "HYTASK_POLL_EVERY switches or HYTASK_POLL_US microseconds (with a backstop thread for "
          "long tasks, HYTASK_BACKSTOP_US), by a thread that sleeps between polls, by a thread "
          "that one agent per node wakes when the rank has operations pending and is not "
          "inside MPI, or only by workers that have nothing else to do",
          progress_policy::workers, &config::progress, &settings::progress, progress_names,
          mpi::detail::progress_policies),

      number_knob<unsigned>(
          "HYTASK_POLL_EVERY", "poll_every", "an integer from 1 to 1000000",
          "with HYTASK_PROGRESS=workers, a busy worker polls every this many task switches",
          8, 1, 1000000, &config::poll_every, &settings::poll_every),

      number_knob<unsigned>(
          "HYTASK_POLL_US", "poll_us", "an integer from 0 to 1000000 (microseconds; 0 = off)",
          "with HYTASK_PROGRESS=workers, a busy worker also polls at a task switch when MPI "
          "operations are pending and this long has passed since its last poll",
          50, 0, 1000000, &config::poll_us, &settings::poll_us),

      number_knob<unsigned>(
          "HYTASK_PHASE_WINDOW", "phase_window", "an integer from 1 to 1000000 (phases)",
          "global dependencies: hytask::fence() waits, running tasks, while the oldest phase "
          "that is not matched or has tasks not completed is this many phases behind",
          8, 1, 1000000, &config::phase_window, &settings::phase_window),

      enum_knob<hytask::global_am, 3>(
          "HYTASK_GLOBAL_AM", "global_am", "'auto', 'two-sided' or 'rma'",
          "global dependencies: how the ranks' protocol messages travel: two-sided MPI "
          "(preposted receives), or a queue of fixed size per rank in an MPI window written "
          "with one-sided atomics and puts; auto picks the faster for this MPI",
          hytask::global_am::automatic, &config::global_am, &settings::global_am,
          {"auto", "two-sided", "rma"},
          {hytask::global_am::automatic, hytask::global_am::two_sided, hytask::global_am::rma}),

      enum_knob<ompt_use, 3>(
          "HYTASK_OMPT", "ompt", "'auto', 'on' or 'off'",
          "OpenMP programs (hytask::omp::session): poll MPI from OMPT callbacks at task "
          "scheduling points (Clang's libomp; GCC's libgomp has no OMPT). auto steps aside when "
          "OMP_TOOL_LIBRARIES names another tool; on makes a session fail without OMPT; off "
          "leaves OMPT to other tools",
          ompt_use::automatic, &config::ompt, &settings::ompt, {"auto", "on", "off"},
          {ompt_use::automatic, ompt_use::on, ompt_use::off}),

      enum_knob<bool, 2>(
          "HYTASK_OMP_TASK_HOOKS", "omp_task_hooks", "'1' or '0'",
          "OpenMP programs built by GCC (libgomp, no OMPT): wrap each task created through "
          "GOMP_task so that its start and end are scheduling points that poll MPI, and the "
          "session's thread sleeps while tasks run (1), or leave progress to the thread alone (0)",
          true, &config::omp_task_hooks, &settings::omp_task_hooks, {"1", "0"}, {true, false}),

      number_knob<unsigned>(
          "HYTASK_OMPT_POLL_US", "ompt_poll_us", "an integer from 0 to 1000000 (microseconds)",
          "OpenMP programs: a thread at a scheduling point polls MPI when requests are pending and "
          "this long has passed since the rank's last poll (0: at every scheduling point)",
          20, 0, 1000000, &config::ompt_poll_us, &settings::ompt_poll_us),

      number_knob<unsigned>(
          "HYTASK_OMP_POLL_DELAY_US", "omp_poll_delay_us",
          "an integer from 0 to 100000 (microseconds)",
          "OpenMP programs: after a request is handed to hytask, the session polls MPI only once "
          "no other has been handed over for this long (at most 4 times this after the first), so "
          "that every receive and send of an exchange is posted before progress answers the peer "
          "(0: poll at once)",
          100, 0, 100000, &config::omp_poll_delay_us, &settings::omp_poll_delay_us),

      number_knob<unsigned>(
          "HYTASK_BACKSTOP_US", "backstop_us",
          "an integer from 0 to 1000000 (microseconds; 0 = off)",
          "with HYTASK_PROGRESS=workers, a sleeping thread polls when MPI operations are pending "
          "and no worker has polled for this long (every worker runs a long task)",
          500, 0, 1000000, &config::backstop_us, &settings::backstop_us),

      number_knob<unsigned>(
          "HYTASK_PROGRESS_MIN_US", "progress_min_us",
          "an integer from 1 to 1000000 (microseconds)",
          "shortest wait between two polls of a thread that waits for MPI operations",
          5, 1, 1000000, &config::progress_min_us, &settings::progress_min_us),

      number_knob<unsigned>(
          "HYTASK_PROGRESS_MAX_US", "progress_max_us",
          "an integer from 1 to 1000000 (microseconds)",
          "longest wait between two polls (the wait doubles while nothing completes)",
          500, 1, 1000000, &config::progress_max_us, &settings::progress_max_us),

      enum_knob<bool, 2>(
          "HYTASK_COMM_PRIORITY", "comm_priority", "'1' or '0'",
          "tasks that communicate (by type, learned), the tasks they depend on, tasks released by "
          "communication and tasks that declare channels run just above others of their priority",
          true, &config::comm_priority, &settings::comm_priority, {"1", "0"}, {true, false}),

      enum_knob<bool, 2>(
          "HYTASK_INTERCEPT", "intercept", "'1' or '0'",
          "in a program linked with hytask::mpi_intercept, blocking MPI calls made inside a task "
          "suspend only that task (1), or are plain MPI calls that block the worker (0)",
          true, &config::intercept, &settings::intercept, {"1", "0"}, {true, false}),

      enum_knob<bool, 2>(
          "HYTASK_NODE_STATS", "node_stats", "'1' or '0'",
          "with HYTASK_PROGRESS=node, each rank prints the node agent's counters for it at exit "
          "(wakes, futile wakes, suppressed wakes)",
          false, &config::node_stats, &settings::node_stats, {"1", "0"}, {true, false}),

      enum_knob<bool, 2>(
          "HYTASK_DISPLAY_AFFINITY", "display_affinity", "'1' or '0'",
          "each rank prints at start its host, pinning, access mode and progress policy, and "
          "the CPUs each of its threads may run on (lines that sort by rank)",
          false, &config::display_affinity, &settings::display_affinity, {"1", "0"},
          {true, false}),

      number_knob<unsigned>(
          "HYTASK_WATCHDOG_S", "watchdog_s", "an integer from 0 to 86400 (seconds; 0 = off)",
          "abort the job, listing every pending operation, when nothing progresses for this long",
          0, 0, 86400, &config::watchdog_s, &settings::watchdog_s),

      enum_knob<hytask::order_check, 3>(
          "HYTASK_ORDER_CHECK", "order_check", "'warn', 'error' or 'off'",
          "tasks spawned by one task that post on the same MPI channel (or call collectives on "
          "one communicator) in an order other than their spawn order: warn once per channel, "
          "or fail the posting task; reordered collectives always fail unless 'off'",
          hytask::order_check::warn, &config::order_check, &settings::order_check,
          {"warn", "error", "off"},
          {hytask::order_check::warn, hytask::order_check::error, hytask::order_check::off}),

      number_knob<unsigned>(
          "HYTASK_VERBOSE", "verbose",
          "an integer from 0 to 3 (0 errors only, 1 warnings, 2 info, 3 debug)",
          "which of hytask's own messages reach stderr, each line prefixed 'hytask[rank R]: ' "
          "('hytask: ' outside an MPI job) and the level: errors always, then warnings, "
          "information on the runtime's set-up, debugging detail",
          1, 0, 3, &config::verbose, &settings::verbose),
  };
  return table;
}

// Resolves every knob; fills `sources` when given.
settings resolve_all(const config& c, std::vector<std::string>* sources) {
  settings s;
  for (const knob& k : knobs()) {
    k.set_default(s);
    std::string source = "default";
    std::string shown;
    int applied = k.apply_explicit(c, s, shown);
    if (applied < 0)
      throw config_error(std::string("hytask::config::") + k.field + " = " + shown +
                         " is invalid: expected " + k.allowed + " (" + k.variable + ")");
    if (applied > 0) {
      source = "config";
    } else if (const char* env = std::getenv(k.variable)) {
      if (!k.parse(env, s))
        throw config_error(std::string(k.variable) + "='" + env + "' is invalid: expected " +
                           k.allowed + ". Fix or unset the variable.");
      source = "environment";
    } else if (std::string(k.variable) == "HYTASK_THREADS") {
      if (const char* slurm = std::getenv(slurm_cpus_variable)) {
        if (!slurm_cpus_per_task())
          throw config_error(std::string(slurm_cpus_variable) + "='" + slurm +
                             "' is not an integer from 1 to 4096, and HYTASK_THREADS defaults "
                             "to it under Slurm: set HYTASK_THREADS, or fix the variable.");
        source = "slurm";  // SLURM_CPUS_PER_TASK
      }
    }
    if (sources) sources->push_back(source);
  }
  if (s.progress_min_us > s.progress_max_us)
    throw config_error("HYTASK_PROGRESS_MIN_US (" + std::to_string(s.progress_min_us) +
                       ") is larger than HYTASK_PROGRESS_MAX_US (" +
                       std::to_string(s.progress_max_us) + "): the shortest wait between polls "
                       "must not exceed the longest");
  return s;
}

}  // namespace

std::optional<std::size_t> parse_size(const std::string& text) {
  std::string t = lower(trim(text));
  if (t.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0 || digits > 15) return std::nullopt;
  std::uint64_t v = std::stoull(t.substr(0, digits));
  std::string suffix = t.substr(digits);
  if (suffix.size() >= 2 && suffix.substr(suffix.size() - 2) == "ib")
    suffix = suffix.substr(0, suffix.size() - 2);
  else if (suffix.size() >= 1 && suffix.back() == 'b')
    suffix.pop_back();
  std::uint64_t mult = 1;
  if (suffix == "k") mult = kib;
  else if (suffix == "m") mult = kib * kib;
  else if (suffix == "g") mult = kib * kib * kib;
  else if (!suffix.empty()) return std::nullopt;
  if (v > std::numeric_limits<std::size_t>::max() / mult) return std::nullopt;
  return static_cast<std::size_t>(v * mult);
}

settings settings::resolve(const config& explicit_values) {
  return resolve_all(explicit_values, nullptr);
}

namespace detail {
std::string knob_text(const settings& s, const std::string& variable) {
  for (const auto& k : knobs())
    if (k.variable == variable) return k.show(s);
  return "?";
}
}  // namespace detail

std::vector<knob_info> describe_knobs(const config& explicit_values) {
  std::vector<std::string> sources;
  settings s = resolve_all(explicit_values, &sources);
  std::vector<knob_info> out;
  const auto& table = knobs();
  for (std::size_t i = 0; i < table.size(); ++i)
    out.push_back({table[i].variable, table[i].show(s), sources[i], table[i].allowed, table[i].help});
  return out;
}

}  // namespace hytask

namespace hytask {
std::string describe_topology() { return core::topology::get().description; }
}  // namespace hytask
