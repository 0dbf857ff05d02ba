// The binding report of HYTASK_DISPLAY_AFFINITY (affinity_report.hpp).
#include "affinity_report.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "hytask/comm/progress_stats.hpp"
#include "platform/thread_cpus.hpp"

namespace hytask::detail {
namespace {

// The threads, once every worker the settings ask for has started (they are named once
// pinned): waits up to a second for them.
std::vector<core::thread_cpus> started_threads(unsigned workers) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    std::vector<core::thread_cpus> threads = core::process_thread_cpus();
    unsigned named = 0;
    for (const auto& t : threads) named += t.name == "hytask-worker";
    if (named + 1 >= workers || std::chrono::steady_clock::now() >= until) return threads;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

std::string affinity_report(const settings& s, bool with_mpi, int rank, int size,
                            const std::string& node) {
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  // Ranks padded to the width of the largest, so that `sort` orders the job's lines by rank.
  const std::string last = std::to_string(size > 0 ? size - 1 : 0);
  std::string r = std::to_string(rank);
  r.insert(0, last.size() - r.size(), '0');
  const std::string prefix = "hytask affinity: rank " + r + "/" + std::to_string(size) + " ";
  const long main_tid = static_cast<long>(getpid());

  std::string out = prefix + "host " + host + ", pid " + std::to_string(main_tid) + ": " +
                    std::to_string(s.threads) + " workers (main included), HYTASK_PIN=" +
                    knob_text(s, "HYTASK_PIN");
  if (with_mpi)
    out += ", HYTASK_MPI_MODE=" + knob_text(s, "HYTASK_MPI_MODE") +
           ", HYTASK_PROGRESS=" + knob_text(s, "HYTASK_PROGRESS");
  out += "\n";
  if (!node.empty()) out += prefix + "node: " + node + "\n";
  if (with_mpi && s.progress == progress_policy::node) {
    const mpi::progress_counters c = mpi::progress_stats();
    out += prefix + "node: local rank " + std::to_string(c.local_rank) + " of " +
           std::to_string(c.local_size) + "; the node agent runs on local rank 0" +
           (c.local_rank == 0 ? " (this rank: thread hytask-agent)" : "") + "\n";
  }
  for (const core::thread_cpus& t : started_threads(s.threads)) {
    out += prefix + "thread " + (t.tid == main_tid ? "main (" + t.name + ")" : t.name) +
           " tid " + std::to_string(t.tid) + ": cpus " + t.cpus + "\n";
  }
  return out;
}

void print_affinity_report(const settings& s, bool with_mpi, int rank, int size,
                           const std::string& node) {
  const std::string text = affinity_report(s, with_mpi, rank, size, node);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace hytask::detail
