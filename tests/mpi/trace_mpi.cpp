// The timeline of a run with MPI in tasks shows what issue #3 promises: MPI posts and
// completions, suspensions and resumptions of the tasks that waited, and the polls of the
// thread or worker that drove progress. Each rank writes its own file (%r), reads it back
// after the runtime stopped, and checks it with a JSON parser.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "hytask/hytask.hpp"
#include "hytask/mpi.hpp"

namespace fs = std::filesystem;

namespace {

int failures = 0;

void check(bool ok, const std::string& what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "trace_mpi: rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  // The ranks of one job share a parent (the launcher or its proxy): its pid keeps jobs
  // running side by side apart.
  const char* dir_env = std::getenv("HYTASK_TEST_TRACE_DIR");
  const fs::path dir = dir_env ? fs::path(dir_env) : fs::temp_directory_path();
  const std::string pattern = (dir / ("hytask_trace_mpi_" + std::to_string(::getppid()) + "_%r.json")).string();
  int rank = -1;
  std::string mine;
  {
    hytask::runtime rt(hytask::config{.trace = pattern});
    rank = hytask::mpi::rank();
    mine = pattern;
    mine.replace(mine.find("%r"), 2, std::to_string(rank));
    const int peer = 1 - rank;
    constexpr int rounds = 50;
    std::vector<double> buf(1024, rank);
    // A ping-pong in tasks (every blocking call suspends its task until the peer answers),
    // then non-blocking requests consumed by a successor through after().
    hytask::spawn({.name = "pingpong"}, [&] {
      for (int i = 0; i < rounds; ++i) {
        if (rank == 0) {
          hytask::mpi::send(std::span(buf), peer, 1);
          hytask::mpi::recv(std::span(buf), peer, 1);
        } else {
          hytask::mpi::recv(std::span(buf), peer, 1);
          hytask::mpi::send(std::span(buf), peer, 1);
        }
      }
    });
    hytask::wait_all();
    std::vector<double> in(4096), out(4096, rank);
    hytask::mpi::request r = hytask::mpi::irecv(std::span(in), peer, 2);
    hytask::mpi::request s = hytask::mpi::isend(std::span(out), peer, 2);
    hytask::spawn({.name = "after_requests"}, [&] {
      check(in[0] == peer, "data received through after()", rank);
    }, hytask::after(r, s));
    hytask::wait_all();
    hytask::mpi::barrier();
  }

  std::ifstream f(mine);
  check(f.good(), "the trace file " + mine + " exists", rank);
  if (!f.good()) return 1;
  nlohmann::json j = nlohmann::json::parse(f);
  std::map<std::string, int> count;
  std::set<std::string> thread_names;
  for (const auto& ev : j["traceEvents"]) {
    const std::string ph = ev["ph"];
    const std::string name = ev["name"];
    if (ph == "M") {
      if (name == "thread_name") thread_names.insert(ev["args"]["name"].get<std::string>());
      continue;
    }
    const std::string cat = ev.value("cat", "");
    count[cat + ":" + ph + ":" + name]++;
  }
  fs::remove(mine);
  if (rank == 0) {
    // Rank 0 merged the ranks' timelines into one ("%r" becomes "all"): tests/mpi/trace_job.cpp
    // checks its content.
    std::string all = pattern;
    all.replace(all.find("%r"), 2, "all");
    check(fs::exists(all), "the job's merged trace " + all + " exists", rank);
    fs::remove(all);
  }
  auto n = [&](const char* key) { return count.count(key) ? count[key] : 0; };
  const int posts = n("mpi:i:MPI_Isend") + n("mpi:i:MPI_Irecv");
  check(posts >= 100, "MPI posts (MPI_Isend/MPI_Irecv instants): " + std::to_string(posts), rank);
  check(n("mpi:i:MPI_Ibarrier") >= 1, "an MPI_Ibarrier post", rank);
  check(n("mpi:i:complete") >= 1, "MPI completions ('complete' instants)", rank);
  check(n("task:i:suspend") >= 1 && n("task:i:resume") >= 1,
        "suspend and resume of the waiting task", rank);
  check(n("task:X:pingpong") >= 2, "the ping-pong task's execution split into stretches", rank);
  check(n("mpi:X:poll") >= 1, "progress polls ('poll' slices)", rank);
  // The runtime's own operations (its job-cancel listener) are told apart from the program's.
  check(n("mpi-runtime:i:MPI_Irecv") >= 1, "the runtime's own posts under category mpi-runtime", rank);
  const char* progress = std::getenv("HYTASK_PROGRESS");
  if (progress && std::string(progress) == "thread")
    check(thread_names.count("progress thread") == 1, "a 'progress thread' track", rank);
  if (failures == 0) std::printf("trace_mpi: rank %d: the timeline has every MPI event\n", rank);
  return failures == 0 ? 0 : 1;
}
