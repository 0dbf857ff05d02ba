// hytask-info: the version, every knob with its value and where it came from, and the
// machine as the runtime sees it. Exits with status 2 (and the reason) on an invalid knob.
#include <cstdio>
#include <cstring>
#include <string>

#include "command_line.hpp"
#include "hytask/hytask.hpp"
#include "affinity_report.hpp"
#include "node/node_report.hpp"

int main(int argc, char** argv) {
  bool node = false, affinity = false;
  hytask_cli::command_line cli("hytask-info", "[--node | --affinity]",
                               "Prints the hytask version, every HYTASK_* knob with its current value and source\n"
                               "(default, environment), and the topology the runtime detects.");
  cli.flag("--node", node,
           "prints instead the node table of every HYTASK_PROGRESS=node job running\n"
           "on this machine: its node agent, and for each local rank the pending\n"
           "operations and the agent's counters (wakes, futile, suppressed)");
  cli.flag("--affinity", affinity,
           "starts a runtime without MPI under the current HYTASK_* knobs and\n"
           "prints where its threads may run (HYTASK_DISPLAY_AFFINITY's report)");
  cli.footer("Exit status: 0, or 2 on a usage error or an invalid HYTASK_* variable.");
  const int parsed = hytask_cli::main_frame("hytask-info", [&] {
    if (!cli.parse(argc, argv)) return 0;
    if (node && affinity) throw hytask_cli::usage_error("--node and --affinity: give one of them");
    return -1;
  });
  if (parsed >= 0) return parsed;
  if (node) {
    std::fputs(hytask::node::describe_tables().c_str(), stdout);
    return 0;
  }
  if (affinity) {
    try {
      hytask::runtime rt(hytask::config{.mpi = hytask::mpi_use::off, .display_affinity = false});
      std::fputs(hytask::detail::affinity_report(rt.settings(), false, 0, 1).c_str(), stdout);
    } catch (const hytask::config_error& e) {
      std::fprintf(stderr, "hytask-info: %s\n", e.what());
      return 2;
    }
    return 0;
  }
  std::printf("hytask %s\n\n", hytask::version);
  try {
    auto knobs = hytask::describe_knobs();
    std::size_t wv = 8, wval = 5;
    for (const auto& k : knobs) {
      wv = std::max(wv, k.variable.size());
      wval = std::max(wval, k.value.size());
    }
    std::printf("%-*s  %-*s  %-11s  %s\n", static_cast<int>(wv), "variable", static_cast<int>(wval),
                "value", "source", "meaning (accepted values)");
    for (const auto& k : knobs)
      std::printf("%-*s  %-*s  %-11s  %s (%s)\n", static_cast<int>(wv), k.variable.c_str(),
                  static_cast<int>(wval), k.value.c_str(), k.source.c_str(), k.help.c_str(),
                  k.allowed.c_str());
  } catch (const hytask::config_error& e) {
    std::fprintf(stderr, "hytask-info: %s\n", e.what());
    return 2;
  }
  std::printf("\ntopology: %s\n", hytask::describe_topology().c_str());
  return 0;
}
